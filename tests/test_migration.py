"""MIGRATION.md's "before" code runs on the library versions it names, with a test model instead of the API.

The blocks titled ``Before: <package> <version>`` are not typedagent code, so the docs test skips them; here
each runs against the real package (in the ``dev`` extra), offline. ``tests/typecheck_docs.py`` type-checks
them against the same packages.
"""

from __future__ import annotations

import re
import sys
from importlib.metadata import version
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from test_docs import install_file_blocks

from typedagent.testing import FakeAnthropicServer, output_call

ROOT = Path(__file__).resolve().parent.parent
BEFORE = re.compile(r'^```python title="Before: ([\w-]+) ([\d.]+)"\n(.*?)^```', re.S | re.M)
TICKET = "Ticket: my VPN drops every hour"


def _before(package: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    """Run the guide's "before" block for ``package`` as a module (checking it names the installed version).

    The guide's project modules (its ``title="helpdesk.py"`` blocks), which the block imports, are importable.
    """
    # `make test-deps` runs the suite without the `dev` extra, which brings these packages (pyproject.toml).
    pytest.importorskip(package.replace("-", "_"), reason=f"{package} is not installed (the dev extra brings it)")
    install_file_blocks((ROOT / "MIGRATION.md").read_text(), tmp_path, monkeypatch)
    blocks = {name: (pinned, code) for name, pinned, code in BEFORE.findall((ROOT / "MIGRATION.md").read_text())}
    pinned, code = blocks[package]
    assert version(package if package != "pydantic-ai" else "pydantic-ai-slim").startswith(f"{pinned}.")
    module = ModuleType(f"migration_before_{package.replace('-', '_')}")
    monkeypatch.setitem(sys.modules, module.__name__, module)  # dataclasses look their module up
    exec(compile(code, f"MIGRATION.md (before: {package})", "exec"), module.__dict__)
    return module.__dict__


def test_migration_guide_names_a_before_block_per_library() -> None:
    """Both "before" sections are runnable blocks, titled with the library and version they are written for."""
    found = [(name, pinned) for name, pinned, _ in BEFORE.findall((ROOT / "MIGRATION.md").read_text())]
    assert found == [("pydantic-ai", "2.68"), ("instructor", "1.17")]


async def test_migration_pydantic_ai_before_runs_on_pydantic_ai(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The pydantic-ai agent runs: its tool is called, its output validator asks for a retry, the output comes back."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "unused: the model is replaced before any request")
    before = _before("pydantic-ai", monkeypatch, tmp_path)
    from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        output = info.output_tools[0].name
        answers = [
            ToolCallPart("search_kb", {"query": "VPN drops"}),
            ToolCallPart(output, {"severity": 2, "summary": "VPN drops hourly", "kb_articles": []}),
            ToolCallPart(output, {"severity": 2, "summary": "VPN drops hourly", "kb_articles": ["KB-101"]}),
        ]
        return ModelResponse(parts=[answers[len(seen) - 1]])

    with before["agent"].override(model=FunctionModel(model)):
        triage = await before["triage_ticket"](TICKET, {"vpn": ["KB-101"]})
    assert triage == before["Triage"](severity=2, summary="VPN drops hourly", kb_articles=["KB-101"])
    feedback = [
        (part.content, part.outcome)
        for message in seen[-1]
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart) and part.tool_name == "final_result"
    ]
    assert feedback == [("cite at least one knowledge-base article", "retried")]


async def test_migration_instructor_before_runs_on_instructor(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The instructor call runs through the real SDK on a local fake API: one rejected answer, then a valid one."""
    before = _before("instructor", monkeypatch, tmp_path)
    script = [
        output_call({"severity": 2, "summary": "VPN drops hourly", "kb_articles": []}),
        output_call({"severity": 2, "summary": "VPN drops hourly", "kb_articles": ["KB-101"]}),
    ]
    async with FakeAnthropicServer(script) as server:
        triage = await before["extract_triage"](server.client(), TICKET)
    assert isinstance(triage, before["CheckedTriage"])
    assert triage.model_dump() == {"severity": 2, "summary": "VPN drops hourly", "kb_articles": ["KB-101"]}
    assert [tool["name"] for tool in server.requests[0]["tools"]] == ["CheckedTriage"]
    assert "cite at least one knowledge-base article" in str(server.requests[1]["messages"])

"""The bundled examples: each runs offline on its scripted conversation and does what its docstring says."""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import subprocess
import sys
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from typedagent import AttemptOutcome, ExecuteResult, OutputRejected, RunContext, TokenUsage, execute_agent
from typedagent._cli._check import check_agent
from typedagent.testing import ScriptedClient, assert_valid_conversation

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
NAMES = ["code_review", "invoice_extraction", "research_agent", "support_triage"]


def _example(name: str) -> ModuleType:
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    return importlib.import_module(name)


async def _run(module: ModuleType) -> tuple[ExecuteResult[Any], ScriptedClient]:
    client = module.scripted_client()
    extra = {"deps": module.deps()} if hasattr(module, "deps") else {}
    result = await execute_agent(module.agent, module.PROMPT, client=client, **extra)
    assert_valid_conversation(result.metadata.messages)
    assert client.remaining == 0
    return result, client


def _tool_results(result: ExecuteResult[Any]) -> list[tuple[str, bool, str]]:
    """(tool name, is_error, content) for every tool_result of the conversation, in order."""
    names: dict[str, str] = {}
    found = []
    for message in result.metadata.messages[1:]:  # the first turn is the prompt
        content = message["content"]
        assert not isinstance(content, str)
        for block in content:
            item: dict[str, Any] = dict(block)
            if item["type"] == "tool_use":
                names[item["id"]] = item["name"]
            elif item["type"] == "tool_result":
                found.append((names[item["tool_use_id"]], item.get("is_error", False), item["content"]))
    return found


async def test_support_triage_reads_articles_refines_and_submits() -> None:
    """The triage example searches, reads two articles, drops the one that does not apply, and submits."""
    triage = _example("support_triage")
    result, _ = await _run(triage)
    assert result.ok
    assert result.output == triage.FIRST_DRAFT.model_copy(update={"kb_articles": ["KB-101"]})
    assert [(a.number, a.iterations, a.outcome) for a in result.metadata.attempts] == [(1, 5, AttemptOutcome.SUCCESS)]
    results = _tool_results(result)
    assert [(name, is_error) for name, is_error, _ in results] == [
        ("search_kb", False),
        ("read_article", False),
        ("read_article", False),
        ("emit_triage", False),
        ("emit_triage", False),
        ("submit", False),
    ]
    assert json.loads(results[0][2]) == [
        {"id": "KB-101", "title": "VPN disconnects about every 60 minutes"},
        {"id": "KB-318", "title": "Wi-Fi drops on conference-room access points"},
    ]
    assert results[2][2].startswith("Wi-Fi drops on conference-room access points\n\n")
    assert "  - KB-318: Wi-Fi drops on conference-room access points" in results[3][2]
    assert results[4][2] == (
        "Severity 2, network: VPN tunnel drops hourly for a remote user, blocking access to file shares.\n"
        "Articles:\n  - KB-101: VPN disconnects about every 60 minutes\n"
        "Next step: Check the user's VPN client version and update it to 5.2 or later.\n"
        "If every article applies to this ticket, call submit; otherwise call emit_triage again."
    )
    assert results[5][2] == "Output accepted."
    assert result.metadata.tokens == TokenUsage(
        input_tokens=2078, output_tokens=452, cache_creation_input_tokens=920, cache_read_input_tokens=3680
    )


def test_support_triage_tools_and_validator() -> None:
    """search_kb ranks by matching words, read_article refuses unknown ids, and invented articles are rejected."""
    triage = _example("support_triage")
    assert triage.search_kb("password reset mail", limit=1) == [
        {"id": "KB-207", "title": "Password reset e-mail never arrives"}
    ]
    assert triage.search_kb("printer toner") == []
    with pytest.raises(LookupError, match="there is no article 'KB-999'; use an id returned by search_kb"):
        triage.read_article("KB-999")
    with pytest.raises(OutputRejected, match=r"kb_articles: \['KB-999'\] do not exist"):
        triage.cites_existing_articles(triage.FIRST_DRAFT.model_copy(update={"kb_articles": ["KB-101", "KB-999"]}))
    with pytest.raises(OutputRejected, match="kb_articles is empty"):
        triage.cites_existing_articles(triage.FIRST_DRAFT.model_copy(update={"kb_articles": []}))
    assert "(unknown id)" in triage.preview(triage.FIRST_DRAFT.model_copy(update={"kb_articles": ["KB-999"]}))


async def test_invoice_extraction_fixes_a_misread_after_validator_feedback() -> None:
    """The first extraction fails two validators at once; both messages go back and the second try passes."""
    invoice = _example("invoice_extraction")
    result, client = await _run(invoice)
    assert result.ok
    assert result.output == invoice.EXTRACTED
    assert result.output.total == Decimal("1280.70")
    problems = (
        "total: 1820.70 but subtotal 1076.22 + tax 204.48 = 1280.70; re-read the total",
        "due_date: 2025-02-13 is before issue_date 2025-03-14; re-read both dates",
    )
    attempts = result.metadata.attempts
    assert [(a.number, a.iterations, a.outcome, a.validation_errors) for a in attempts] == [
        (1, 2, AttemptOutcome.VALIDATION_FAILED, problems),
        (2, 1, AttemptOutcome.SUCCESS, ()),
    ]
    assert _tool_results(result) == [
        ("lookup_vendor", False, '{"found":true,"vat_id":"DE811907234","currency":"EUR","payment_terms_days":30}'),
        (
            "record_invoice",
            True,
            "Error: output rejected. Fix every problem below and call 'record_invoice' again with a corrected "
            f"output:\n- {problems[0]}\n- {problems[1]}",
        ),
        ("record_invoice", False, "Output accepted."),
    ]
    assert len(client.requests) == 3


def test_invoice_validators_catch_each_kind_of_mistake() -> None:
    """Line amounts, subtotal, total and dates are each checked, with a message naming the field."""
    invoice = _example("invoice_extraction")
    good = invoice.EXTRACTED
    for validator in (invoice.line_amounts_match, invoice.totals_add_up, invoice.dates_are_valid):
        validator(good)
    items = [item.model_copy() for item in good.line_items]
    items[1] = items[1].model_copy(update={"amount": Decimal("421.50")})
    with pytest.raises(OutputRejected, match=r"^line_items\.1\.amount: 421\.50 but quantity 1 \* unit_price 412\.50"):
        invoice.line_amounts_match(good.model_copy(update={"line_items": items}))
    with pytest.raises(OutputRejected, match=r"^subtotal: 1067\.22 but the line amounts add up to 1076\.22$"):
        invoice.totals_add_up(good.model_copy(update={"subtotal": Decimal("1067.22")}))
    future = date.today() + timedelta(days=3)
    with pytest.raises(OutputRejected, match=rf"^issue_date: {future} is in the future$"):
        invoice.dates_are_valid(good.model_copy(update={"issue_date": future, "due_date": future}))
    assert invoice.lookup_vendor("Unknown Ltd") == {
        "found": False,
        "hint": "not a registered supplier; take every value from the invoice itself",
    }


async def test_code_review_uses_run_time_deps() -> None:
    """The review reads the diff from its deps, builds its prompt from them, and returns the review."""
    review = _example("code_review")
    result, client = await _run(review)
    assert result.ok
    assert result.output == review.REVIEW
    system = client.requests[0]["system"]
    assert system.startswith("You review pull requests for acme/payments.")
    assert "- Never block the event loop: use asyncio.sleep in async code." in system
    results = _tool_results(result)
    assert results[0] == (
        "changed_files",
        False,
        '[{"path":"payments/capture.py","added":9,"removed":2},{"path":"tests/test_capture.py","added":5,"removed":0}]',
    )
    assert [name for name, _, _ in results] == ["changed_files", "read_diff", "read_diff", "submit_review"]
    assert results[1][2].startswith("--- a/payments/capture.py\n+++ b/payments/capture.py\n@@ -1,6 +1,13 @@\n")
    assert "+            time.sleep(2**attempt)\n" in results[1][2]


def test_code_review_validators_and_tool_errors() -> None:
    """Findings outside the diff and an approval despite a blocker are rejected; unknown paths are errors."""
    review = _example("code_review")
    deps = review.deps()
    ctx = RunContext(deps=deps, agent_name="code_review", model="m", attempt=1, iteration=1, tokens=TokenUsage())
    stray = review.REVIEW.model_copy(
        update={"findings": [review.Finding(path="README.md", line=None, severity="nit", message="typo")]}
    )
    with pytest.raises(OutputRejected, match=r"findings name files the diff does not change: \['README\.md'\]"):
        review.findings_point_into_the_diff(stray, ctx)
    with pytest.raises(OutputRejected, match=r"verdict: 'approve' despite 3 blocker/major finding\(s\)"):
        review.verdict_matches_findings(review.REVIEW.model_copy(update={"verdict": "approve"}))
    with pytest.raises(LookupError, match=r"'setup\.py' is not changed by this pull request"):
        review.read_diff(ctx, "setup.py")
    assert "(none)" in review.instructions(dataclasses.replace(ctx, deps=dataclasses.replace(deps, guidelines=[])))


def test_code_review_deps_json_matches_the_sample() -> None:
    """examples/code_review_deps.json (for `typedagent run --deps-json @...`) is the sample pull request."""
    review = _example("code_review")
    document = json.loads((EXAMPLES / "code_review_deps.json").read_text(encoding="utf-8"))
    assert document == dataclasses.asdict(review.deps())


async def test_research_agent_searches_fetches_and_submits_a_cited_report() -> None:
    """The research example declares web search and fetch, continues the paused turn, cites, refines and submits."""
    research = _example("research_agent")
    result, client = await _run(research)
    assert result.ok
    assert result.output == research.REPORT
    assert [tool.get("type", "custom")[:10] for tool in client.requests[0]["tools"]] == [
        "custom",
        "web_search",
        "web_fetch_",
        "custom",
        "custom",
    ]
    assert [(a.iterations, a.outcome) for a in result.metadata.attempts] == [(5, AttemptOutcome.SUCCESS)]
    assert [message["role"] for message in client.requests[1]["messages"]] == ["user", "assistant"]
    tokens = result.metadata.tokens
    assert (tokens.web_search_requests, tokens.web_fetch_requests) == (2, 1)
    assert [(name, is_error) for name, is_error, _ in _tool_results(result)] == [
        ("days_between", False),
        ("write_report", False),
        ("write_report", False),
        ("submit", False),
    ]
    assert _tool_results(result)[0][2] == "365"


def test_research_agent_validator_wants_a_web_source_for_every_finding() -> None:
    """A finding without a citation, or citing something other than an https page, is rejected."""
    research = _example("research_agent")
    unsourced = research.REPORT.model_copy(update={"findings": [research.Finding(claim="x", citations=[])]})
    with pytest.raises(OutputRejected, match=r"findings.0.citations is empty"):
        research.every_finding_is_sourced(unsourced)
    local = research.Citation(url="file:///notes.txt", title="notes", quote="x")
    with pytest.raises(OutputRejected, match=r"'file:///notes.txt' is not a web page"):
        research.every_finding_is_sourced(
            research.REPORT.model_copy(update={"findings": [research.Finding(claim="x", citations=[local])]})
        )
    with pytest.raises(OutputRejected, match="findings is empty"):
        research.every_finding_is_sourced(research.REPORT.model_copy(update={"findings": []}))
    assert "NO SOURCE" in research.preview(unsourced)


@pytest.mark.parametrize("name", NAMES)
def test_examples_pass_typedagent_check(name: str) -> None:
    """Every example's definition passes the offline checks of `typedagent check`."""
    assert check_agent(_example(name).agent) == []


@pytest.mark.parametrize("name", NAMES)
def test_examples_run_as_scripts_offline(name: str) -> None:
    """`python examples/<name>.py` without a key says the model is scripted and prints the typed output."""
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py")], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "No ANTHROPIC_API_KEY: the model is scripted.\n"
    module = _example(name)
    expected = {"code_review": "REVIEW", "invoice_extraction": "EXTRACTED", "research_agent": "REPORT"}.get(name)
    output = (
        getattr(module, expected) if expected else module.FIRST_DRAFT.model_copy(update={"kb_articles": ["KB-101"]})
    )
    assert json.loads(done.stdout) == output.model_dump(mode="json")


@pytest.mark.parametrize("name", ["temporal_triage", "dbos_triage"])
def test_durable_examples_survive_a_kill_offline(name: str) -> None:
    """examples/durable/: the worker or process dies mid-run, the run finishes, the API answers 4 calls, not more."""
    pytest.importorskip("temporalio" if name.startswith("temporal") else "dbos")
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "durable" / f"{name}.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "the API has answered 2 model calls" in "\n".join(lines)
    assert "model calls the API answered in all: 4 (4 in the script)" in lines
    assert '{"label":"network","urgent":true}' in lines
    # The tool that completed before the kill ran once; the one in flight twice (at-least-once).
    assert sum("lookup_plan('ann')" in line for line in lines) == 1
    assert sum("checkpoint('plan is premium')" in line for line in lines) == 2

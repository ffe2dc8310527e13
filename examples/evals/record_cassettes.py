"""Write the bundled examples' eval suites (``*.eval.yaml``) and record their cassettes.

The cassettes here are NOT recordings of the real API: this repository has no API key, so each is
recorded from the example's own scripted model (``scripted_client()``, the model's side of a
typical run), wrapped in ``RecordingClient`` exactly as a real ``AsyncAnthropic()`` would be. The
tools, validators and the loop run for real; only the model's answers are scripted. To record
against the real API, pass ``--live`` with ``ANTHROPIC_API_KEY`` set (the expected outputs may then
need updating).

Run from the repository root: ``python examples/evals/record_cassettes.py``; then
``typedagent eval examples/invoice_extraction.py:agent examples/evals/invoice_extraction.eval.yaml
--cassette examples/evals/cassettes/invoice_extraction.json`` replays a suite with no network.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from typedagent.evals import (
    Budget,
    Case,
    Contains,
    Dataset,
    ExpectedOutput,
    FieldEquals,
    Outcome,
    Thresholds,
    ToolCalled,
    ToolCalledWith,
    ToolCount,
    ToolNotCalled,
    ToolOrder,
    run_evals,
    save_dataset,
)
from typedagent.testing import RecordingClient

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent
REPEAT = 2
"""Runs per case in the cassettes, so the suites can be replayed with ``--repeat 2``."""


def _example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def invoice_extraction(module: ModuleType) -> Dataset[Any, Any]:
    """The invoice is extracted exactly, after the validators caught the misread total."""
    return Dataset(
        name="invoice_extraction",
        cases=[
            Case(
                name="nordlicht_invoice",
                prompt=module.PROMPT,
                expected=module.EXTRACTED,
                metadata={"source": "examples/invoice_extraction.py"},
                evaluators=[
                    ToolCalledWith(tool="lookup_vendor", arguments={"name": "Nordlicht Bürobedarf GmbH"}),
                    FieldEquals(path="total", value="1280.70", tolerance=0.005),
                    Budget(max_attempts=2, max_iterations=4, max_tokens=6000, max_cost_usd=0.05),
                ],
            )
        ],
        evaluators=[Outcome(), ExpectedOutput(tolerance=0.005)],
        thresholds=Thresholds(case_min_pass_rate=1.0, suite_min_pass_rate=1.0),
    )


def research_agent(module: ModuleType) -> Dataset[Any, Any]:
    """The research report answers with the right number of days and cites its sources."""
    return Dataset(
        name="research_agent",
        cases=[
            Case(
                name="python_314_schedule",
                prompt=module.PROMPT,
                expected=module.REPORT,
                evaluators=[
                    ToolCalled(tool="web_search"),
                    ToolOrder(tools=("web_search", "web_fetch", "days_between")),
                    ToolCalledWith(tool="days_between", arguments={"start": "2024-10-07", "end": "2025-10-07"}),
                    Contains(path="answer", value="365"),
                    Budget(max_iterations=6, max_cost_usd=0.5),
                ],
            )
        ],
        evaluators=[Outcome(), ExpectedOutput()],
    )


def support_triage(module: ModuleType) -> Dataset[Any, Any]:
    """The ticket is triaged as a network issue citing only the VPN article."""
    return Dataset(
        name="support_triage",
        cases=[
            Case(
                name="vpn_drops_hourly",
                prompt=module.PROMPT,
                expected=module.FIRST_DRAFT.model_copy(update={"kb_articles": ["KB-101"]}),
                evaluators=[
                    ToolOrder(tools=("search_kb", "read_article", "emit_triage", "submit")),
                    ToolCount(tool="read_article", min=1, max=3),
                    Contains(path="kb_articles", value="KB-101"),
                    FieldEquals(path="category", value="network"),
                    Budget(max_attempts=1, max_iterations=8),
                ],
            )
        ],
        evaluators=[Outcome(), ExpectedOutput(ignore=("summary", "next_step"))],
    )


def code_review(module: ModuleType) -> Dataset[Any, Any]:
    """The review blocks the pull request for the blocking sleep and reads every changed file."""
    return Dataset(
        name="code_review",
        cases=[
            Case(
                name="retry_payment_captures",
                prompt=module.PROMPT,
                deps=module.deps(),
                expected=module.REVIEW,
                evaluators=[
                    ToolCalled(tool="changed_files"),
                    ToolCount(tool="read_diff", min=2),
                    ToolNotCalled(tool="submit"),
                    FieldEquals(path="verdict", value="request_changes"),
                    Contains(path="summary", value="event loop", case_sensitive=False),
                    Budget(max_iterations=5),
                ],
            )
        ],
        evaluators=[Outcome(), ExpectedOutput(ignore=("summary",))],
    )


SUITES: dict[str, Callable[[ModuleType], Dataset[Any, Any]]] = {
    "invoice_extraction": invoice_extraction,
    "research_agent": research_agent,
    "support_triage": support_triage,
    "code_review": code_review,
}


def header(name: str) -> str:
    """The lines before the dataset: the schema for editors, the agent and cassette for pytest."""
    return (
        "# yaml-language-server: $schema=../../src/typedagent/evals/dataset.schema.json\n"
        f"# Written by record_cassettes.py; the cassette is recorded from the example's scripted model.\n"
        f"agent: ../{name}.py:agent\n"
        f"cassette: cassettes/{name}.json\n"
    )


async def record(name: str, *, live: bool) -> None:
    """Write one suite and record its cassette: REPEAT runs per case, one run at a time."""
    module = _example(name)
    dataset = SUITES[name](module)
    path = HERE / f"{name}.eval.yaml"
    save_dataset(dataset, path)
    path.write_text(header(name) + path.read_text())
    recorder = RecordingClient(module.scripted_client(), HERE / "cassettes" / f"{name}.json")
    for _ in range(REPEAT):
        if live:
            from anthropic import AsyncAnthropic

            recorder.client = AsyncAnthropic()
        else:
            recorder.client = module.scripted_client()  # a fresh script for every run
        report = await run_evals(dataset, module.agent, client=recorder, concurrency=1)
        print(f"{name}: {'passed' if report.passed else 'FAILED'} {report.problems}")
    recorder.save()


if __name__ == "__main__":
    for suite in SUITES:
        asyncio.run(record(suite, live="--live" in sys.argv))

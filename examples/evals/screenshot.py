"""Render the HTML eval report of docs/evals.md in headless Chromium and save the screenshot there.

The report is a demo: the support-triage example evaluated on three tickets, twice each, with a
scripted model (no API key) that gets one ticket right, one right half the time (flaky) and one
wrong, compared with a baseline in which every ticket passed. Run from the repository root:
``python examples/evals/screenshot.py`` (needs ``/usr/bin/chromium``).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from typedagent.evals import Case, Dataset, ExpectedOutput, Thresholds, ToolCalled, run_evals_sync, to_html
from typedagent.testing import FunctionClient, MessagesRequest, ScriptStep, output_call, response, tool_call, usage

ROOT = Path(__file__).resolve().parents[2]
TARGET = ROOT / "docs" / "images" / "eval-report.png"


def _triage() -> Any:
    spec = importlib.util.spec_from_file_location("support_triage", ROOT / "examples" / "support_triage.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["support_triage"] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    """Run the demo suite, write the page, and screenshot it."""
    triage = _triage()
    good = triage.FIRST_DRAFT.model_copy(update={"kb_articles": ["KB-101"]})
    wrong = good.model_copy(update={"category": "hardware", "severity": 4})
    tickets = {"vpn": "My VPN drops every hour.", "printer": "The printer on 3 jams.", "mail": "Outlook won't sync."}
    answers = {"vpn": [good, good], "printer": [good, wrong], "mail": [wrong, wrong]}
    agent = dataclasses.replace(triage.agent, output=dataclasses.replace(triage.agent.output, reflection_handler=None))

    def model(request: MessagesRequest) -> ScriptStep:
        prompt = str(request["messages"][0]["content"])
        name = next(key for key, text in tickets.items() if text in prompt)
        if len(request["messages"]) == 1:
            return response(tool_call("search_kb", {"query": name}), usage=usage(input_tokens=1200, output_tokens=60))
        return response(output_call(answers[name].pop(0)), usage=usage(input_tokens=900, output_tokens=150))

    dataset = Dataset(
        name="support_triage",
        cases=[Case(name=name, prompt=text, expected=good) for name, text in tickets.items()],
        evaluators=[ExpectedOutput(ignore=("summary", "next_step")), ToolCalled(tool="search_kb")],
        thresholds=Thresholds(case_min_pass_rate=0.5, suite_min_pass_rate=0.8),
    )
    report = run_evals_sync(dataset, agent, repeat=2, concurrency=1, client=FunctionClient(model))
    baseline = dataclasses.replace(
        report, cases=tuple(dataclasses.replace(case, runs=case.runs[:1] * 2) for case in report.cases[:2])
    )
    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "report.html"
        page.write_text(to_html(report, baseline=baseline))
        subprocess.run(
            [
                "/usr/bin/chromium",
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                f"--user-data-dir={Path(folder) / 'profile'}",
                f"--screenshot={TARGET}",
                "--window-size=1200,900",
                page.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
    print(f"wrote {TARGET.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

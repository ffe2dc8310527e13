"""Reports: versioned JSON, ``compare``, the console table, JUnit XML and the HTML page in a real Chromium."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from evals_support import PARIS, City, answering

from typedagent import AgentDefinition
from typedagent.evals import (
    Case,
    Dataset,
    EvalReport,
    ExpectedOutput,
    Thresholds,
    format_report,
    run_evals_sync,
    to_html,
    to_junit,
)

WRONG = PARIS.model_copy(update={"population": 1})
CHROMIUM = Path("/usr/bin/chromium")


def suite() -> Dataset[City]:
    """Two cases, one passing and one flaky, with a lenient suite threshold."""
    return Dataset(
        name="cities",
        cases=[
            Case(name="paris", prompt="Tell me about Paris", expected=PARIS),
            Case(name="lyon", prompt="Tell me about Lyon", expected=PARIS, min_pass_rate=0.5),
        ],
        evaluators=[ExpectedOutput()],
        thresholds=Thresholds(suite_min_pass_rate=0.9),
    )


@pytest.fixture
def report(agent: AgentDefinition[City, None]) -> EvalReport:
    """A report whose ``lyon`` case passed one run of two."""
    return run_evals_sync(suite(), agent, client=answering(PARIS, PARIS, PARIS, WRONG), repeat=2, concurrency=1)


def test_report_saves_and_loads_as_versioned_json(report: EvalReport, tmp_path: Path) -> None:
    """The JSON report reads back equal, with its format and version; others are refused clearly."""
    path = tmp_path / "report.json"
    report.save(path)
    data = json.loads(path.read_text())
    assert (data["format"], data["version"]) == ("typedagent-eval-report", 1)
    assert EvalReport.load(path) == report
    path.write_text(json.dumps({**data, "version": 99}))
    with pytest.raises(ValueError, match="version 99 is not supported"):
        EvalReport.load(path)
    path.write_text(json.dumps({"format": "other"}))
    with pytest.raises(ValueError, match="not a typedagent eval report"):
        EvalReport.load(path)
    path.write_text("{")
    with pytest.raises(ValueError, match="not valid JSON"):
        EvalReport.load(path)


def test_report_compare_lists_regressions_and_improvements(report: EvalReport) -> None:
    """Lower pass rates regressed, higher ones improved; new and removed cases are named."""
    paris, lyon = report.cases
    worse = dataclasses.replace(
        paris, runs=tuple(dataclasses.replace(r, scores=lyon.runs[1].scores) for r in paris.runs)
    )
    renamed = dataclasses.replace(lyon, name="nice")
    baseline = dataclasses.replace(report, cases=(paris, lyon))
    current = dataclasses.replace(report, cases=(worse, renamed))
    comparison = current.compare(baseline)
    assert [(c.case, c.before, c.after) for c in comparison.regressed] == [("paris", 1.0, 0.0)]
    assert (comparison.added, comparison.removed, comparison.unchanged) == (("nice",), ("lyon",), ())
    assert [c.case for c in baseline.compare(current).improved] == ["paris"]


def test_format_report_shows_each_case_and_the_verdict(report: EvalReport) -> None:
    """The table has a row per case with status and pass rate, then the thresholds that failed."""
    text = format_report(report, baseline=report)
    assert "paris" in text
    assert "passed" in text
    assert "2/2 (min 100%)" in text
    assert "lyon" in text
    assert "flaky" in text
    assert "1/2 (min 50%)" in text
    assert "suite pass rate 75% (min 90%): FAILED" in text
    assert "threshold failed: suite: pass rate 75% below 90%" in text
    assert "vs baseline: 0 regressed, 0 improved" in text


def test_to_junit_has_a_testcase_per_case(report: EvalReport) -> None:
    """A failed threshold is a failure; a flaky case that meets its own passes with its failed runs in output."""
    root = ET.fromstring(to_junit(report))
    suite_element = root.find("testsuite")
    assert suite_element is not None
    assert (suite_element.get("tests"), suite_element.get("failures")) == ("3", "1")
    cases = {case.get("name"): case for case in suite_element.iter("testcase")}
    assert list(cases) == ["paris", "lyon", "suite"]
    assert cases["paris"].find("failure") is None
    assert "flaky" in (cases["lyon"].findtext("system-out") or "")
    failure = cases["suite"].find("failure")
    assert failure is not None
    assert failure.get("message") == "suite pass rate 75% below 90%"


def test_to_html_is_self_contained(report: EvalReport) -> None:
    """The page has its charts inline and loads nothing from elsewhere."""
    page = to_html(report, baseline=report)
    assert page.count('<svg class="chart"') == 3  # pass rates, one score histogram, tokens and cost (no change)
    assert 'id="baseline"' in page
    assert "<link" not in page
    assert "src=" not in page
    assert "@import" not in page


@pytest.mark.skipif(not CHROMIUM.exists(), reason="chromium is not installed (CI installs it: .ci/run)")
def test_to_html_renders_in_headless_chromium(report: EvalReport, tmp_path: Path) -> None:
    """A real headless Chromium renders the charts, runs the page's script, and takes a screenshot."""
    baseline = dataclasses.replace(report, cases=(report.cases[0], dataclasses.replace(report.cases[1], runs=())))
    page = tmp_path / "report.html"
    page.write_text(to_html(report, baseline=baseline))
    flags = [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    dom = subprocess.run([*flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert 'data-charts="4"' in dom.stdout  # the three of test_to_html_is_self_contained, and the change
    assert "rendered 4 charts" in dom.stdout
    assert "Uncaught" not in dom.stderr
    shot = tmp_path / "shot.png"
    subprocess.run(
        [*flags, f"--screenshot={shot}", "--window-size=1000,800", page.as_uri()], capture_output=True, timeout=120
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


HOSTILE = "vpn [/b] [bold]drops\x1b[31m\x00\x0b"


@pytest.fixture
def hostile(agent: AgentDefinition[City, None]) -> EvalReport:
    """A report whose suite, case name and model output hold rich markup and control characters."""
    dataset = Dataset(
        name="[red]cities\x07",
        cases=[Case(name=HOSTILE, prompt="Tell me about Paris", expected=PARIS)],
        evaluators=[ExpectedOutput()],
    )
    answer = PARIS.model_copy(update={"name": "[/b]Paris\x1b[2J\x00", "population": 1})
    return run_evals_sync(dataset, agent, client=answering(answer), concurrency=1)


def test_format_report_shows_user_text_as_it_is(hostile: EvalReport) -> None:
    """Markup in case names and model output is shown literally (never a MarkupError); control characters escaped."""
    text = format_report(hostile, width=400)
    assert "vpn [/b] [bold]drops\\x1b[31m\\x00\\x0b" in text
    assert "[/b]Paris\\x1b[2J\\x00" in text
    assert "[red]cities\\x07" in text
    assert "\x1b" not in text
    assert "\x00" not in text


def test_to_junit_escapes_control_characters(hostile: EvalReport) -> None:
    """Control characters XML cannot hold are written as visible escapes: the file parses, names and reasons kept."""
    root = ET.fromstring(to_junit(hostile))
    suite_element = root.find("testsuite")
    assert suite_element is not None
    assert suite_element.get("name") == "[red]cities\\x07"
    case = next(element for element in suite_element.iter("testcase") if element.get("name") != "suite")
    assert case.get("name") == "vpn [/b] [bold]drops\\x1b[31m\\x00\\x0b"
    failure = case.find("failure")
    assert failure is not None
    assert "[/b]Paris\\x1b[2J\\x00" in (failure.text or "")

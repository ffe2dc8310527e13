"""The example CI suite in examples/ci_suite passes, and fails when the agent's behaviour changes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from toolkit_support import run_inner

SUITE = Path(__file__).resolve().parents[2] / "examples" / "ci_suite"
SCENARIOS = sorted(path.stem for path in (SUITE / "scenarios").glob("*.json"))


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    """A copy of the example suite as an inner pytest project."""
    shutil.copytree(SUITE, pytester.path, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    return pytester


def test_ci_suite_passes_every_scenario(suite: pytest.Pytester) -> None:
    """Every scenario passes in process and over HTTP, plus the tool-list check."""
    assert len(SCENARIOS) == 6
    result = run_inner(suite, "-W", "error", "-v", subprocess=True)
    result.assert_outcomes(passed=2 * len(SCENARIOS) + 1)
    result.stdout.fnmatch_lines_random([f"*test_scenario_in_process?{name}? PASSED*" for name in SCENARIOS])


def test_ci_suite_catches_a_wrong_expectation(suite: pytest.Pytester) -> None:
    """A scenario whose expected output differs from the run fails both ways, showing the transcript."""
    scenario = json.loads((SUITE / "scenarios" / "approve_recent_delivery.json").read_text())
    scenario["expect"]["output"]["amount"] = 20.0
    (suite.path / "scenarios" / "half_refund.json").write_text(json.dumps(scenario))
    result = run_inner(suite, subprocess=True)
    result.assert_outcomes(passed=2 * len(SCENARIOS) + 1, failed=2)
    result.stdout.fnmatch_lines(["*[[]3] assistant: tool_use: decide_refund#toolu_02_002 *"])


def test_ci_suite_catches_an_agent_regression(suite: pytest.Pytester) -> None:
    """Dropping the refund-window validator fails exactly the scenarios that rely on it."""
    agent = suite.path / "refund_agent.py"
    source = agent.read_text()
    assert "validators=[within_the_order_total, approved_only_within_the_window]" in source
    agent.write_text(source.replace(", approved_only_within_the_window]", "]"))
    result = run_inner(suite, subprocess=True)
    result.assert_outcomes(passed=2 * len(SCENARIOS) + 1 - 4, failed=4)
    result.stdout.fnmatch_lines_random(
        [
            f"FAILED test_refund_desk.py::test_scenario_{mode}[[]{name}]*"
            for mode in ("in_process", "over_http")
            for name in ("deny_outside_the_window", "gives_up_after_two_rejections")
        ]
    )

"""``to_junit``: an eval report as JUnit XML, one test case per eval case, for CI systems that read JUnit."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from ._report import EvalReport
from ._text import visible

__all__ = ["to_junit"]


def to_junit(report: EvalReport) -> str:
    r"""JUnit XML: a ``testsuite`` per report, a ``testcase`` per case, failed when its threshold fails.

    Flaky cases that still meet their threshold pass, with the failed runs in ``system-out``; a failed
    suite threshold is one more failed test case named ``suite``. Control characters in names and
    reasons, which XML cannot hold, are written as visible escapes (``\x1b``), so the file always parses.
    """
    problems = report.problems
    suite_failed = any(problem.startswith("suite:") for problem in problems)
    failures = sum(not case.met for case in report.cases) + suite_failed
    time = sum(run.latency_ms for run in report.runs) / 1000
    root = ET.Element("testsuites")
    suite = ET.SubElement(
        root,
        "testsuite",
        name=visible(report.suite),
        tests=str(len(report.cases) + 1),
        failures=str(failures),
        errors="0",
        time=f"{time:.3f}",
        timestamp=report.created_at,
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in (("agent", report.agent), ("model", report.model), ("repeat", str(report.repeat))):
        ET.SubElement(properties, "property", name=name, value=visible(value))
    for case in report.cases:
        element = ET.SubElement(
            suite,
            "testcase",
            classname=f"evals.{visible(report.suite)}",
            name=visible(case.name),
            time=f"{sum(run.latency_ms for run in case.runs) / 1000:.3f}",
        )
        failed_runs = [
            f"run {run.repeat}: {visible(line)}" for run in case.runs if not run.passed for line in run.failures
        ]
        if not case.met:
            failure = ET.SubElement(
                element,
                "failure",
                message=f"pass rate {case.pass_rate:.0%} below {case.min_pass_rate:.0%}",
                type="EvalThresholdFailed",
            )
            failure.text = "\n".join(failed_runs)
        elif failed_runs:
            ET.SubElement(element, "system-out").text = "flaky (passed sometimes):\n" + "\n".join(failed_runs)
    total = ET.SubElement(suite, "testcase", classname=f"evals.{visible(report.suite)}", name="suite", time="0")
    if suite_failed:
        ET.SubElement(
            total,
            "failure",
            message=f"suite pass rate {report.pass_rate:.0%} below {report.thresholds.suite_min_pass_rate:.0%}",
            type="EvalThresholdFailed",
        )
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"

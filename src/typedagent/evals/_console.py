"""``format_report``: an eval report as a rich console table (rich comes with the ``cli`` and ``evals`` extras)."""

from __future__ import annotations

import io

from ._report import Comparison, EvalReport
from ._text import visible

__all__ = ["format_report"]

_STYLE = {"passed": "green", "flaky": "yellow", "failed": "bold red"}


def format_report(
    report: EvalReport, *, baseline: EvalReport | None = None, width: int = 120, color: bool = False
) -> str:
    r"""The report as a table (one row per case: status, pass rate, mean score, tokens, cost, first failure).

    Args:
        report: The report.
        baseline: An earlier report; adds a change column and the regressed/improved lists.
        width: Console width.
        color: Keep ANSI colours (for a terminal).

    Names and reasons are shown as they are: square brackets in them are never read as rich markup, and
    control characters (a terminal escape sequence in a model's output) are shown escaped (``\x1b``).
    """
    try:
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text
    except ImportError:
        raise ImportError("format_report needs rich: pip install 'typedagent[evals]'") from None

    comparison = report.compare(baseline) if baseline is not None else None
    title = f"{report.suite}: {report.agent} on {report.model}, {report.repeat} run(s) per case"
    table = Table(title=Text(visible(title)))
    for column in ("case", "status", "pass rate", "score", "tokens", "cost"):
        table.add_column(column, justify="left" if column in ("case", "status") else "right")
    if comparison is not None:
        table.add_column("vs baseline")
    table.add_column("first failure", overflow="fold")
    changes = _changes(comparison)
    for case in report.cases:
        tokens = sum(run.tokens.total for run in case.runs)
        costs = [run.cost_usd for run in case.runs]
        cost = "?" if any(c is None for c in costs) else f"${sum(c or 0.0 for c in costs):.4f}"
        failure = next((line for run in case.runs for line in run.failures), "")
        row: list[str | Text] = [
            Text(visible(case.name)),
            Text(case.status, style=_STYLE[case.status]),
            f"{case.passed_runs}/{len(case.runs)} (min {case.min_pass_rate:.0%})",
            f"{case.mean_score:.2f}",
            f"{tokens:,}",
            cost,
        ]
        if comparison is not None:
            row.append(changes.get(case.name, ""))
        table.add_row(*row, Text(visible(failure)))
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=color, color_system="standard" if color else None)
    console.print(table)
    verdict = "PASSED" if report.passed else "FAILED"
    lines = [f"suite pass rate {report.pass_rate:.0%} (min {report.thresholds.suite_min_pass_rate:.0%}): {verdict}"]
    lines += [f"  threshold failed: {problem}" for problem in report.problems]
    if report.flaky:
        lines.append(f"  flaky (passed sometimes): {', '.join(report.flaky)}")
    if comparison is not None:
        lines.append(
            f"  vs baseline: {len(comparison.regressed)} regressed, {len(comparison.improved)} improved, "
            f"{len(comparison.added)} new, {len(comparison.removed)} removed"
        )
    for line in lines:
        console.print(Text(visible(line)))
    return buffer.getvalue()


def _changes(comparison: Comparison | None) -> dict[str, str]:
    if comparison is None:
        return {}
    found = {c.case: f"regressed {c.before:.0%} → {c.after:.0%}" for c in comparison.regressed}
    found |= {c.case: f"improved {c.before:.0%} → {c.after:.0%}" for c in comparison.improved}
    found |= dict.fromkeys(comparison.added, "new")
    return found

"""``to_html``: an eval report as one self-contained HTML page with inline SVG charts and every run's details."""

from __future__ import annotations

import json
from html import escape

from ._report import EvalReport
from ._svg import Bar, bar_chart, histogram

__all__ = ["to_html"]

_COLORS = {"passed": "#2e7d32", "flaky": "#f9a825", "failed": "#c62828"}
_CSS = """
body{font:14px system-ui,sans-serif;margin:2em;color:#222}h1{font-size:1.4em}
.verdict{font-weight:bold;padding:.2em .6em;border-radius:4px;color:#fff}
.passed{background:#2e7d32}.failed{background:#c62828}.flaky{background:#f9a825;color:#222}
.charts{display:flex;flex-wrap:wrap;gap:2em}svg text{font:12px system-ui,sans-serif}svg .title{font-weight:bold}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}
pre{background:#f6f6f6;padding:.6em;overflow:auto;max-height:24em}
"""
# Writes a marker the test suite (a headless Chromium) reads: the page's script ran and found its charts.
_SCRIPT = """
document.addEventListener('DOMContentLoaded',function(){
var n=document.querySelectorAll('svg.chart').length,b=document.querySelectorAll('svg.chart rect.bar').length;
var s=document.getElementById('render-status');s.textContent='rendered '+n+' charts, '+b+' bars';
document.body.setAttribute('data-charts',String(n));});
"""


def _pass_rates(report: EvalReport) -> str:
    bars = [
        Bar(
            label=case.name,
            value=case.pass_rate,
            text=f"{case.pass_rate:.0%} ({case.passed_runs}/{len(case.runs)}) {case.status}",
            color=_COLORS[case.status],
            marker=case.min_pass_rate,
        )
        for case in report.cases
    ]
    return bar_chart("Pass rate per case (line: threshold)", bars, maximum=1.0)


def _scores(report: EvalReport) -> list[str]:
    by_evaluator: dict[str, list[float]] = {}
    for run in report.runs:
        for score in run.scores:
            by_evaluator.setdefault(score.evaluator, []).append(score.value)
    return [histogram(f"Scores: {name}", values) for name, values in by_evaluator.items()]


def _usage(report: EvalReport) -> str:
    bars: list[Bar] = []
    for case in report.cases:
        tokens = sum(run.tokens.total for run in case.runs) / max(len(case.runs), 1)
        costs = [run.cost_usd for run in case.runs]
        cost = "cost ?" if any(c is None for c in costs) else f"${sum(c or 0.0 for c in costs) / len(costs):.4f}"
        bars.append(Bar(label=case.name, value=tokens, text=f"{tokens:,.0f} tokens, {cost}", color="#3949ab"))
    return bar_chart("Tokens and cost per run (mean)", bars)


def _diff(report: EvalReport, baseline: EvalReport) -> str:
    comparison = report.compare(baseline)
    changes = [*comparison.regressed, *comparison.improved]
    bars = [
        Bar(
            label=change.case,
            value=change.after - change.before,
            text=f"{change.before:.0%} → {change.after:.0%}",
            color="#c62828" if change in comparison.regressed else "#2e7d32",
        )
        for change in changes
    ]
    rows = "".join(
        f"<tr><td>{escape(name)}</td><td>{kind}</td></tr>"
        for kind, names in (
            ("regressed", [c.case for c in comparison.regressed]),
            ("improved", [c.case for c in comparison.improved]),
            ("new", comparison.added),
            ("removed", comparison.removed),
        )
        for name in names
    )
    chart = bar_chart("Pass rate change vs baseline", bars, maximum=1.0, centered=True) if bars else ""
    summary = (
        f"<p>{len(comparison.regressed)} regressed, {len(comparison.improved)} improved, "
        f"{len(comparison.unchanged)} unchanged, {len(comparison.added)} new, {len(comparison.removed)} removed "
        f"(baseline of {escape(baseline.created_at)}).</p>"
    )
    table = f"<table><tr><th>case</th><th>change</th></tr>{rows}</table>" if rows else ""
    heading = '<section id="baseline"><h2>Against the baseline</h2>'
    return f'{heading}{summary}<div class="charts">{chart}</div>{table}</section>'


def _runs(report: EvalReport) -> str:
    parts: list[str] = []
    for run in report.runs:
        scores = "".join(
            f"<tr><td>{escape(s.evaluator)}</td><td>{'pass' if s.passed else 'FAIL'}</td><td>{s.value:.2f}</td>"
            f"<td>{escape(s.reason)}</td></tr>"
            for s in run.scores
        )
        outcome = "success" if run.error_code is None else f"{run.error_code}: {run.error_message}"
        parts.append(
            f"<details><summary>{escape(run.case)} #{run.repeat}: {'passed' if run.passed else 'FAILED'} "
            f"(execution: {escape(outcome[:120])})</summary>"
            f"<table><tr><th>evaluator</th><th>result</th><th>score</th><th>reason</th></tr>{scores}</table>"
            f"<p>{run.tokens.total:,} tokens, {run.iterations} API call(s), {run.attempts} attempt(s), "
            f"{run.latency_ms:.0f} ms</p>"
            f"<pre>{escape(json.dumps(run.output, indent=2, ensure_ascii=False, default=str))}</pre>"
            f"<details><summary>conversation</summary><pre>"
            f"{escape(json.dumps(list(run.messages), indent=2, ensure_ascii=False, default=str))}</pre></details>"
            "</details>"
        )
    return "".join(parts)


def to_html(report: EvalReport, *, baseline: EvalReport | None = None) -> str:
    """The report as one HTML page with its CSS and SVG charts inline, so it opens offline.

    Charts: pass rate per case (with its threshold), the score distribution of each evaluator, tokens
    and cost per case, and the change against ``baseline`` when given; then every run with its
    scores, output and conversation.
    """
    status = "passed" if report.passed else "failed"
    problems = "".join(f"<li>{escape(problem)}</li>" for problem in report.problems)
    flaky = f"<p>Flaky (passed sometimes): {escape(', '.join(report.flaky))}</p>" if report.flaky else ""
    cost = report.cost_usd
    charts = [_pass_rates(report), *_scores(report), _usage(report)]
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Evals: {escape(report.suite)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{escape(report.suite)}: {escape(report.agent)} on {escape(report.model)}</h1>"
        f'<p><span class="verdict {status}">{status.upper()}</span> suite pass rate {report.pass_rate:.0%} '
        f"(min {report.thresholds.suite_min_pass_rate:.0%}), {report.repeat} run(s) per case, "
        f"{report.tokens.total:,} tokens, {'cost unknown' if cost is None else f'${cost:.4f}'}, "
        f"{escape(report.created_at)}</p><ul>{problems}</ul>{flaky}"
        f'<div class="charts">{"".join(charts)}</div>'
        f"{_diff(report, baseline) if baseline is not None else ''}"
        f"<h2>Runs</h2>{_runs(report)}"
        f'<p id="render-status">not rendered</p><script>{_SCRIPT}</script></body></html>\n'
    )

"""Draw docs/images/span_tree.svg: the trace of the bundled support-triage example, run on its scripted model.

The spans are captured with OpenTelemetry's in-memory exporter, exactly as ``typedagent.instrument()`` sends
them to any backend; the picture is a waterfall (one row per span, indented under its parent, with its bar on
the execution's time line and a few of its attributes). Run it again after a change to the spans:

    .venv/bin/python docs/span_tree.py
"""

from __future__ import annotations

import html
import importlib.util
import sys
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import typedagent

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images" / "span_tree.svg"
SHOWN = (
    "gen_ai.agent.name",
    "gen_ai.request.model",
    "typedagent.outcome",
    "typedagent.attempts",
    "typedagent.usage.input_tokens",
    "typedagent.usage.output_tokens",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.response.finish_reasons",
    "typedagent.tool.kind",
    "gen_ai.tool.call.id",
)
ROW, LABEL, BAR = 34, 250, 300


def capture() -> list[ReadableSpan]:
    """Run the example on its scripted model and return its spans."""
    spec = importlib.util.spec_from_file_location("support_triage", ROOT / "examples" / "support_triage.py")
    assert spec is not None
    assert spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    sys.modules["support_triage"] = example
    spec.loader.exec_module(example)
    # A first run warms up imports and caches, which would otherwise stretch the first model call's bar.
    assert typedagent.execute_agent_sync(example.agent, example.PROMPT, client=example.scripted_client()).ok
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    typedagent.instrument(tracer_provider=provider)
    result = typedagent.execute_agent_sync(example.agent, example.PROMPT, client=example.scripted_client())
    assert result.ok, result
    return list(exporter.get_finished_spans())


def ordered(spans: list[ReadableSpan]) -> list[tuple[int, ReadableSpan]]:
    """The spans depth first, each with its depth, children in start order."""
    children: dict[int | None, list[ReadableSpan]] = {}
    for span in spans:
        children.setdefault(None if span.parent is None else span.parent.span_id, []).append(span)
    rows: list[tuple[int, ReadableSpan]] = []

    def visit(parent: int | None, depth: int) -> None:
        for span in sorted(children.get(parent, []), key=lambda s: s.start_time or 0):
            rows.append((depth, span))
            assert span.context is not None
            visit(span.context.span_id, depth + 1)

    visit(None, 0)
    return rows


def attributes_text(span: ReadableSpan) -> str:
    attributes: dict[str, Any] = dict(span.attributes or {})
    shown = [f"{name.split('.', 1)[1]}={attributes[name]}" for name in SHOWN if name in attributes]
    events = [event.name for event in span.events]
    if events:
        shown.append(f"events: {', '.join(sorted(set(events)))}")
    return "  ".join(shown).replace("('", "").replace("',)", "")


def svg(rows: list[tuple[int, ReadableSpan]]) -> str:
    start = min(span.start_time or 0 for _, span in rows)
    end = max(span.end_time or 0 for _, span in rows)
    scale = BAR / max(end - start, 1)
    longest = max(len(attributes_text(span)) for _, span in rows)
    width, height = LABEL + BAR + 40 + int(longest * 7.4), ROW * len(rows) + 50
    colours = {"invoke_agent": "#3f51b5", "chat": "#00897b", "execute_tool": "#f57c00"}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="ui-monospace, Menlo, Consolas, monospace" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="10" y="20" font-weight="bold">span</text><text x="{LABEL + 10}" y="20" font-weight="bold">'
        f"time line</text>"
        f'<text x="{LABEL + BAR + 30}" y="20" font-weight="bold">attributes (some)</text>',
    ]
    for number, (depth, span) in enumerate(rows):
        y = 40 + number * ROW
        colour = colours.get(span.name.split(" ")[0], "#757575")
        left = LABEL + 10 + ((span.start_time or 0) - start) * scale
        length = max(((span.end_time or 0) - (span.start_time or 0)) * scale, 2)
        parts.append(f'<text x="{10 + depth * 16}" y="{y + 15}">{html.escape(span.name)}</text>')
        parts.append(f'<rect x="{left:.1f}" y="{y + 4}" width="{length:.1f}" height="14" rx="3" fill="{colour}"/>')
        parts.append(
            f'<text x="{LABEL + BAR + 30}" y="{y + 15}" fill="#444">{html.escape(attributes_text(span))}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(svg(ordered(capture())))
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

"""Small inline SVG bar charts for the HTML report: no JavaScript library, no external file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

__all__ = ["Bar", "bar_chart", "histogram"]

_ROW = 22
_LABEL = 180
_PLOT = 360


@dataclass(frozen=True, kw_only=True, slots=True)
class Bar:
    """One horizontal bar: a label, a value, the text shown after it, a colour and an optional marker."""

    label: str
    value: float
    text: str
    color: str
    marker: float | None = None


def bar_chart(title: str, bars: Sequence[Bar], *, maximum: float | None = None, centered: bool = False) -> str:
    """Horizontal bars, one row each; ``centered`` draws negative values left of a middle axis."""
    top = max([maximum or 0.0, *(abs(bar.value) for bar in bars)]) or 1.0
    height = _ROW * len(bars) + 30
    width = _LABEL + _PLOT + 240
    origin = _LABEL + (_PLOT / 2 if centered else 0)
    scale = (_PLOT / 2 if centered else _PLOT) / top
    parts = [
        f'<svg class="chart" role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
        f'<text x="0" y="14" class="title">{escape(title)}</text>',
        f'<line x1="{origin}" y1="20" x2="{origin}" y2="{height}" stroke="#888"/>',
    ]
    for row, bar in enumerate(bars):
        y = 24 + row * _ROW
        length = abs(bar.value) * scale
        x = origin - length if bar.value < 0 else origin
        parts.append(f'<text x="{_LABEL - 6}" y="{y + 13}" text-anchor="end">{escape(bar.label[:28])}</text>')
        parts.append(
            f'<rect class="bar" x="{x:.1f}" y="{y}" width="{max(length, 1):.1f}" height="{_ROW - 6}" '
            f'fill="{bar.color}"><title>{escape(bar.label)}: {escape(bar.text)}</title></rect>'
        )
        parts.append(
            f'<text x="{origin + max(length, 0) + 4 if bar.value >= 0 else origin + 4:.1f}" y="{y + 13}">'
            f"{escape(bar.text)}</text>"
        )
        if bar.marker is not None:
            mx = origin + bar.marker * scale
            parts.append(
                f'<line class="marker" x1="{mx:.1f}" y1="{y - 2}" x2="{mx:.1f}" y2="{y + _ROW - 4}" '
                'stroke="#222" stroke-width="2"/>'
            )
    parts.append("</svg>")
    return "".join(parts)


def histogram(title: str, values: Sequence[float], *, bins: int = 10) -> str:
    """Vertical bars counting values from 0 to 1 in ``bins`` equal bins."""
    counts = [0] * bins
    for value in values:
        counts[min(int(value * bins), bins - 1)] += 1
    top = max(counts) or 1
    width, height, plot = 40 + bins * 24, 130, 90
    parts = [
        f'<svg class="chart" role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
        f'<text x="0" y="14" class="title">{escape(title[:40])}</text>',
    ]
    for index, count in enumerate(counts):
        bar = plot * count / top
        x = 20 + index * 24
        color = "#2e7d32" if index >= bins // 2 else "#c62828"
        parts.append(
            f'<rect class="bar" x="{x}" y="{20 + plot - bar:.1f}" width="20" height="{max(bar, 0.5):.1f}" '
            f'fill="{color}"><title>{index / bins:.1f} to {(index + 1) / bins:.1f}: {count}</title></rect>'
        )
    parts.append(f'<text x="20" y="{height - 4}">0</text><text x="{20 + bins * 24 - 12}" y="{height - 4}">1</text>')
    parts.append("</svg>")
    return "".join(parts)

"""docs/typing.md shows only what tests/typing/ pins: its typing examples are lines of the checked files."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "typing.md"


def _checked_lines() -> set[str]:
    lines = set()
    for path in (ROOT / "tests" / "typing").glob("check_*.py"):
        lines |= {line.strip() for line in path.read_text().splitlines()}
    return lines


def _page_lines(fence: str) -> list[str]:
    blocks = re.findall(rf"^```{fence}\n(.*?)^```", PAGE.read_text(), re.S | re.M)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_typing_docs_rejected_lines_are_checked_errors() -> None:
    """Every line of the page's "must stay an error" listings is a negative case of a tests/typing file."""
    rejected = _page_lines("text")
    assert len(rejected) >= 20
    assert [line for line in rejected if line not in _checked_lines()] == []
    assert [line for line in rejected if "# type: ignore[" not in line or "# pyright: ignore[" not in line] == []


def test_typing_docs_assertions_are_checked() -> None:
    """Every ``assert_type`` in the page's runnable examples is also asserted in a tests/typing file."""
    asserted = [line for line in _page_lines("python") if line.startswith("assert_type(")]
    assert len(asserted) >= 15
    assert [line for line in asserted if line not in _checked_lines()] == []

"""Every ```python block in the README, the top-level guides and docs/ runs, so examples cannot rot.

The blocks of one file run in order in one shared namespace (a later block may use names defined by an
earlier one), in a fresh module namespace per file, offline: examples use ``typedagent.testing``
clients, never the real API. A block titled ``Before: <package> <version>`` shows another library's code;
``tests/test_migration.py`` runs it against that package instead. ``tests/typecheck_docs.py`` type-checks
them all.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```", re.S | re.M)
BEFORE = 'title="Before: '
"""The fence option of a block showing another library's code (run by tests/test_migration.py)."""


def _documents() -> list[Path]:
    docs = [ROOT / "README.md", ROOT / "MIGRATION.md", ROOT / "ERROR_HANDLING.md"]
    docs += sorted((ROOT / "docs").rglob("*.md"))
    return [doc for doc in docs if doc.exists() and FENCE.search(doc.read_text())]


@pytest.mark.parametrize("doc", _documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_examples_run(doc: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each document's Python examples run top to bottom without error."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    if "from typedagent.ray import" in doc.read_text():
        pytest.importorskip("ray", reason="the ray extra is not installed (the dev extra brings it)")
    namespace: dict[str, object] = {"__name__": f"docs_example_{doc.stem}"}
    for number, match in enumerate(FENCE.finditer(doc.read_text()), start=1):
        if BEFORE in match.group(1):
            continue
        line = doc.read_text()[: match.start()].count("\n") + 2
        code = compile(match.group(2), f"{doc.relative_to(ROOT)}:{line} (block {number})", "exec", dont_inherit=True)
        exec(code, namespace)

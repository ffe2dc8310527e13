"""``tests/typecheck_docs.py``: which blocks it checks, as which modules, and that a problem fails the check."""

from __future__ import annotations

from pathlib import Path

import pytest
import typecheck_docs

PAGE = """# A page

```python
import json

x: int = 1
```

```python title="Before: somelib 1.0"
y: str = "other library"
```

```python skip-typecheck
fragment(
```

```py
shown only
```

```python
print(json.dumps(x))
```
"""


def test_typecheck_docs_modules_of_a_page(tmp_path: Path) -> None:
    """A page's blocks are one module, in order; a "Before:" block is a module of its own; skipped ones are left out."""
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "a-page.md"
    page.write_text(PAGE)
    main, before = typecheck_docs.modules_for(page, tmp_path)
    assert (main.name, before.name) == ("doc_docs_a_page", "doc_docs_a_page_before_1")
    assert main.source == "import json\n\nx: int = 1\n\nprint(json.dumps(x))\n\n"
    assert (main.origins[0], main.origins[4]) == ("docs/a-page.md:4", "docs/a-page.md:22")
    assert before.source == 'y: str = "other library"\n\n'
    assert before.origins[0] == "docs/a-page.md:10"
    assert typecheck_docs.documents(tmp_path) == [page]


def test_typecheck_docs_reports_problems_at_the_page_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A block that fails a checker fails the check, each problem shown at its line of the page."""
    for checker in ("mypy", "basedpyright"):
        pytest.importorskip(checker, reason=f"{checker} is not installed (the dev extra brings it)")
    (tmp_path / "README.md").write_text(PAGE.replace('y: str = "other library"', "y: str = 42"))
    assert typecheck_docs.main(["--root", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split(": error")[0] + line[line.rindex(" [") :] for line in out] == [
        "README.md:10 [mypy]",
        "README.md:10 [pyright]",
    ]


GUIDE = """# A guide read one block at a time

```python title="shop.py"
class Order:
    total: float = 0.0
```

```python title="Before: somelib 1.0"
from shop import Order

def before(order: Order) -> float:
    return order.total
```

```python
from shop import Order

def after(order: Order) -> float:
    return order.total
```
"""


def test_typecheck_docs_modules_of_a_self_contained_guide(tmp_path: Path) -> None:
    """MIGRATION.md: a module per block, one of every block together (file blocks aside), file blocks as files."""
    (tmp_path / "MIGRATION.md").write_text(GUIDE)
    modules = typecheck_docs.modules_for(tmp_path / "MIGRATION.md", tmp_path)
    assert [module.name for module in modules] == [
        "doc_migration_all",
        "shop",
        "doc_migration_block_2",
        "doc_migration_block_3",
    ]
    together = modules[0].source
    assert together.startswith("# pyright: reportDuplicateImport=false\n")
    assert together.count("from shop import Order") == 2
    assert "class Order" not in together
    assert modules[0].origins[1] == "MIGRATION.md:9"  # the line after the header is the "Before:" block's first
    assert modules[1].source == "class Order:\n    total: float = 0.0\n\n"


def test_typecheck_docs_checks_a_guide_one_by_one_and_all_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A block using an earlier block's name fails one by one; two blocks declaring one class fail all together."""
    for checker in ("mypy", "basedpyright"):
        pytest.importorskip(checker, reason=f"{checker} is not installed (the dev extra brings it)")
    broken = GUIDE.replace("from shop import Order\n\ndef after", "def after").replace(
        'title="Before: somelib 1.0"\nfrom shop import Order\n',
        'title="Before: somelib 1.0"\nfrom shop import Order\n\nclass Total:\n    pass\n',
    )
    broken += "\n```python\nclass Total:\n    pass\n```\n"
    (tmp_path / "MIGRATION.md").write_text(broken)
    assert typecheck_docs.main(["--root", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert 'MIGRATION.md:19 (one by one): error: Name "Order" is not defined' in out  # mypy, in block 3
    assert 'MIGRATION.md:11 (all together): error: Class declaration "Total" is obscured' in out  # pyright
    assert 'MIGRATION.md:24 (all together): error: Name "Total" already defined' in out  # mypy

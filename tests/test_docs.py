"""Every ```python block in the README, the top-level guides and docs/ runs, so examples cannot rot.

The blocks of one file run in order in one shared namespace (a later block may use names defined by an
earlier one), in a fresh module namespace per file, offline: examples use ``typedagent.testing``
clients, never the real API. A block titled ``Before: <package> <version>`` shows another library's code;
``tests/test_migration.py`` runs it against that package instead. A block titled with a file name
(``title="helpdesk.py"``) is a module of the reader's project: it is written as that file, importable by
the other blocks. ``tests/typecheck_docs.py`` type-checks them all.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```", re.S | re.M)
BEFORE = 'title="Before: '
"""The fence option of a block showing another library's code (run by tests/test_migration.py)."""
FILE = re.compile(r'title="(?P<name>[A-Za-z_]\w*)\.py"')
"""The fence option of a block that is a module of the reader's project."""


def install_file_blocks(text: str, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Import the file blocks of a document as modules (written into ``folder``), for this test only."""
    for match in FENCE.finditer(text):
        file = FILE.search(match.group(1))
        if file is None:
            continue
        path = folder / f"{file['name']}.py"
        path.write_text(match.group(2))
        spec = importlib.util.spec_from_file_location(file["name"], path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, file["name"], module)  # gone again when the test ends
        spec.loader.exec_module(module)


def file_block(doc: Path, name: str) -> str:
    """The source of the block of ``doc`` titled ``{name}.py``."""
    for match in FENCE.finditer(doc.read_text()):
        file = FILE.search(match.group(1))
        if file is not None and file["name"] == name:
            return match.group(2)
    raise LookupError(f"{doc.name} has no block titled {name}.py")


def _documents() -> list[Path]:
    docs = [ROOT / "README.md", ROOT / "MIGRATION.md", ROOT / "ERROR_HANDLING.md"]
    docs += sorted((ROOT / "docs").rglob("*.md"))
    return [doc for doc in docs if doc.exists() and FENCE.search(doc.read_text())]


@pytest.mark.parametrize("doc", _documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_examples_run(doc: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each document's Python examples run top to bottom without error."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    if "from typedagent.ray import" in doc.read_text():
        pytest.importorskip("ray", reason="the ray extra is not installed (the dev extra brings it)")
    for module, distribution in (("temporal", "temporalio"), ("dbos", "dbos")):
        if f"from typedagent.{module} import" in doc.read_text():
            pytest.importorskip(distribution, reason=f"the {module} extra is not installed (the dev extra brings it)")
    if "from typedagent.mcp import" in doc.read_text():
        try:  # the distribution, not an import: a folder named mcp on the path imports as a namespace package
            importlib.metadata.version("mcp")
        except importlib.metadata.PackageNotFoundError:
            pytest.skip("the mcp extra is not installed (the dev extra brings it)")
    install_file_blocks(doc.read_text(), tmp_path, monkeypatch)
    namespace: dict[str, object] = {"__name__": f"docs_example_{doc.stem}"}
    for number, match in enumerate(FENCE.finditer(doc.read_text()), start=1):
        if BEFORE in match.group(1) or FILE.search(match.group(1)):
            continue
        line = doc.read_text()[: match.start()].count("\n") + 2
        code = compile(match.group(2), f"{doc.relative_to(ROOT)}:{line} (block {number})", "exec", dont_inherit=True)
        exec(code, namespace)


def test_docs_human_in_the_loop_program_pauses_in_one_process_and_resumes_in_another(tmp_path: Path) -> None:
    """The SQLite example of docs/human-in-the-loop.md, as a file: started in one process, approved in another."""
    import os
    import subprocess

    source = file_block(ROOT / "docs" / "human-in-the-loop.md", "support_desk")
    (tmp_path / "support_desk.py").write_text(source)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["SUPPORT_DESK_DB"] = str(tmp_path / "desk.db")

    def run(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "support_desk.py", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    waiting = run("start", "Order A-1042 was charged twice")
    execution_id, _, rest = waiting.partition(" ")
    assert rest == "waits for approval of refund {'order_id': 'A-1042', 'amount_cents': 7900}"
    assert run("approve", execution_id) == "done: Refunded 79.00 on A-1042. (7900 cents refunded)"
    assert run("approve", execution_id) == f"no paused execution {execution_id}"
    again = run("start", "Order A-1042 was charged twice").partition(" ")[0]
    assert run("deny", again, "ask", "finance") == "done: Error: ask finance (0 cents refunded)"

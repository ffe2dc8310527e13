"""Type-check every ```python block of the user docs the way a user's project would: mypy --strict and basedpyright.

Run by ``make typecheck`` (``python tests/typecheck_docs.py``). The blocks of one document become one module,
in order (a later block may use names an earlier one defined, as the docs test runs them), written to a
temporary folder outside this repository, so no setting of ``pyproject.toml`` applies: only the checkers' own
strict modes. Errors are reported at the document's line (``README.md:32: ...``).

A block titled ``Before: <package> <version>`` (```` ```python title="Before: pydantic-ai 2.68" ````) shows
another library's code: it is a module of its own, checked against that package (installed by the ``dev``
extra). A block titled with a file name (```` ```python title="helpdesk.py" ````) is a module of the reader's
project, which other blocks import: it is written as that file. A block that is deliberately partial (a
fragment that cannot stand on its own) is fenced as ```` ```python skip-typecheck ````; keep those rare.

The documents in ``SELF_CONTAINED`` (MIGRATION.md, docs/durable.md) are read differently: a reader pastes their
blocks one at a time, or all of them into one file, so both are checked. **One by one**: every block (a "Before:" one
included) is a module of its own, so a block must import every name it uses. **All together**: every block
(file blocks aside) is pasted, in order, into one module, so no two blocks may declare one name differently
(a class, a function, an import of something else under the same name). The one allowance there is an
import repeated by two blocks, which self-contained blocks cannot avoid: that module turns basedpyright's
``reportDuplicateImport`` off.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```", re.S | re.M)
SKIP = "skip-typecheck"
BEFORE = 'title="Before: '
FILE = re.compile(r'title="(?P<name>[A-Za-z_]\w*)\.py"')
"""The fence option of a block that is a module of the reader's project, imported by the other blocks."""
SELF_CONTAINED = frozenset({"MIGRATION.md", "docs/durable.md"})
"""Documents whose blocks must each stand alone, and also stand together in one file (see above)."""
ALL_TOGETHER_HEADER = "# pyright: reportDuplicateImport=false"
PYRIGHT_CONFIG = {"typeCheckingMode": "strict", "pythonVersion": "3.11"}
ERROR_LINE = re.compile(r"^(?P<path>[^:\s]+\.py):(?P<line>\d+):(?P<rest>.*)$")


def documents(root: Path = ROOT) -> list[Path]:
    """The user docs: README, the top-level guides and every page of ``docs/``."""
    docs = [root / "README.md", root / "MIGRATION.md", root / "ERROR_HANDLING.md"]
    docs += sorted((root / "docs").rglob("*.md"))
    return [doc for doc in docs if doc.exists()]


@dataclass(frozen=True, kw_only=True, slots=True)
class Module:
    """One document's checked blocks as a module, with where each of its lines came from."""

    name: str
    source: str
    origins: tuple[str, ...]
    """``doc:line`` for each line of ``source`` (1-based: ``origins[n - 1]`` is line ``n``)."""


def modules_for(doc: Path, root: Path = ROOT) -> list[Module]:
    """The modules of ``doc``'s checked python blocks.

    For most documents: one for its own code (its blocks in order), one per "Before:" block, one per file
    block. For a document in ``SELF_CONTAINED``: one per block, one of every block together, one per file block.
    """
    text = doc.read_text(encoding="utf-8")
    relative = doc.relative_to(root).as_posix()
    stem = "doc_" + re.sub(r"\W+", "_", relative.removesuffix(".md")).strip("_").lower()
    self_contained = relative in SELF_CONTAINED
    together: tuple[list[str], list[str]] = ([], [])
    modules: list[Module] = []
    for number, match in enumerate(FENCE.finditer(text), start=1):
        options = match.group(1)
        if SKIP in options.split():
            continue
        first = text[: match.start(2)].count("\n") + 1
        lines = [*match.group(2).splitlines(), ""]
        origins = [f"{relative}:{first + offset}" for offset in range(len(lines))]
        file = FILE.search(options)
        if file is not None:
            name = file["name"]
        elif self_contained:
            name = f"{stem}_block_{number}"
        elif BEFORE in options:
            name = f"{stem}_before_{len(modules) + 1}"
        else:
            name = ""
        if name:
            modules.append(Module(name=name, source="\n".join(lines) + "\n", origins=tuple(origins)))
        if file is None and (not name or self_contained):
            together[0].extend(lines)
            together[1].extend(origins)
    if together[0] and self_contained:
        source = "\n".join([ALL_TOGETHER_HEADER, *together[0]]) + "\n"
        origins = (f"{relative} (all blocks together)", *together[1])
        modules.insert(0, Module(name=f"{stem}_all", source=source, origins=origins))
    elif together[0]:
        modules.insert(0, Module(name=stem, source="\n".join(together[0]) + "\n", origins=tuple(together[1])))
    return modules


def write_project(modules: Sequence[Module], folder: Path) -> None:
    """A user's project: the modules and a basedpyright configuration asking for strict mode.

    Raises:
        ValueError: two documents have a file block of the same name.
    """
    names = [module.name for module in modules]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"two blocks are the module {twice[0]}.py: give each file block its own name")
    for module in modules:
        (folder / f"{module.name}.py").write_text(module.source, encoding="utf-8")
    (folder / "pyrightconfig.json").write_text(json.dumps(PYRIGHT_CONFIG), encoding="utf-8")


def relocate(output: str, modules: Sequence[Module]) -> Iterator[str]:
    """Checker output with ``module.py:line`` rewritten to the document's ``file:line``.

    A problem of a block checked on its own or of all blocks together says so (``(one by one)``,
    ``(all together)``): the same line may pass one way and fail the other.
    """
    by_file = {f"{module.name}.py": module for module in modules}
    for raw in output.splitlines():
        line = raw.strip()
        match = ERROR_LINE.match(line)
        module = by_file.get(Path(match["path"]).name) if match else None
        if match is None or module is None:
            continue
        number = int(match["line"])
        where = module.origins[number - 1] if 0 < number <= len(module.origins) else f"{module.name}.py:{number}"
        mode = (
            " (all together)" if module.name.endswith("_all") else " (one by one)" if "_block_" in module.name else ""
        )
        yield f"{where}{mode}:{match['rest']}"


def run_checkers(folder: Path, python: str) -> tuple[int, str]:
    """Run both checkers over ``folder``; their combined exit status and output (paths as file:line:)."""
    files = sorted(str(path.name) for path in folder.glob("*.py"))
    mypy = subprocess.run(
        [python, "-m", "mypy", "--strict", "--cache-dir", str(folder / ".mypy_cache"), *files],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    pyright = subprocess.run(
        [str(Path(python).parent / "basedpyright"), "--pythonpath", python, "--outputjson", *files],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [f"{line} [mypy]" for line in mypy.stdout.splitlines() if ": error:" in line or ": note:" in line]
    try:
        report = json.loads(pyright.stdout)
    except json.JSONDecodeError:
        return 1, mypy.stdout + pyright.stdout + pyright.stderr
    for diagnostic in report.get("generalDiagnostics", []):
        if diagnostic["severity"] not in ("error", "warning"):
            continue
        start = diagnostic["range"]["start"]["line"] + 1
        rule = diagnostic.get("rule", "")
        message = " ".join(diagnostic["message"].split())
        lines.append(f"{Path(diagnostic['file']).name}:{start}: {diagnostic['severity']}: {message} [{rule}] [pyright]")
    status = 1 if mypy.returncode or pyright.returncode or any("[pyright]" in line for line in lines) else 0
    return status, "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Check the docs; print every problem at its document line; exit 1 when there is any."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the interpreter whose packages the checkers see")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository whose docs are checked")
    args = parser.parse_args(argv)
    root: Path = args.root.resolve()
    modules = [module for doc in documents(root) for module in modules_for(doc, root)]
    with tempfile.TemporaryDirectory(prefix="typedagent-doc-types-") as temp:
        folder = Path(temp)
        write_project(modules, folder)
        status, output = run_checkers(folder, args.python)
    problems = list(relocate(output, modules))
    for problem in problems:
        print(problem)
    if status or problems:
        print(f"typecheck_docs: {len(problems)} problem(s) in the docs' python blocks", file=sys.stderr)
        return 1
    checked = [doc for doc in documents(root) if modules_for(doc, root)]
    blocks = sum(len(FENCE.findall(doc.read_text(encoding="utf-8"))) for doc in checked)
    print(f"typecheck_docs: {blocks} python blocks in {len(checked)} documents pass mypy --strict and basedpyright")
    return 0


if __name__ == "__main__":
    sys.exit(main())

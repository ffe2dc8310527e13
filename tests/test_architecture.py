"""The package's shape: wings, small modules with one job each, one place for a model call and for a tool call."""

from __future__ import annotations

import ast
import dataclasses
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from typedagent import ExecuteCallbacks
from typedagent._run.hooks import Hooks

SRC = Path(__file__).resolve().parent.parent / "src" / "typedagent"
WINGS = ("_shared", "_agent", "_api", "_run", "_streaming", "_many", "_observability")
"""The private subpackages, one per part of the architecture (docs/architecture.md)."""
CORE = sorted(path for wing in WINGS for path in (SRC / wing).glob("*.py"))
"""The core: every module of the wings."""
EVERY = sorted(SRC.rglob("*.py"))
"""Every module of the package: the core, the public modules, the CLI, testing and evals."""


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _name(path: Path) -> str:
    return str(path.relative_to(SRC))


def test_architecture_wings_and_few_top_level_modules() -> None:
    """The private modules live in the wings: at most 12 modules remain directly under ``src/typedagent/``."""
    top = sorted(path.name for path in SRC.glob("*.py"))
    assert len(top) <= 12, top
    assert all(not name.startswith("_") or name in ("__init__.py", "__main__.py") for name in top), top
    packages = sorted(path.parent.name for path in SRC.glob("*/__init__.py"))
    assert packages == sorted([*WINGS, "_cli", "dbos", "evals", "mcp", "temporal", "testing"])


@pytest.mark.parametrize("wing", WINGS)
def test_architecture_each_wing_says_what_it_does_and_may_use(wing: str) -> None:
    """Each wing's ``__init__.py`` docstring says what the part does and what it may import."""
    doc = ast.get_docstring(_tree(SRC / wing / "__init__.py")) or ""
    assert len(doc.splitlines()) >= 3, doc
    assert "May import" in doc, doc


@pytest.mark.parametrize("path", EVERY, ids=_name)
def test_architecture_module_under_400_lines(path: Path) -> None:
    """No module is above 400 lines."""
    assert len(path.read_text().splitlines()) <= 400


def _body_size(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    """Lines of a function or class, its docstring excluded."""
    size = (node.end_lineno or node.lineno) - node.lineno + 1
    first = node.body[0] if node.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        size -= (first.end_lineno or first.lineno) - first.lineno + 1
    return size


@pytest.mark.parametrize("path", EVERY, ids=_name)
def test_architecture_class_under_200_and_function_under_60_lines(path: Path) -> None:
    """No class is above 200 lines and no function above 60, docstrings excluded."""
    nodes = list(ast.walk(_tree(path)))
    classes = [(n.name, _body_size(n)) for n in nodes if isinstance(n, ast.ClassDef) and _body_size(n) > 200]
    functions = [
        (n.name, _body_size(n))
        for n in nodes
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and _body_size(n) > 60
    ]
    assert (classes, functions) == ([], [])


@pytest.mark.parametrize("path", CORE, ids=_name)
def test_architecture_module_summarised_in_one_sentence(path: Path) -> None:
    """Each core module opens with a docstring whose first line is one sentence saying its job."""
    doc = ast.get_docstring(_tree(path))
    assert doc, f"{path.name} has no module docstring"
    first = doc.splitlines()[0]
    assert first.endswith("."), first
    assert len(re.findall(r"[.!?](?:\s|$)", first)) == 1, first


def _calls_in(path: Path, attribute: str) -> int:
    return sum(
        1
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == attribute
    )


def test_architecture_one_place_calls_the_model() -> None:
    """Only ``_api/model_call.py`` calls ``messages.create``: a span, a stream or a batch transport goes there."""
    callers = {_name(path) for path in CORE if _calls_in(path, "create")}
    # Besides the loop's one place, only typedagent's own client wrappers (the rate limiter, and the Message
    # Batches transport which creates batches, each a client the loop calls through _api/model_call) call the
    # client they wrap.
    assert callers == {"_api/model_call.py", "_api/ratelimit_client.py", "_api/batch_client.py"}


def _runs_user_code(node: ast.Call, what: str) -> bool:
    func, args = node.func, node.args
    if what == "helper handler":
        return isinstance(func, ast.Attribute) and func.attr == "invoke"
    if what == "reflection handler":
        return (
            isinstance(func, ast.Name)
            and func.id == "call_maybe_async"
            and bool(args)
            and isinstance(args[0], ast.Attribute)
            and args[0].attr == "reflection_handler"
        )
    return isinstance(func, ast.Name) and func.id == "validate_candidate"


@pytest.mark.parametrize("what", ["helper handler", "reflection handler", "validation"])
def test_architecture_one_place_runs_a_tool_call(what: str) -> None:
    """Helper handlers, reflection handlers and output validation run only in ``_run/tool_call.py``."""
    used = {
        _name(path)
        for path in CORE
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Call) and _runs_user_code(node, what)
    }
    assert used == {"_run/tool_call.py"}


def test_architecture_every_callback_has_a_typed_hook() -> None:
    """Each ``ExecuteCallbacks`` field is dispatched by a method of ``Hooks`` named after it."""
    fields = [f.name for f in dataclasses.fields(ExecuteCallbacks)]
    assert fields
    for name in fields:
        assert callable(getattr(Hooks, name.removeprefix("on_"), None)), name


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    shutil.copy(SRC.parent.parent / "pyproject.toml", root / "pyproject.toml")
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    command = [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"]
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_architecture_contracts_hold() -> None:
    """``lint-imports`` keeps every contract of ``[tool.importlinter]`` on the package as it is."""
    result = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"],
        cwd=SRC.parent.parent,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout
    assert "0 broken" in result.stdout


def test_architecture_contracts_fail_with_the_import_chain(tmp_path: Path) -> None:
    """An upward import, a cycle and an import of the root, even inside a function, break the build by name."""
    shutil.copytree(SRC, tmp_path / "src" / "typedagent", ignore=shutil.ignore_patterns("__pycache__"))
    conversation = tmp_path / "src" / "typedagent" / "_run" / "conversation.py"
    conversation.write_text(
        conversation.read_text()
        + "\n\ndef _probe() -> None:\n"
        + "    from .. import __version__\n"
        + "    from .._observability import tracing\n"
        + "    from .execute import execute_agent\n"
    )
    result = _lint_imports(tmp_path)
    assert result.returncode == 1
    assert "Contracts: 0 kept, 4 broken." in result.stdout  # the root brings opentelemetry in too
    assert "typedagent._run is not allowed to import typedagent._observability" in result.stdout
    assert "- typedagent._run.conversation -> typedagent._observability.tracing" in result.stdout
    assert "- .conversation -> .execute (1 import)" in result.stdout
    assert "typedagent._run.conversation is not allowed to import typedagent" in result.stdout


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = [stack.pop()]
            while component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_architecture_no_import_cycle_between_any_two_modules() -> None:
    """No module imports, even inside a function or under ``TYPE_CHECKING``, one that imports it back.

    ``acyclic_siblings`` compares siblings level by level, so it cannot see a package's ``__init__`` and one of
    its own modules importing each other; this walks the whole module graph.
    """
    graph = grimp.build_graph("typedagent", cache_dir=None)
    assert _cycles(graph) == []
    graph.add_import(importer="typedagent.testing._items", imported="typedagent.testing")
    assert any({"typedagent.testing", "typedagent.testing._items"} <= set(cycle) for cycle in _cycles(graph))

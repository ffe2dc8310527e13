"""The shape of the core: small modules with one job each, one place for a model call and one for a tool call."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from typedagent import ExecuteCallbacks
from typedagent._callbacks import Hooks

SRC = Path(__file__).resolve().parent.parent / "src" / "typedagent"
CORE = sorted(path for path in SRC.glob("*.py") if path.name not in ("__main__.py",))
"""The core package: every module outside ``_cli/`` and ``testing/``."""


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _sizes(path: Path, kind: type[ast.AST]) -> list[tuple[str, int]]:
    return [
        (getattr(node, "name", "?"), (node.end_lineno or node.lineno) - node.lineno + 1)
        for node in ast.walk(_tree(path))
        if isinstance(node, kind)
    ]


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.name)
def test_architecture_module_under_400_lines(path: Path) -> None:
    """No core module is above 400 lines."""
    assert len(path.read_text().splitlines()) <= 400


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.name)
def test_architecture_class_under_200_and_function_under_60_lines(path: Path) -> None:
    """No class of the core is above 200 lines and no function above 60."""
    classes = [(name, size) for name, size in _sizes(path, ast.ClassDef) if size > 200]
    functions = [
        (name, size) for name, size in _sizes(path, ast.FunctionDef) + _sizes(path, ast.AsyncFunctionDef) if size > 60
    ]
    assert (classes, functions) == ([], [])


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.name)
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
    """Only ``_model_call.py`` calls ``messages.create``: a span, a stream or a batch transport goes there."""
    callers = {path.name for path in CORE if _calls_in(path, "create")}
    # Besides the loop's one place, only typedagent's own client wrappers (the rate limiter, and the Message
    # Batches transport which creates batches, each a client the loop calls through _model_call) call the
    # client they wrap.
    assert callers == {"_model_call.py", "_ratelimit_client.py", "_batch_client.py"}


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
    """Helper handlers, reflection handlers and output validation run only in ``_tool_call.py``."""
    used = {
        path.name
        for path in CORE
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Call) and _runs_user_code(node, what)
    }
    assert used == {"_tool_call.py"}


def test_architecture_every_callback_has_a_typed_hook() -> None:
    """Each ``ExecuteCallbacks`` field is dispatched by a method of ``Hooks`` named after it."""
    fields = [f.name for f in dataclasses.fields(ExecuteCallbacks)]
    assert fields
    for name in fields:
        assert callable(getattr(Hooks, name.removeprefix("on_"), None)), name

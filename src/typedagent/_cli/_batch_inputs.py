"""The inputs file of ``typedagent batch``: one JSON prompt or object per line, each checked into a ``RunInput``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pydantic

from .._agent.definition import AgentDefinition
from .._agent.locate import UsageError
from .._many.inputs import RunInput, derived_key

__all__ = ["check_inputs", "read_inputs"]

_FIELDS = frozenset({"prompt", "deps", "key"})

DefaultDeps = Callable[[], Any]
"""Makes the deps of a line that has none (``--scripted`` with a module's ``deps()``)."""


def read_inputs(
    path: Path, agent: AgentDefinition[Any, Any], default_deps: DefaultDeps | None = None
) -> Iterator[RunInput[Any]]:
    """The inputs of a JSONL file, read one line at a time; blank lines are skipped.

    A line is a JSON string (the prompt) or an object with ``prompt`` (a string or a list of content
    blocks) and optional ``deps`` (validated into the agent's ``deps_type``) and ``key``.

    Raises:
        UsageError: the file cannot be read, or a line is not a usable input (the message names the line).
    """
    for _, run_input in _read(path, agent, default_deps):
        yield run_input


def check_inputs(path: Path, agent: AgentDefinition[Any, Any], default_deps: DefaultDeps | None = None) -> int:
    """Check every line before anything is sent, keys included; return how many inputs there are.

    Raises:
        UsageError: as ``read_inputs``, and for two inputs with one key (a key given twice, or a key given
            that another input has from its position, ``#<index>``).
    """
    keys: dict[str, str] = {}
    index = -1
    for index, (where, run_input) in enumerate(_read(path, agent, default_deps)):
        key = run_input.key if run_input.key is not None else derived_key(index)
        first = keys.setdefault(key, where)
        if first != where:
            named = f"key {key!r}" if run_input.key is not None else f"its key {key!r} (from its position)"
            raise UsageError(f"{where}: {named} is already the key of {first}: every input needs a key of its own")
    return index + 1


def _read(
    path: Path, agent: AgentDefinition[Any, Any], default_deps: DefaultDeps | None
) -> Iterator[tuple[str, RunInput[Any]]]:
    adapter: pydantic.TypeAdapter[Any] | None = None
    if agent.deps_type is not None:
        adapter = pydantic.TypeAdapter(agent.deps_type)
    try:
        file = path.open("rb")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    with file:
        for number, raw in enumerate(file, start=1):
            where = f"{path}:{number}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise UsageError(f"{where} is not UTF-8 text ({exc.reason}): save the file as UTF-8") from None
            if line.strip():
                yield where, _input(line, where, agent, adapter, default_deps)


def _input(
    line: str,
    where: str,
    agent: AgentDefinition[Any, Any],
    adapter: pydantic.TypeAdapter[Any] | None,
    default_deps: DefaultDeps | None,
) -> RunInput[Any]:
    try:
        value: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{where} is not JSON ({exc.msg}): write one JSON string or object per line") from None
    if isinstance(value, str):
        value = {"prompt": value}
    if not isinstance(value, dict):
        raise UsageError(f'{where}: expected a prompt string or an object with "prompt", got {type(value).__name__}')
    fields = cast("dict[str, Any]", value)
    unknown = sorted(set(fields) - _FIELDS)
    if unknown:
        raise UsageError(f'{where}: unknown field(s) {", ".join(unknown)} (allowed: "prompt", "deps", "key")')
    prompt = fields.get("prompt")
    if not (isinstance(prompt, str) and prompt.strip()) and not (isinstance(prompt, list) and prompt):
        raise UsageError(f'{where}: "prompt" must be a non-empty string or a list of content blocks')
    key = fields.get("key")
    if key is not None and not (isinstance(key, str) and key):
        raise UsageError(f'{where}: "key" must be a non-empty string')
    deps: Any = None
    deps_name = getattr(agent.deps_type, "__name__", "its deps_type")
    if adapter is not None:
        if "deps" not in fields:
            if default_deps is not None:
                return RunInput(cast("Any", prompt), deps=default_deps(), key=key)
            raise UsageError(f'{where}: agent {agent.name!r} needs "deps" ({deps_name})')
        try:
            deps = adapter.validate_python(fields["deps"])
        except pydantic.ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in error['loc']) or '(root)'}: {error['msg']}"
                for error in exc.errors(include_url=False)
            )
            raise UsageError(f'{where}: "deps" does not fit {deps_name}: {problems}') from None
    elif "deps" in fields:
        raise UsageError(f'{where}: agent {agent.name!r} declares no deps_type, so "deps" has nothing to fill')
    return RunInput(cast("Any", prompt), deps=deps, key=key)

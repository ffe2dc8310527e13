"""The inputs file of ``typedagent batch``: one JSON prompt or object per line, each checked into a ``RunInput``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pydantic

from .._agent.definition import AgentDefinition
from .._agent.locate import UsageError
from .._many.inputs import RunInput

__all__ = ["read_inputs"]

_FIELDS = frozenset({"prompt", "deps", "key"})


def read_inputs(path: Path, agent: AgentDefinition[Any, Any]) -> Iterator[RunInput[Any]]:
    """The inputs of a JSONL file, read one line at a time; blank lines are skipped.

    A line is a JSON string (the prompt) or an object with ``prompt`` (a string or a list of content
    blocks) and optional ``deps`` (validated into the agent's ``deps_type``) and ``key``.

    Raises:
        UsageError: the file cannot be read, or a line is not a usable input (the message names the line).
    """
    adapter: pydantic.TypeAdapter[Any] | None = None
    if agent.deps_type is not None:
        adapter = pydantic.TypeAdapter(agent.deps_type)
    try:
        file = path.open(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    with file:
        for number, line in enumerate(file, start=1):
            if line.strip():
                yield _input(line, f"{path}:{number}", agent, adapter)


def _input(
    line: str, where: str, agent: AgentDefinition[Any, Any], adapter: pydantic.TypeAdapter[Any] | None
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

"""The checks tools share, and calling user code from the loop (``call_maybe_async``, from ``_shared/threads``)."""

from __future__ import annotations

import re

import pydantic

from .._shared.errors import AgentDefinitionError
from .._shared.numbers import is_finite_number
from .._shared.threads import call_maybe_async

__all__ = [
    "TOOL_NAME_RE",
    "InvalidToolInput",
    "call_maybe_async",
    "check_timeout",
    "check_tool_name",
    "copy_function_identity",
    "format_validation_errors",
    "validation_error_lines",
]

TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class InvalidToolInput(Exception):
    """The model's input did not match a ``@tool`` function's signature (message is pydantic's detail)."""


def check_tool_name(name: object, what: str) -> str:
    """Return ``name`` if the API accepts it as a tool name, else raise ``AgentDefinitionError``."""
    if not isinstance(name, str) or not TOOL_NAME_RE.fullmatch(name):
        raise AgentDefinitionError(
            f"{what} name {name!r} is not a valid tool name: use 1-64 characters from a-z, A-Z, 0-9, '_' and '-'."
        )
    return name


def check_timeout(timeout_s: float | None, name: str) -> float | None:
    """Reject per-tool timeouts that are not finite positive numbers (NaN and infinity included)."""
    if timeout_s is not None and not (is_finite_number(timeout_s) and timeout_s > 0):
        raise AgentDefinitionError(
            f"Tool {name!r}: timeout_s must be a finite positive number of seconds (or None for no timeout), "
            f"got {timeout_s!r}."
        )
    return timeout_s


def copy_function_identity(wrapper: object, fn: object) -> None:
    """Copy the function's name and docs onto the ``Tool`` so it still looks like the function."""
    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        value = getattr(fn, attr, None)
        if value is not None:
            wrapper.__dict__[attr] = value


def format_validation_errors(exc: pydantic.ValidationError) -> str:
    """One ``- path: message`` line per pydantic error."""
    return "\n".join(f"- {line}" for line in validation_error_lines(exc))


def validation_error_lines(exc: pydantic.ValidationError) -> list[str]:
    """``path: message`` for each pydantic error (``(root)`` for whole-object errors)."""
    lines: list[str] = []
    for error in exc.errors(include_url=False):
        path = ".".join(str(part) for part in error["loc"]) or "(root)"
        lines.append(f"{path}: {error['msg']}")
    return lines

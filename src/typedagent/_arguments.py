"""The arguments of ``execute_agent``: the "not passed" sentinel and the checks made before anything is sent."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from ._callbacks import ExecuteCallbacks
from ._definition import AgentDefinition
from ._limits import ExecutionLimits

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, MessageParam

__all__ = ["MISSING", "check_arguments"]


class _Missing:
    def __repr__(self) -> str:
        return "<not passed>"


MISSING: Final = _Missing()
"""``deps`` was not passed (``None`` is a valid value)."""


def check_arguments(
    agent: AgentDefinition[Any, Any],
    prompt: str | Sequence[ContentBlockParam],
    deps: object,
    limits: ExecutionLimits | None,
    callbacks: ExecuteCallbacks | None,
    history: Sequence[MessageParam] | None,
) -> None:
    """Raise ``TypeError`` for arguments no execution can run with, before anything is sent."""
    if not isinstance(agent, AgentDefinition):
        raise TypeError(f"execute_agent() needs an AgentDefinition from define_agent(), got {type(agent).__name__}.")
    if not isinstance(prompt, str) and not (isinstance(prompt, Sequence) and all(isinstance(b, dict) for b in prompt)):
        raise TypeError("prompt must be a str or a list of Messages API content blocks (dicts).")
    empty = not prompt.strip() if isinstance(prompt, str) else not prompt
    if empty and not history:
        raise TypeError("prompt is empty: give the model something to work on (or pass message_history).")
    if agent.deps_type is not None and deps is MISSING:
        raise TypeError(
            f"Agent {agent.name!r} declares deps_type={agent.deps_type.__name__}: pass execute_agent(..., deps=...)."
        )
    if limits is not None and not isinstance(limits, ExecutionLimits):
        raise TypeError(f"limits must be an ExecutionLimits, got {type(limits).__name__}.")
    if callbacks is not None and not isinstance(callbacks, ExecuteCallbacks):
        raise TypeError(f"callbacks must be an ExecuteCallbacks, got {type(callbacks).__name__}.")
    if history is not None and not (
        isinstance(history, Sequence)
        and all(isinstance(m, dict) and m.get("role") in ("user", "assistant") for m in history)
    ):
        raise TypeError("message_history must be a list of Messages API messages ({'role': ..., 'content': ...}).")

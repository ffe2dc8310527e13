"""History processors: what ``define_agent(history_processors=...)`` accepts, checked at definition time."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from typing_extensions import TypeVar

from .._shared.errors import AgentDefinitionError
from .context import RunContext

if TYPE_CHECKING:
    from anthropic.types import MessageParam

__all__ = ["HistoryProcessor", "checked_processors", "processor_name"]

DepsT = TypeVar("DepsT", default=None)

HistoryProcessor: TypeAlias = (
    Callable[[list["MessageParam"]], list["MessageParam"] | Awaitable[list["MessageParam"]]]
    | Callable[[RunContext[DepsT], list["MessageParam"]], list["MessageParam"] | Awaitable[list["MessageParam"]]]
)
"""A function (sync or async) from the conversation to the messages sent instead, ``(messages)`` or ``(ctx,
messages)``: applied before every model call, on a copy (the conversation the result reports never changes)."""


def checked_processors(processors: object) -> tuple[tuple[Any, ...], tuple[bool, ...]]:
    """The processors as a tuple, and whether each takes the run context first.

    Raises:
        AgentDefinitionError: not a list of callables taking ``(messages)`` or ``(ctx, messages)``.
    """
    if callable(processors) or isinstance(processors, str) or not isinstance(processors, Iterable):
        shown = getattr(processors, "__name__", None) or "..."
        raise AgentDefinitionError(
            f"define_agent(history_processors=...) must be a list, got {type(processors).__name__}: "
            f"write history_processors=[{shown}] even for one."
        )
    found = tuple(cast("Iterable[object]", processors))
    return found, tuple(_takes_ctx(processor) for processor in found)


def _takes_ctx(processor: object) -> bool:
    if not callable(processor):
        raise AgentDefinitionError(f"history_processors must hold functions, got {processor!r}.")
    try:
        signature = inspect.signature(processor)
    except (TypeError, ValueError):
        return False  # a builtin without a signature: called with the messages alone
    for arguments in (("messages",), ("ctx", "messages")):
        try:
            signature.bind(*arguments)
        except TypeError:
            continue
        return len(arguments) == 2
    raise AgentDefinitionError(
        f"history processors take (messages) or (ctx, messages) and return the messages to send; "
        f"{processor_name(processor)!r}{signature} cannot be called either way."
    )


def processor_name(processor: object) -> str:
    """How a processor is named in messages: its qualified name, else its ``repr``."""
    name = getattr(processor, "__qualname__", None)
    return name if isinstance(name, str) else repr(processor)

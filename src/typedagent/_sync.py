"""``execute_agent_sync()``: the blocking wrapper around ``execute_agent``, for code with no event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, overload

import pydantic
from typing_extensions import TypeVar

from ._arguments import MISSING
from ._callbacks import ExecuteCallbacks
from ._client import MessagesClient
from ._definition import AgentDefinition
from ._limits import AbortEvent, ExecutionLimits
from ._loop import execute_agent
from ._results import ExecuteResult

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, MessageParam

__all__ = ["execute_agent_sync"]

OutputT = TypeVar("OutputT", bound=pydantic.BaseModel)
DepsT = TypeVar("DepsT")


@overload
def execute_agent_sync(
    agent: AgentDefinition[OutputT, None],
    prompt: str | Sequence[ContentBlockParam],
    *,
    deps: None = None,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    message_history: Sequence[MessageParam] | None = None,
) -> ExecuteResult[OutputT]: ...
@overload
def execute_agent_sync(
    agent: AgentDefinition[OutputT, DepsT],
    prompt: str | Sequence[ContentBlockParam],
    *,
    deps: DepsT,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    message_history: Sequence[MessageParam] | None = None,
) -> ExecuteResult[OutputT]: ...
def execute_agent_sync(
    agent: AgentDefinition[OutputT, Any],
    prompt: str | Sequence[ContentBlockParam],
    *,
    deps: Any = MISSING,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    message_history: Sequence[MessageParam] | None = None,
) -> ExecuteResult[OutputT]:
    """Blocking ``execute_agent``: same arguments, same result. Use it where no event loop runs.

    Raises:
        RuntimeError: called inside a running event loop (``await execute_agent(...)`` there).
        TypeError: wrong argument types.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            "execute_agent_sync() cannot run inside a running event loop: use `await execute_agent(...)` instead."
        )
    return asyncio.run(
        execute_agent(
            agent,
            prompt,
            deps=deps,
            client=client,
            abort_event=abort_event,
            callbacks=callbacks,
            limits=limits,
            message_history=message_history,
        )
    )

"""``execute_agent_sync()``: the blocking wrapper around ``execute_agent``, for code with no event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any, overload

from typing_extensions import TypeVar

from .._agent.definition import AgentDefinition
from .._api.client import MessagesClient
from .._shared.events import ExecuteCallbacks
from .._shared.limits import AbortEvent, ExecutionLimits
from .._shared.results import ExecuteResult
from .arguments import MISSING
from .loop import execute_agent

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, MessageParam

__all__ = ["execute_agent_sync", "run_blocking"]

OutputT = TypeVar("OutputT")
DepsT = TypeVar("DepsT")
T = TypeVar("T")


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
    refuse_running_loop("execute_agent_sync()", "`await execute_agent(...)`")
    return run_blocking(
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


def refuse_running_loop(call: str, instead: str) -> None:
    """Raise ``RuntimeError`` when a blocking entry point (``call``) is called inside a running event loop.

    Raises:
        RuntimeError: an event loop runs in this thread; the message says to use ``instead`` there.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(f"{call} cannot run inside a running event loop: use {instead} instead.")


def run_blocking(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` on a new event loop and return its result as soon as it is done.

    ``asyncio.run`` would then shut down the loop's default executor, joining its worker threads: a sync
    tool that was abandoned at the deadline or on abort (still stuck in ``time.sleep``, say) would hold
    the return up until it finished. Here such threads are left to finish on their own; leftover tasks
    are cancelled and async generators closed, as ``asyncio.run`` does.
    """
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(main)
    finally:
        try:
            _cancel_leftovers(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()  # shuts the default executor down without waiting for its threads


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    tasks = asyncio.all_tasks(loop)
    if not tasks:
        return
    for task in tasks:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))

"""``stream_agent()``: an execution whose events (deltas, tool calls, partial outputs) arrive as they happen."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Self, overload

from typing_extensions import TypeVar

from .._agent.definition import AgentDefinition
from .._api.client import MessagesClient
from .._run.arguments import MISSING, check_arguments
from .._run.loop import execute_agent
from .._run.tap import EVENT_TAP
from .._shared.events import ExecuteCallbacks
from .._shared.limits import AbortEvent, ExecutionLimits
from .._shared.results import ExecuteResult
from .backlog import AsyncBacklog
from .events import AgentStreamEvent, Finished
from .tap import StreamTap

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, MessageParam

__all__ = ["AgentStream", "stream_agent"]

OutputT = TypeVar("OutputT")
DepsT = TypeVar("DepsT")


class _Raised:
    """The execution raised (a programming error, or cancellation): the consumer re-raises it."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


class AgentStream(Generic[OutputT]):
    """One streamed execution: ``async with stream_agent(...) as run:``, ``async for event in run:``, ``run.result``.

    The execution starts on entering the ``async with`` block and runs at its own pace: events wait in a backlog
    for the consumer, so a slow consumer never slows the model call down. While the consumer lags, a new
    ``PartialOutput`` replaces the unread one of the same call (the newest holds everything the older did), so
    the backlog grows with the output, not with its square; every other event waits to be read. The last event
    is ``Finished``, with the result. Leaving the block before that cancels the execution.
    """

    def __init__(self, agent: AgentDefinition[OutputT, Any], arguments: dict[str, Any]) -> None:
        self._agent = agent
        self._arguments = arguments
        self._queue: AsyncBacklog[AgentStreamEvent[OutputT] | _Raised] = AsyncBacklog()
        self._task: asyncio.Task[None] | None = None
        self._result: ExecuteResult[OutputT] | None = None

    async def __aenter__(self) -> Self:
        if self._task is not None:
            raise RuntimeError("a stream_agent(...) stream can be entered once: call stream_agent again to rerun")
        tap = StreamTap(self._agent, self._queue.put)
        context = contextvars.copy_context()
        context.run(EVENT_TAP.set, tap)
        self._task = asyncio.get_running_loop().create_task(self._execute(tap), context=context)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _execute(self, tap: StreamTap[OutputT]) -> None:
        try:
            result = await execute_agent(self._agent, **self._arguments)
        except Exception as exc:
            # Handed to the consumer, who raises it: the task itself ends quietly (nothing left unretrieved).
            self._queue.put(_Raised(exc))
            return
        except BaseException as exc:
            self._queue.put(_Raised(exc))
            raise
        self._queue.put(Finished(attempt=tap.attempt, iteration=tap.iteration, result=result))

    def __aiter__(self) -> AsyncIterator[AgentStreamEvent[OutputT]]:
        return self._events()

    async def _events(self) -> AsyncIterator[AgentStreamEvent[OutputT]]:
        if self._task is None:
            raise RuntimeError("iterate a stream inside `async with stream_agent(...) as run:`")
        while self._result is None:
            event = await self._queue.get()
            if isinstance(event, _Raised):
                raise event.error
            if isinstance(event, Finished):
                self._result = event.result
            yield event

    @property
    def result(self) -> ExecuteResult[OutputT]:
        """The execution's result, once the events have been read up to ``Finished``.

        Raises:
            RuntimeError: the execution has not finished, or the events were not read to the end.
        """
        if self._result is None:
            raise RuntimeError(
                "the stream has no result yet: read its events to the end (`async for event in run: ...`) first"
            )
        return self._result


@overload
def stream_agent(
    agent: AgentDefinition[OutputT, None],
    prompt: str | Sequence[ContentBlockParam],
    *,
    deps: None = None,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    message_history: Sequence[MessageParam] | None = None,
) -> AgentStream[OutputT]: ...
@overload
def stream_agent(
    agent: AgentDefinition[OutputT, DepsT],
    prompt: str | Sequence[ContentBlockParam],
    *,
    deps: DepsT,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    message_history: Sequence[MessageParam] | None = None,
) -> AgentStream[OutputT]: ...
def stream_agent(
    agent: AgentDefinition[OutputT, Any],
    prompt: str | Sequence[ContentBlockParam],
    *,
    deps: Any = MISSING,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    message_history: Sequence[MessageParam] | None = None,
) -> AgentStream[OutputT]:
    """Run an agent as ``execute_agent`` does, streaming its model calls, and watch it happen.

    Same arguments, same result (``run.result``, and the ``Finished`` event); on top, every model call
    streams, and the execution's events arrive as they happen: text and thinking deltas, tool calls (their
    input as it is written, then their result), ``PartialOutput`` snapshots of the output while the model
    writes it, attempts starting, validation failures and reflection previews.

    Example:
        ``async with stream_agent(agent, "Triage this ticket") as run:``
        ``    async for event in run: ...``
        ``result = run.result``

    Raises:
        TypeError: wrong argument types (a programming error), before anything is sent.
        ValueError: as for ``execute_agent``.
    """
    check_arguments(agent, prompt, deps, limits, callbacks, message_history, client, abort_event)
    arguments: dict[str, Any] = {
        "prompt": prompt,
        "client": client,
        "abort_event": abort_event,
        "callbacks": callbacks,
        "limits": limits,
        "message_history": message_history,
    }
    if deps is not MISSING:
        arguments["deps"] = deps
    return AgentStream(agent, arguments)

"""``stream_agent()``: an execution whose events (deltas, tool calls, partial outputs) arrive as they happen."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Literal, Never, Self, cast, overload

from typing_extensions import TypeVar

from .._agent.definition import AgentDefinition
from .._api.client import MessagesClient
from .._run.arguments import MISSING, check_arguments, check_pausing
from .._run.execute import execute
from .._run.resume import check_decisions, check_fingerprint
from .._run.tap import EVENT_TAP
from .._shared.decisions import Decision
from .._shared.events import ExecuteCallbacks
from .._shared.limits import AbortEvent, ExecutionLimits
from .._shared.pausing import Approver, ExecutePaused, PausableResult, PausedState
from .._shared.results import ExecuteResult
from .backlog import AsyncBacklog
from .events import AgentStreamEvent, Finished, Paused
from .tap import StreamTap

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, MessageParam

__all__ = ["AgentStream", "stream_agent", "stream_arguments"]

OutputT = TypeVar("OutputT")
DepsT = TypeVar("DepsT")
PausedT = TypeVar("PausedT", default=Never)
"""``Paused`` for a stream that may pause (its last event then), else ``Never``."""
PausedResultT = TypeVar("PausedResultT", default=Never)
"""``ExecutePaused`` for a stream that may pause (its result then), else ``Never``."""


class _Raised:
    """The execution raised (a programming error, or cancellation): the consumer re-raises it."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


class AgentStream(Generic[OutputT, PausedT, PausedResultT]):
    """One streamed execution: ``async with stream_agent(...) as run:``, ``async for event in run:``, ``run.result``.

    The execution starts on entering the ``async with`` block and runs at its own pace: events wait in a backlog
    for the consumer, so a slow consumer never slows the model call down. While the consumer lags, a new
    ``PartialOutput`` replaces the unread one of the same call (the newest holds everything the older did), so
    the backlog grows with the output, not with its square; every other event waits to be read. The last event
    is ``Finished``, with the result (or, for ``pausable=True``, ``Paused``). Leaving the block before that
    cancels the execution.

    ``AgentStream[Output]`` is the stream ``stream_agent`` returns; a stream that may pause is
    ``AgentStream[Output, Paused, ExecutePaused]``: its events and result include those.
    """

    def __init__(
        self, agent: AgentDefinition[OutputT, Any], arguments: dict[str, Any], *, include_sub_agents: bool = False
    ) -> None:
        self._agent = agent
        self._arguments = arguments
        self._include_sub_agents = include_sub_agents
        self._queue: AsyncBacklog[AgentStreamEvent[OutputT] | Paused | _Raised] = AsyncBacklog()
        self._task: asyncio.Task[None] | None = None
        self._result: PausableResult[OutputT] | None = None

    async def __aenter__(self) -> Self:
        if self._task is not None:
            raise RuntimeError("a stream_agent(...) stream can be entered once: call stream_agent again to rerun")
        tap = StreamTap(self._agent, self._queue.put, include_sub_agents=self._include_sub_agents)
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
            result = await execute(self._agent, **self._arguments)
        except Exception as exc:
            # Handed to the consumer, who raises it: the task itself ends quietly (nothing left unretrieved).
            self._queue.put(_Raised(exc))
            return
        except BaseException as exc:
            self._queue.put(_Raised(exc))
            raise
        attempt, iteration = tap.attempt, tap.iteration
        if isinstance(result, ExecutePaused):
            paused = Paused(
                attempt=attempt, iteration=iteration, pending=result.pending, state=result.state, result=result
            )
            self._queue.put(paused)
        else:
            self._queue.put(Finished(attempt=attempt, iteration=iteration, result=result))

    def __aiter__(self) -> AsyncIterator[AgentStreamEvent[OutputT] | PausedT]:
        return cast("AsyncIterator[AgentStreamEvent[OutputT] | PausedT]", self._events())

    async def _events(self) -> AsyncIterator[AgentStreamEvent[OutputT] | Paused]:
        if self._task is None:
            raise RuntimeError("iterate a stream inside `async with stream_agent(...) as run:`")
        while self._result is None:
            event = await self._queue.get()
            if isinstance(event, _Raised):
                raise event.error
            if isinstance(event, Finished | Paused):
                self._result = event.result
            yield event

    @property
    def result(self) -> ExecuteResult[OutputT] | PausedResultT:
        """The execution's result, once the events have been read up to ``Finished`` (or ``Paused``).

        Raises:
            RuntimeError: the execution has not finished, or the events were not read to the end.
        """
        if self._result is None:
            raise RuntimeError(
                "the stream has no result yet: read its events to the end (`async for event in run: ...`) first"
            )
        return cast("ExecuteResult[OutputT] | PausedResultT", self._result)


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
    pausable: Literal[False] = False,
    approve: Approver | None = None,
    include_sub_agents: bool = False,
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
    pausable: Literal[False] = False,
    approve: Approver | None = None,
    include_sub_agents: bool = False,
) -> AgentStream[OutputT]: ...
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
    pausable: bool,
    approve: Approver | None = None,
    include_sub_agents: bool = False,
) -> AgentStream[OutputT, Paused, ExecutePaused]: ...
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
    pausable: bool,
    approve: Approver | None = None,
    include_sub_agents: bool = False,
) -> AgentStream[OutputT, Paused, ExecutePaused]: ...
@overload
def stream_agent(
    agent: AgentDefinition[OutputT, None],
    *,
    resume: PausedState,
    decisions: Mapping[str, Decision],
    deps: None = None,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    approve: Approver | None = None,
    include_sub_agents: bool = False,
) -> AgentStream[OutputT, Paused, ExecutePaused]: ...
@overload
def stream_agent(
    agent: AgentDefinition[OutputT, DepsT],
    *,
    resume: PausedState,
    decisions: Mapping[str, Decision],
    deps: DepsT,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    approve: Approver | None = None,
    include_sub_agents: bool = False,
) -> AgentStream[OutputT, Paused, ExecutePaused]: ...
def stream_agent(
    agent: AgentDefinition[OutputT, Any],
    prompt: str | Sequence[ContentBlockParam] | None = None,
    *,
    deps: Any = MISSING,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    message_history: Sequence[MessageParam] | None = None,
    pausable: bool = False,
    approve: Approver | None = None,
    resume: PausedState | None = None,
    decisions: Mapping[str, Decision] | None = None,
    include_sub_agents: bool = False,
) -> AgentStream[OutputT, Any, Any]:
    """Run an agent as ``execute_agent`` does, streaming its model calls, and watch it happen.

    Same arguments, same result (``run.result``, and the ``Finished`` event); on top, every model call
    streams, and the execution's events arrive as they happen: text and thinking deltas, tool calls (their
    input as it is written, then their result), ``PartialOutput`` snapshots of the output while the model
    writes it, attempts starting, validation failures and reflection previews. With ``pausable=True`` (and
    on ``resume=state``) a stream that pauses ends with a ``Paused`` event instead, and its result is the
    ``ExecutePaused``: ``stream_agent(agent, resume=event.state, decisions={...})`` streams on.
    With ``include_sub_agents=True``, the events of the agents it delegates to (``as_tool``) arrive too, their
    ``sub_agent`` naming the agent.

    Example:
        ``async with stream_agent(agent, "Triage this ticket") as run:``
        ``    async for event in run: ...``
        ``result = run.result``

    Raises:
        TypeError: wrong argument types (a programming error), before anything is sent.
        ValueError: as for ``execute_agent``.
    """
    arguments = stream_arguments(
        agent,
        prompt,
        deps=deps,
        client=client,
        abort_event=abort_event,
        callbacks=callbacks,
        limits=limits,
        message_history=message_history,
        pausable=pausable,
        approve=approve,
        resume=resume,
        decisions=decisions,
    )
    return AgentStream(agent, arguments, include_sub_agents=bool(include_sub_agents))


def stream_arguments(agent: AgentDefinition[Any, Any], prompt: Any, **options: Any) -> dict[str, Any]:
    """``execute_agent``'s arguments for a stream, checked now (before anything is sent), as it checks them."""
    deps, resume, decisions = options["deps"], options["resume"], options["decisions"]
    check_arguments(
        agent,
        prompt,
        deps,
        options["limits"],
        options["callbacks"],
        options["message_history"],
        options["client"],
        options["abort_event"],
    )
    check_pausing(agent, prompt, options["message_history"], options["pausable"], options["approve"], resume, decisions)
    if resume is not None:
        check_fingerprint(agent, resume)
        check_decisions(resume, decisions)
    arguments = {name: value for name, value in options.items() if name != "deps"}
    if prompt is not None:
        arguments["prompt"] = prompt
    if resume is None:
        del arguments["resume"], arguments["decisions"]
    else:
        del arguments["message_history"], arguments["pausable"]
    if deps is not MISSING:
        arguments["deps"] = deps
    return arguments

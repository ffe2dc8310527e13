"""``stream_agent_sync()``: ``stream_agent`` for code with no event loop, as a blocking iterator of events."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Literal, Never, Self, cast, overload

from typing_extensions import TypeVar

from .._agent.definition import AgentDefinition
from .._api.client import MessagesClient
from .._run.arguments import MISSING
from .._run.sync import refuse_running_loop, run_blocking
from .._shared.decisions import Decision
from .._shared.events import ExecuteCallbacks
from .._shared.limits import AbortEvent, ExecutionLimits
from .._shared.pausing import Approver, ExecutePaused, PausableResult, PausedState
from .._shared.results import ExecuteResult
from .backlog import ThreadBacklog
from .events import AgentStreamEvent, Finished, Paused
from .stream import AgentStream, stream_arguments

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, MessageParam

__all__ = ["SyncAgentStream", "stream_agent_sync"]

OutputT = TypeVar("OutputT")
DepsT = TypeVar("DepsT")
PausedT = TypeVar("PausedT", default=Never)
PausedResultT = TypeVar("PausedResultT", default=Never)


class SyncAgentStream(Generic[OutputT, PausedT, PausedResultT]):
    """One streamed execution, run on the blocking wrappers' event loop from a worker thread: iterate it for the events.

    ``with stream_agent_sync(...) as run:``, ``for event in run:``, then ``run.result``. Leaving the ``with``
    block before the ``Finished`` (or ``Paused``) event cancels the execution. A stream that may pause is
    ``SyncAgentStream[Output, Paused, ExecutePaused]``, as ``AgentStream``.
    """

    def __init__(self, stream: AgentStream[OutputT, Any, Any]) -> None:
        self._stream = stream
        # Unread events, as in stream_agent: a consumer thread that lags keeps only the newest PartialOutput of a call.
        self._events: ThreadBacklog[AgentStreamEvent[OutputT] | Paused | BaseException] = ThreadBacklog()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._result: PausableResult[OutputT] | None = None
        self._started = threading.Event()

    def __enter__(self) -> Self:
        self._start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Cancel the execution if it is still running, and wait for its thread to end."""
        thread, loop, task = self._thread, self._loop, self._task
        if thread is None:
            return
        if loop is not None and task is not None and not task.done():
            loop.call_soon_threadsafe(task.cancel)
        thread.join()

    def _start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="typedagent-stream", daemon=True)
        self._thread.start()
        self._started.wait()

    def _run(self) -> None:
        try:
            run_blocking(self._main())
        except BaseException as exc:  # handed to the iterating thread, which raises it
            self._events.put(exc)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self._started.set()
        async with self._stream as run:
            async for event in run:
                self._events.put(event)

    def __iter__(self) -> Iterator[AgentStreamEvent[OutputT] | PausedT]:
        return cast("Iterator[AgentStreamEvent[OutputT] | PausedT]", self._read())

    def _read(self) -> Iterator[AgentStreamEvent[OutputT] | Paused]:
        self._start()
        while self._result is None:
            event = self._events.get()
            if isinstance(event, BaseException):
                raise event
            if isinstance(event, Finished | Paused):
                self._result = event.result
            yield event

    @property
    def result(self) -> ExecuteResult[OutputT] | PausedResultT:
        """The execution's result, once the events have been read up to ``Finished`` (or ``Paused``).

        Raises:
            RuntimeError: the events were not read to the end.
        """
        if self._result is None:
            raise RuntimeError("the stream has no result yet: read its events to the end (`for event in run:`) first")
        return cast("ExecuteResult[OutputT] | PausedResultT", self._result)


@overload
def stream_agent_sync(
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
) -> SyncAgentStream[OutputT]: ...
@overload
def stream_agent_sync(
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
) -> SyncAgentStream[OutputT]: ...
@overload
def stream_agent_sync(
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
) -> SyncAgentStream[OutputT, Paused, ExecutePaused]: ...
@overload
def stream_agent_sync(
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
) -> SyncAgentStream[OutputT, Paused, ExecutePaused]: ...
@overload
def stream_agent_sync(
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
) -> SyncAgentStream[OutputT, Paused, ExecutePaused]: ...
@overload
def stream_agent_sync(
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
) -> SyncAgentStream[OutputT, Paused, ExecutePaused]: ...
def stream_agent_sync(
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
) -> SyncAgentStream[OutputT, Any, Any]:
    """Blocking ``stream_agent``: same arguments; iterate the result for the events, then read ``run.result``.

    Example:
        ``with stream_agent_sync(agent, "Triage this ticket") as run:``
        ``    for event in run: ...``

    Raises:
        RuntimeError: called inside a running event loop (``async with stream_agent(...)`` there).
        TypeError: wrong argument types, before anything is sent.
        ValueError: as for ``execute_agent``.
    """
    refuse_running_loop("stream_agent_sync()", "`async with stream_agent(...)`")
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
    stream: AgentStream[OutputT, Any, Any] = AgentStream(agent, arguments, include_sub_agents=bool(include_sub_agents))
    return SyncAgentStream(stream)

"""``execute_agent_sync()``: the blocking wrapper around ``execute_agent``, for code with no event loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import os
import threading
from collections.abc import Coroutine, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final, Literal, overload

from typing_extensions import TypeVar

from .._agent.definition import AgentDefinition
from .._api.client import MessagesClient
from .._shared.decisions import Decision
from .._shared.events import ExecuteCallbacks
from .._shared.limits import POLL_ASYNCIO_EVENTS, AbortEvent, ExecutionLimits
from .._shared.pausing import Approver, PausableResult, PausedState
from .._shared.results import ExecuteResult
from .arguments import MISSING
from .execute import execute

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
    pausable: Literal[False] = False,
    approve: Approver | None = None,
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
    pausable: Literal[False] = False,
    approve: Approver | None = None,
) -> ExecuteResult[OutputT]: ...
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
    pausable: bool,
    approve: Approver | None = None,
) -> PausableResult[OutputT]: ...
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
    pausable: bool,
    approve: Approver | None = None,
) -> PausableResult[OutputT]: ...
@overload
def execute_agent_sync(
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
) -> PausableResult[OutputT]: ...
@overload
def execute_agent_sync(
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
) -> PausableResult[OutputT]: ...
def execute_agent_sync(
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
) -> PausableResult[OutputT]:
    """Blocking ``execute_agent``: same arguments, same result. Use it where no event loop runs.

    Raises:
        RuntimeError: called inside a running event loop (``await execute_agent(...)`` there).
        TypeError: wrong argument types.
        ValueError: as for ``execute_agent``.
    """
    refuse_running_loop("execute_agent_sync()", "`await execute_agent(...)`")
    return run_blocking(
        execute(
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
    """Run ``main`` on the blocking wrappers' event loop, in a copy of the caller's context, and wait for it.

    Every blocking wrapper shares one event loop that lives as long as the process, in a daemon thread (as
    pydantic-ai's ``run_sync`` keeps one loop per thread): a client's pooled connections belong to the loop
    that opened them, so an ``AsyncAnthropic`` reused from one blocking call to the next (in any thread) must
    always meet the same loop. A fresh loop per call would find the previous call's connections dead and fail
    or retry on them, sending the request again.

    Nothing waits for sync tools abandoned in worker threads (at the deadline, on abort), and the loop is
    never shut down, so such threads never hold the return up. Interrupted while it waits (Ctrl-C), the
    caller cancels ``main``, waits for it to end, and re-raises. An ``asyncio.Event`` abort event is polled
    there: it is set from another thread than the loop's, which would not wake the loop.
    """
    loop = _background_loop()
    outcome: concurrent.futures.Future[T] = concurrent.futures.Future()
    tasks: set[asyncio.Task[Any]] = set()
    context = contextvars.copy_context()
    context.run(_RUN_TASKS.set, tasks)
    context.run(POLL_ASYNCIO_EVENTS.set, True)

    def start() -> None:
        task = loop.create_task(_then_cancel_leftovers(main, tasks))
        task.add_done_callback(functools.partial(_settle, outcome))

    loop.call_soon_threadsafe(start, context=context)
    try:
        return outcome.result()
    except BaseException:
        if not outcome.done():
            loop.call_soon_threadsafe(lambda: [task.cancel() for task in list(tasks)])
            with contextlib.suppress(BaseException):
                concurrent.futures.wait([outcome])
        raise


async def _then_cancel_leftovers(main: Coroutine[Any, Any, T], tasks: set[asyncio.Task[Any]]) -> T:
    """Await ``main``, then cancel and await the tasks it started that are still pending, as ``asyncio.run`` does."""
    try:
        return await main
    finally:
        leftovers = [task for task in tasks if not task.done() and task is not asyncio.current_task()]
        for task in leftovers:
            task.cancel()
        if leftovers:
            await asyncio.gather(*leftovers, return_exceptions=True)


def _settle(outcome: concurrent.futures.Future[T], task: asyncio.Task[T]) -> None:
    if task.cancelled():
        outcome.set_exception(asyncio.CancelledError())
    elif (error := task.exception()) is not None:
        outcome.set_exception(error)
    else:
        outcome.set_result(task.result())


_RUN_TASKS: ContextVar[set[asyncio.Task[Any]] | None] = ContextVar("typedagent_blocking_run", default=None)
"""The tasks of the blocking call running in this context (its own, and every task they start)."""


def _task_factory(
    loop: asyncio.AbstractEventLoop, coro: Any, /, context: contextvars.Context | None = None
) -> asyncio.Task[Any]:
    """Every task started on the loop, recorded in the tasks of the blocking call that started it."""
    task = asyncio.Task(coro, loop=loop, context=context)
    tasks = _RUN_TASKS.get() if context is None else context.get(_RUN_TASKS)
    if tasks is not None:
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    return task


_LOOP_LOCK: Final = threading.Lock()
_LOOP: list[tuple[int, asyncio.AbstractEventLoop]] = []
"""The blocking wrappers' loop, with the process that started it (a forked child starts its own)."""


def _background_loop() -> asyncio.AbstractEventLoop:
    with _LOOP_LOCK:
        if _LOOP and _LOOP[0][0] == os.getpid():
            return _LOOP[0][1]
        loop = asyncio.new_event_loop()
        loop.set_task_factory(_task_factory)
        threading.Thread(target=_serve, args=(loop,), name="typedagent-loop", daemon=True).start()
        _LOOP[:] = [(os.getpid(), loop)]
        return loop


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    while True:
        # A task that raises KeyboardInterrupt or SystemExit stops the loop with it (asyncio re-raises those
        # out of the loop); the task has failed with it, and its caller hears it: the loop serves on.
        with contextlib.suppress(BaseException):
            loop.run_forever()

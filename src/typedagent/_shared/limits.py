"""Execution limits, and racing in-flight work against the abort event and the deadline."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import Awaitable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypeVar

from .determinism import runtime
from .errors import AgentDefinitionError
from .numbers import is_finite_number

__all__ = ["POLL_ASYNCIO_EVENTS", "AbortEvent", "ExecutionLimits", "Guard", "Interrupted", "Overran", "within"]

T = TypeVar("T")

AbortEvent: TypeAlias = threading.Event | asyncio.Event
"""What ``execute_agent(abort_event=...)`` accepts."""

POLL_S = 0.02
"""How often an event that cannot be awaited is polled while work is in flight (well inside the 100 ms promise)."""

POLL_ASYNCIO_EVENTS: ContextVar[bool] = ContextVar("typedagent_poll_asyncio_events", default=False)
"""True for work the blocking wrappers run on their own loop: the caller's thread waits, so an ``asyncio.Event``
abort event is set from another thread, which does not wake the loop. Such an event is polled there."""

GRACE_S = 0.05
"""How long interrupted async work may take to unwind before it is abandoned (well inside the 100 ms promise)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ExecutionLimits:
    """Hard limits on one execution; each is off (``None``) unless set."""

    max_total_tokens: int | None = None
    """Checked before each API call: once the total reaches it, the execution fails with
    ``TOKEN_BUDGET_EXCEEDED`` (so the total exceeds it by at most one response)."""
    timeout_s: float | None = None
    """Wall-clock deadline for the whole execution; work in flight is interrupted → ``TIMEOUT``."""
    max_requests: int | None = None
    """API calls the execution may make, in all attempts; one more fails it with ``REQUEST_LIMIT_EXCEEDED``."""
    max_tool_calls: int | None = None
    """Helper calls the execution may run; a response asking for more than are left fails it with
    ``TOOL_CALL_LIMIT_EXCEEDED`` before any of its calls runs."""
    max_cost_usd: float | None = None
    """Checked before each API call: once the estimated cost (``metadata.cost_usd``) reaches it, the execution
    fails with ``COST_LIMIT_EXCEEDED``. Needs a price for the agent's model (``register_price``)."""

    def __post_init__(self) -> None:
        _check_int(self.max_total_tokens, "max_total_tokens", 1)
        _check_int(self.max_requests, "max_requests", 1)
        _check_int(self.max_tool_calls, "max_tool_calls", 0)
        timeout = self.timeout_s
        if timeout is not None and not (is_finite_number(timeout) and timeout > 0):
            raise AgentDefinitionError(
                f"ExecutionLimits.timeout_s must be a finite positive number of seconds (None for no deadline), "
                f"got {timeout!r}."
            )
        cost = self.max_cost_usd
        if cost is not None and not (is_finite_number(cost) and cost > 0):
            raise AgentDefinitionError(
                f"ExecutionLimits.max_cost_usd must be a finite positive number of US dollars (None for no limit), "
                f"got {cost!r}."
            )


def _check_int(value: object, name: str, least: int) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < least):
        raise AgentDefinitionError(f"ExecutionLimits.{name} must be an int >= {least} or None, got {value!r}.")


class Interrupted(Exception):
    """In-flight work was interrupted by the abort event or the deadline."""

    def __init__(self, reason: Literal["abort", "timeout"]) -> None:
        super().__init__(reason)
        self.reason: Literal["abort", "timeout"] = reason


class Guard:
    """Knows the abort event and the deadline; checks them and races awaitables against them."""

    __slots__ = ("abort_event", "deadline")

    def __init__(self, abort_event: AbortEvent | None, timeout_s: float | None) -> None:
        self.abort_event = abort_event
        self.deadline = None if timeout_s is None else runtime().clock() + timeout_s

    def aborted(self) -> bool:
        """Whether the abort event is set."""
        return self.abort_event is not None and self.abort_event.is_set()

    def timed_out(self) -> bool:
        """Whether the deadline has passed."""
        return self.deadline is not None and runtime().clock() >= self.deadline

    def run(self, awaitable: Awaitable[T]) -> Awaitable[T]:
        """``awaitable``, to be awaited: interrupted within 100 ms of an abort or the deadline.

        Without either, ``awaitable`` itself (no wrapper for every await to pass through).

        Raises:
            Interrupted: (when awaited) the abort event was set or the deadline passed first; the work was cancelled.
        """
        if self.abort_event is None and self.deadline is None:
            return awaitable
        return self._race(awaitable)

    async def _race(self, awaitable: Awaitable[T]) -> T:
        work = asyncio.ensure_future(awaitable)
        watcher = asyncio.ensure_future(self._wait_abort()) if self.abort_event is not None else None
        timeout = None if self.deadline is None else max(0.0, self.deadline - runtime().clock())
        ended = await _settle(work, timeout, watcher)
        if ended is work:
            return work.result()
        if ended is not None and ended.exception() is not None:
            raise RuntimeError("typedagent: watching the abort event failed") from ended.exception()
        # The interruption's cause is whichever fired first, never a guess from re-reading the event.
        raise Interrupted("abort" if ended is not None else "timeout")

    async def _wait_abort(self) -> None:
        event = self.abort_event
        if isinstance(event, asyncio.Event) and not POLL_ASYNCIO_EVENTS.get():
            try:
                await event.wait()
                return
            except RuntimeError:
                pass  # bound to another event loop (an earlier run's): watch it by polling instead
        if event is not None:
            await _EventPoller.get(event).wait()


class _EventPoller:
    """Mirrors an event that cannot be awaited here into an ``asyncio.Event`` of the running loop.

    A ``threading.Event`` cannot be awaited, nor can an ``asyncio.Event`` bound to another loop (one
    reused across ``execute_agent_sync`` calls); both can be polled. One poller per event and loop,
    shared by every execution waiting on it, keeps the 100 ms promise without a thread per execution
    and without each of a thousand in-flight executions polling on its own.
    """

    def __init__(self, event: AbortEvent) -> None:
        self.event = event
        self.mirror = asyncio.Event()
        self.waiters = 0
        self.poller: asyncio.Task[None] | None = None

    @classmethod
    def get(cls, event: AbortEvent) -> _EventPoller:
        try:
            per_loop = _BRIDGES.setdefault(event, {})
        except TypeError:
            # Not hashable or not weakly referable (a slotted or dataclass event-like object): poll it for this
            # waiter alone.
            return cls(event)
        loop = asyncio.get_running_loop()
        bridge = per_loop.get(loop)
        if bridge is None:
            bridge = per_loop[loop] = cls(event)
        return bridge

    async def wait(self) -> None:
        self.waiters += 1
        if self.poller is None:
            self.poller = asyncio.ensure_future(self._poll())
        try:
            await self.mirror.wait()
        finally:
            self.waiters -= 1
            if not self.waiters:
                # Nobody is waiting: stop polling and forget this bridge (the next wait starts afresh).
                self.poller.cancel()
                with contextlib.suppress(TypeError):
                    _BRIDGES.get(self.event, {}).pop(asyncio.get_running_loop(), None)

    async def _poll(self) -> None:
        while not self.event.is_set():
            await runtime().sleep(POLL_S)
        self.mirror.set()


_BRIDGES: weakref.WeakKeyDictionary[AbortEvent, dict[asyncio.AbstractEventLoop, _EventPoller]] = (
    weakref.WeakKeyDictionary()
)


class Overran(Exception):
    """Work passed its own time limit (a tool's ``timeout_s``); distinct from a ``TimeoutError`` it raises itself."""


async def within(awaitable: Awaitable[T], timeout_s: float) -> T:
    """Await ``awaitable``, raising ``Overran`` after ``timeout_s`` seconds.

    Unlike ``asyncio.wait_for``, the late work is cancelled and abandoned, never awaited: a handler
    that swallows ``CancelledError`` (or a sync one stuck in its worker thread) cannot hold up the
    execution past its timeout.

    Raises:
        Overran: the work had not finished after ``timeout_s`` seconds.
    """
    work = asyncio.ensure_future(awaitable)
    if await _settle(work, timeout_s) is work:
        return work.result()
    raise Overran


async def _settle(
    work: asyncio.Future[T], wait_s: float | None, watcher: asyncio.Future[None] | None = None
) -> asyncio.Future[Any] | None:
    """Wait until ``work`` finishes, ``watcher`` fires or ``wait_s`` passes; return what ended the wait.

    ``work`` when it finished, ``watcher`` when it fired first, None when the time ran out. Unfinished
    work is cancelled, given ``GRACE_S`` to unwind (so the ``finally:`` blocks of well-behaved tools run
    before the result comes back), then abandoned, never awaited further: work stuck in a worker thread,
    or a handler that swallows ``CancelledError``, cannot hold the execution up.
    """
    waiting: set[asyncio.Future[Any]] = {work} if watcher is None else {work, watcher}
    try:
        done, _ = await asyncio.wait(waiting, timeout=wait_s, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        _abandon(work)  # we are cancelled, or a KeyboardInterrupt stopped the loop
        raise
    finally:
        if watcher is not None:
            watcher.cancel()
    if work in done:
        return work
    _abandon(work)
    if not work.done():
        await asyncio.wait({work}, timeout=GRACE_S)
    return watcher if watcher is not None and watcher in done else None


def _abandon(work: asyncio.Future[Any]) -> None:
    """Cancel ``work`` if it is still running; its outcome, whenever it comes, is read and dropped.

    Read, so that asyncio never reports it as "exception was never retrieved" — a ``KeyboardInterrupt``
    that already stopped the loop included.
    """
    if not work.done():
        work.cancel()
    work.add_done_callback(_consume)


def _consume(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()

"""Running sync user code off the event loop, on daemon worker threads that nobody ever waits for.

``asyncio.to_thread`` uses the loop's default executor, whose threads ``asyncio.run`` joins when it
shuts down and the interpreter joins at exit: a sync tool stuck in ``time.sleep(20)`` would hold up
the return of ``execute_agent_sync`` and the exit of the command line long after the execution was
abandoned. These workers are daemon threads: an abandoned call finishes on its own (its result is
discarded), and nothing waits for it. Idle workers are reused, and exit after a minute of idleness.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import queue
import threading
import weakref
from collections.abc import Callable
from functools import partial
from types import FunctionType
from typing import Any, Final, TypeVar

from .determinism import runtime

__all__ = ["call_maybe_async", "run_in_thread"]

T = TypeVar("T")

IDLE_EXIT_S: Final = 60.0
"""A worker with nothing to do for this long exits."""

MAX_RUNNING: Final = 40
"""Sync calls one event loop runs at once (anyio's default); more wait their turn. A call whose caller stopped
waiting (abandoned at a timeout or abort) frees its place at once, though its thread runs on."""


class _Workers:
    """A pool of daemon threads, grown on demand: a job never waits behind a busy (or stuck) worker."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[Callable[[], Callable[[], None]]] = queue.SimpleQueue()
        self.lock = threading.Lock()
        self.idle = 0
        self.count = 0

    def submit(self, job: Callable[[], Callable[[], None]]) -> None:
        """Run ``job`` on a worker; what it returns is called once the worker counts as idle again."""
        with self.lock:
            if self.idle:
                self.idle -= 1  # an idle worker takes it; count it busy now so two jobs never wait for one worker
            else:
                self.count += 1
                threading.Thread(target=self._work, name=f"typedagent-worker-{self.count}", daemon=True).start()
        self.jobs.put(job)

    def _work(self) -> None:
        while True:
            try:
                job = self.jobs.get(timeout=IDLE_EXIT_S)
            except queue.Empty:
                with self.lock:
                    if self.jobs.empty() and self.idle:
                        self.idle -= 1
                        self.count -= 1
                        return
                continue
            deliver = job()
            del job  # drop the job's references before idling
            # Idle before the outcome is delivered: a caller that submits again as soon as it has the
            # outcome finds this worker free instead of starting another.
            with self.lock:
                self.idle += 1
            deliver()


_WORKERS: Final = _Workers()


async def run_in_thread(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Call ``fn(*args, **kwargs)`` on a daemon worker thread, in a copy of the caller's context.

    Whatever ``fn`` raises is raised here as it is (``asyncio.to_thread`` would turn a
    ``concurrent.futures.CancelledError`` into a cancellation of the caller). If the caller stops
    waiting, the call goes on in its thread and its outcome is dropped.
    """
    if runtime().inline_sync_calls:
        # A runtime without threads (a durable workflow's): the call runs here, in the caller's context.
        return fn(*args, **kwargs)
    loop = asyncio.get_running_loop()
    async with _limiter(loop):
        return await _run(loop, fn, *args, **kwargs)


def _limiter(loop: asyncio.AbstractEventLoop) -> asyncio.Semaphore:
    limiter = _LIMITERS.get(loop)
    if limiter is None:
        limiter = _LIMITERS[loop] = asyncio.Semaphore(MAX_RUNNING)
    return limiter


_LIMITERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


async def _run(loop: asyncio.AbstractEventLoop, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def job() -> Callable[[], None]:
        try:
            result = context.run(fn, *args, **kwargs)
        except StopIteration as exc:
            # A future cannot hold a StopIteration (the awaiting side would never resume); a coroutine
            # raising one gets a RuntimeError, so a sync function does too.
            error = RuntimeError(f"{getattr(fn, '__name__', 'function')} raised StopIteration")
            error.__cause__ = exc
            return partial(_deliver, loop, future, None, error)
        except BaseException as exc:  # every outcome goes to the waiting task, which decides
            return partial(_deliver, loop, future, None, exc)
        return partial(_deliver, loop, future, result, None)

    _WORKERS.submit(job)
    return await future


def _deliver(
    loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], result: Any, exc: BaseException | None
) -> None:
    def settle() -> None:
        if future.done():  # the caller stopped waiting (cancelled): the outcome is dropped
            return
        if exc is None:
            future.set_result(result)
        else:
            future.set_exception(exc)

    # A closed loop raises RuntimeError: the execution that wanted this result is over.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(settle)


async def call_maybe_async(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Await an async function on the loop; run a sync one on a worker thread (never on the loop).

    Whatever the call returns that is itself awaitable (a sync function returning a coroutine, an async
    one returning another coroutine) is awaited too, so no coroutine is left un-awaited or sent to the
    model as a value.
    """
    # A plain function with no attributes set on it tells by its code flags (what ``inspect.iscoroutinefunction``
    # reads for one); the others are asked (one marked with ``inspect.markcoroutinefunction``, a partial, ...).
    if fn.__code__.co_flags & _COROUTINE if type(fn) is FunctionType and not fn.__dict__ else _is_async(fn):
        result = await fn(*args, **kwargs)
    else:
        result = await run_in_thread(fn, *args, **kwargs)
    while type(result) not in _PLAIN and inspect.isawaitable(result):
        result = await result
    return result


_COROUTINE: Final = inspect.CO_COROUTINE
_PLAIN: Final = frozenset({str, dict, list, int, float, bool, type(None), tuple})
"""What most calls return: never awaitable, so not asked (``inspect.isawaitable`` goes through ``ABCMeta``)."""


def _is_async(fn: Callable[..., Any]) -> bool:
    try:
        return _async_functions[fn]
    except (KeyError, TypeError):  # not seen yet, or not hashable
        found = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004
    with contextlib.suppress(TypeError):  # a callable that cannot be weakly referenced is looked at every time
        _async_functions[fn] = found
    return found


_async_functions: weakref.WeakKeyDictionary[Callable[..., Any], bool] = weakref.WeakKeyDictionary()
"""Whether each handler seen is async: ``inspect`` answers in microseconds, and handlers run on every call."""

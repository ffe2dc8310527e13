"""Sync user code runs on daemon worker threads: its exceptions come back as they are, its context goes along."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from support import GOOD, Triage, results_of, run, triage_agent

from typedagent import AgentErrorCode, OutputTool, ValidatorErrorContext, tool
from typedagent._shared import threads as _threads
from typedagent._shared.threads import run_in_thread
from typedagent.testing import ScriptedClient, output_call, submit_call, tool_call


def _cancelled_elsewhere() -> None:
    """What ``run_coroutine_threadsafe(...).result()`` raises when that coroutine was cancelled."""
    raise concurrent.futures.CancelledError


@tool
def sync_tool() -> str:
    """Raises concurrent.futures.CancelledError, an ordinary exception."""
    _cancelled_elsewhere()
    return "never"


@tool
async def async_tool() -> str:
    """Raises concurrent.futures.CancelledError from a coroutine."""
    _cancelled_elsewhere()
    return "never"


@pytest.mark.parametrize("name", ["sync_tool", "async_tool"])
async def test_threads_tool_raising_futures_cancelled_error_is_an_error_result(name: str) -> None:
    """A tool raising concurrent.futures.CancelledError gets an error result; the caller's task is not cancelled."""
    client = ScriptedClient([tool_call(name), output_call(GOOD)])
    result = await run(triage_agent(helpers=[sync_tool, async_tool]), client)
    assert result.ok
    assert results_of(result.metadata.messages[2]) == [("toolu_01_001", "Error: CancelledError", True)]


async def test_threads_validator_raising_futures_cancelled_error_is_a_validator_error() -> None:
    """A sync validator raising concurrent.futures.CancelledError fails the run as VALIDATOR_ERROR."""

    def validator(out: Triage) -> None:
        _cancelled_elsewhere()

    result = await run(triage_agent(validators=[validator]), ScriptedClient([output_call(GOOD)]))
    assert not result.ok
    assert result.error.code is AgentErrorCode.VALIDATOR_ERROR
    assert isinstance(result.error.context, ValidatorErrorContext)
    assert result.error.context.error_type == "CancelledError"


async def test_threads_reflection_handler_raising_futures_cancelled_error_keeps_the_candidate() -> None:
    """A sync reflection handler raising concurrent.futures.CancelledError is an error result; submit still works."""

    def preview(out: Triage) -> str:
        _cancelled_elsewhere()
        return "never"

    agent = triage_agent(output=OutputTool(Triage, reflection_handler=preview))
    result = await run(agent, ScriptedClient([output_call(GOOD), submit_call()]))
    assert result.ok
    assert results_of(result.metadata.messages[2])[0][2] is True


async def test_threads_worker_is_a_daemon_running_in_the_callers_context() -> None:
    """Sync calls run on daemon threads (never joined) and see the caller's context variables."""
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var")
    var.set("caller's")

    def where() -> tuple[bool, str, bool]:
        thread = threading.current_thread()
        return thread.daemon, var.get(), thread is threading.main_thread()

    assert await run_in_thread(where) == (True, "caller's", False)


async def test_threads_workers_are_reused_and_never_queue_behind_a_stuck_one() -> None:
    """An idle worker is reused; a new job never waits behind a busy (or abandoned) one."""
    release = threading.Event()
    stuck = asyncio.ensure_future(run_in_thread(release.wait, 5))
    await asyncio.sleep(0.05)
    workers_before = _threads._WORKERS.count
    started = time.monotonic()
    for _ in range(20):
        await run_in_thread(time.sleep, 0)
    assert time.monotonic() - started < 1.0
    # One worker at most is started for the 20 jobs (none when an idle one is left from earlier calls).
    assert _threads._WORKERS.count - workers_before <= 1
    release.set()
    assert await stuck is True


async def test_threads_stop_iteration_becomes_runtime_error() -> None:
    """A sync function raising StopIteration gives a RuntimeError (a future cannot hold StopIteration)."""

    def stops() -> Any:
        raise StopIteration

    with pytest.raises(RuntimeError, match=r"^stops raised StopIteration$"):
        await run_in_thread(stops)


def test_threads_idle_workers_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker with nothing to do for IDLE_EXIT_S exits; the pool starts a new one for the next job."""
    monkeypatch.setattr(_threads, "IDLE_EXIT_S", 0.05)
    workers = _threads._Workers()
    ran = threading.Event()
    workers.submit(lambda: ran.set)
    assert ran.wait(5)
    deadline = time.monotonic() + 5
    while workers.count and time.monotonic() < deadline:
        time.sleep(0.01)
    assert (workers.count, workers.idle) == (0, 0)
    again = threading.Event()
    workers.submit(lambda: again.set)
    assert again.wait(5)
    assert workers.count == 1


async def test_threads_at_most_max_running_calls_run_at_once_and_abandoned_ones_free_their_place() -> None:
    """Sync calls of one loop run at most MAX_RUNNING at a time; an abandoned call frees its place at once."""
    release = threading.Event()
    lock = threading.Lock()
    running = [0]
    peak = [0]

    def blocked() -> None:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        release.wait(10)
        with lock:
            running[0] -= 1

    calls = [asyncio.ensure_future(run_in_thread(blocked)) for _ in range(_threads.MAX_RUNNING + 5)]
    await _until(lambda: running[0] >= _threads.MAX_RUNNING)
    await asyncio.sleep(0.05)
    assert running[0] == _threads.MAX_RUNNING
    calls[0].cancel()  # abandoned: its thread stays blocked, but a waiting call may start
    await _until(lambda: running[0] >= _threads.MAX_RUNNING + 1)
    assert running[0] == _threads.MAX_RUNNING + 1
    release.set()
    await asyncio.gather(*calls[1:])
    assert peak[0] == _threads.MAX_RUNNING + 1


async def _until(condition: Callable[[], bool], timeout_s: float = 5) -> None:
    """Wait until ``condition()`` holds, checking every 10 ms (it is set by worker threads)."""
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:  # noqa: ASYNC110 - worker threads change it
        await asyncio.sleep(0.01)

"""The blocking entry points return on time: the deadline and the abort event are kept even by stuck sync tools."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from support import GOOD, results_of, triage_agent

from typedagent import AgentErrorCode, ExecutionLimits, execute_agent_sync, tool
from typedagent._run import execute as _execute
from typedagent._run.feedback import ABANDONED
from typedagent._run.sync import run_blocking
from typedagent.testing import FakeAnthropicServer, ScriptedClient, output_call, tool_call


@tool
def stuck() -> str:
    """Blocks its worker thread for 3 s."""
    time.sleep(3)
    return "late"


@tool(timeout_s=0.2)
def stuck_with_timeout() -> str:
    """Blocks its worker thread for 3 s, past its own 0.2 s timeout."""
    time.sleep(3)
    return "late"


def test_sync_timeout_returns_at_the_deadline_while_a_sync_tool_blocks() -> None:
    """execute_agent_sync with timeout_s=0.5 returns within 100 ms of the deadline, not when the tool wakes."""
    client = ScriptedClient([tool_call("stuck"), output_call(GOOD)])
    started = time.monotonic()
    result = execute_agent_sync(
        triage_agent(helpers=[stuck]), "go", client=client, limits=ExecutionLimits(timeout_s=0.5)
    )
    elapsed = time.monotonic() - started
    assert not result.ok
    assert result.error.code is AgentErrorCode.TIMEOUT
    assert elapsed < 0.6
    assert results_of(result.metadata.messages[2]) == [("toolu_01_001", f"Error: {ABANDONED}", True)]


def test_sync_abort_returns_within_100_ms_while_a_sync_tool_blocks() -> None:
    """An abort event set at 0.3 s ends execute_agent_sync within 100 ms, though the tool sleeps on."""
    stop = threading.Event()
    set_at: list[float] = []

    def abort() -> None:
        set_at.append(time.monotonic())
        stop.set()

    timer = threading.Timer(0.3, abort)
    timer.start()
    client = ScriptedClient([tool_call("stuck"), output_call(GOOD)])
    result = execute_agent_sync(triage_agent(helpers=[stuck]), "go", client=client, abort_event=stop)
    returned = time.monotonic()
    timer.join()
    assert not result.ok
    assert result.error.code is AgentErrorCode.EXECUTION_CANCELLED
    assert returned - set_at[0] < 0.1
    assert results_of(result.metadata.messages[2]) == [("toolu_01_001", f"Error: {ABANDONED}", True)]


def test_sync_tool_timeout_does_not_hold_the_return() -> None:
    """A sync tool past its own timeout_s is abandoned: the run goes on and returns long before the tool wakes."""
    client = ScriptedClient([tool_call("stuck_with_timeout"), output_call(GOOD)])
    started = time.monotonic()
    result = execute_agent_sync(triage_agent(helpers=[stuck_with_timeout]), "go", client=client)
    elapsed = time.monotonic() - started
    assert result.ok
    assert elapsed < 1.0
    assert results_of(result.metadata.messages[2]) == [
        ("toolu_01_001", "Error: tool 'stuck_with_timeout' did not finish within 0.2 s and was abandoned.", True)
    ]


def test_sync_run_blocking_does_not_wait_for_threads_of_the_default_executor() -> None:
    """Work a coroutine left in the loop's default executor does not hold up run_blocking's return."""

    async def main() -> str:
        asyncio.get_running_loop().run_in_executor(None, time.sleep, 3)
        await asyncio.sleep(0)
        return "done"

    started = time.monotonic()
    assert run_blocking(main()) == "done"
    assert time.monotonic() - started < 0.5


def test_sync_run_blocking_cancels_leftover_tasks() -> None:
    """Tasks still pending when the main coroutine returns are cancelled and awaited, as asyncio.run does."""
    cancelled: list[bool] = []

    async def background() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    async def main() -> None:
        asyncio.get_running_loop().create_task(background())
        await asyncio.sleep(0)

    run_blocking(main())
    assert cancelled == [True]


def test_sync_first_run_deadline_does_not_include_the_sdk_import() -> None:
    """In a fresh process, the first execution's timeout_s measures the run, not importing the SDK."""
    script = textwrap.dedent(
        """
        import sys, time
        from pydantic import BaseModel
        from typedagent import ExecutionLimits, OutputTool, define_agent, execute_agent_sync, tool
        from typedagent.testing import FakeAnthropicServer, ScriptedClient, output_call, tool_call

        class Out(BaseModel):
            n: int

        @tool
        def quick() -> str:
            '''Sleeps 0.1 s.'''
            time.sleep(0.1)
            return "ok"

        assert "anthropic" not in sys.modules
        agent = define_agent(name="a", model="claude-sonnet-4-6", output=OutputTool(Out), helpers=[quick])
        client = ScriptedClient([tool_call("quick"), output_call(Out(n=1))])
        result = execute_agent_sync(agent, "go", client=client, limits=ExecutionLimits(timeout_s=0.5))
        print(result.ok, getattr(result, "error", None))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True None\n"


def test_sync_deadline_starts_after_the_default_client_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building the default client (which imports the SDK, ~1 s on a cold start) happens before the clock starts."""

    def slow_default_client() -> ScriptedClient:
        time.sleep(0.8)  # what importing anthropic costs on a small machine
        return ScriptedClient([tool_call("quick"), output_call(GOOD)])

    @tool
    def quick() -> str:
        """Sleeps 0.1 s."""
        time.sleep(0.1)
        return "ok"

    monkeypatch.setattr(_execute, "default_client", slow_default_client)
    result = execute_agent_sync(triage_agent(helpers=[quick]), "go", limits=ExecutionLimits(timeout_s=0.5))
    assert result.ok
    assert result.metadata.latency_ms < 500


async def test_sync_blocking_entry_points_refuse_a_running_event_loop() -> None:
    """Every blocking entry point, called inside a running loop, raises RuntimeError naming its async form."""
    from typedagent import execute_many_sync
    from typedagent.evals import Case, Dataset, run_evals_sync
    from typedagent.ray import execute_many_ray_sync

    agent = triage_agent()
    client = ScriptedClient([output_call(GOOD)])
    dataset: Dataset[object, None] = Dataset(cases=[Case(name="one", prompt="go")])
    calls = [
        (lambda: execute_agent_sync(agent, "go", client=client), "await execute_agent"),
        (lambda: execute_many_sync(agent, ["go"], client=client), "in execute_many"),
        (lambda: execute_many_ray_sync(agent, ["go"]), "in execute_many_ray"),
        (lambda: run_evals_sync(dataset, agent, client=client), "await run_evals"),
    ]
    for call, says in calls:
        with pytest.raises(RuntimeError, match=f"cannot run inside a running event loop: use `[^`]*{says}"):
            call()
    assert client.requests == []


@pytest.mark.parametrize("max_retries", [0, 2])
def test_sync_wrappers_reuse_one_sdk_client_without_extra_requests(max_retries: int) -> None:
    """One AsyncAnthropic with pooled connections, reused by every blocking wrapper: 4 executions send 4 requests."""
    from typedagent import execute_many_sync, stream_agent_sync

    agent = triage_agent()
    with FakeAnthropicServer([output_call(GOOD)] * 4) as server:
        client = server.client(keep_alive=True, max_retries=max_retries)
        try:
            first = execute_agent_sync(agent, "one", client=client)
            second = execute_agent_sync(agent, "two", client=client)
            with stream_agent_sync(agent, "three", client=client) as run:
                kinds = [event.kind for event in run]
            [fourth] = execute_many_sync(agent, ["four"], client=client)
        finally:
            run_blocking(client.close())
        assert [first.ok, second.ok, run.result.ok, fourth.result.ok] == [True, True, True, True]
        assert kinds[-1] == "finished"
        assert server.requests_served == 4
        assert [request["messages"][0]["content"] for request in server.requests] == ["one", "two", "three", "four"]


def test_sync_wrappers_reuse_a_client_from_another_thread() -> None:
    """A client used by execute_agent_sync in one thread serves the next call from another thread too."""
    agent = triage_agent()
    results: list[bool] = []
    with FakeAnthropicServer([output_call(GOOD)] * 2) as server:
        client = server.client(keep_alive=True, max_retries=0)
        try:
            results.append(execute_agent_sync(agent, "one", client=client).ok)
            worker = threading.Thread(target=lambda: results.append(execute_agent_sync(agent, "two", client=client).ok))
            worker.start()
            worker.join()
        finally:
            run_blocking(client.close())
        assert results == [True, True]
        assert server.requests_served == 2


def test_sync_ctrl_c_cancels_the_execution_and_raises_keyboard_interrupt() -> None:
    """SIGINT while execute_agent_sync waits raises KeyboardInterrupt in the caller once the execution is cancelled."""
    ended: list[str] = []

    @tool
    async def slow() -> str:
        """Sleeps 5 s."""
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise
        return "late"

    client = ScriptedClient([tool_call("slow"), output_call(GOOD)])
    timer = threading.Timer(0.3, os.kill, args=(os.getpid(), signal.SIGINT))
    timer.start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        execute_agent_sync(triage_agent(helpers=[slow]), "go", client=client)
    timer.join()
    assert time.monotonic() - started < 2
    assert ended == ["cancelled"]

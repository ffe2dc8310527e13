"""``stream_agent_sync``: the events of an execution as a blocking iterator, for code with no event loop."""

from __future__ import annotations

import threading
import time

import pytest
from support import GOOD, triage_agent

from typedagent import AgentErrorCode, PartialOutput, stream_agent_sync
from typedagent.testing import ScriptedClient, ScriptError, delay, output_call, text


def test_stream_agent_sync_yields_events_then_the_result() -> None:
    """The sync stream yields the same kinds of events and ends with the result."""
    with stream_agent_sync(triage_agent(), "go", client=ScriptedClient([output_call(GOOD)])) as run:
        events = list(run)
    assert events[0].kind == "attempt_started"
    assert events[-1].kind == "finished"
    assert any(isinstance(event, PartialOutput) for event in events)
    assert run.result.ok is True
    assert run.result.output == GOOD


def test_stream_agent_sync_leaving_early_cancels_and_returns_promptly() -> None:
    """Leaving the with block mid-stream cancels the execution and joins its thread at once."""
    client = ScriptedClient([text("thinking out loud"), delay(5, output_call(GOOD))])
    started = time.monotonic()
    with stream_agent_sync(triage_agent(), "go", client=client) as run:
        for event in run:
            if event.kind == "text_delta":
                break
    assert time.monotonic() - started < 2
    assert not any(thread.name == "typedagent-stream" for thread in threading.enumerate())
    with pytest.raises(RuntimeError, match="no result yet"):
        _ = run.result


def test_stream_agent_sync_abort_event_ends_the_stream() -> None:
    """A threading.Event set from outside ends the streamed execution with EXECUTION_CANCELLED."""
    stop = threading.Event()
    client = ScriptedClient([delay(5, output_call(GOOD))])
    threading.Timer(0.2, stop.set).start()
    with stream_agent_sync(triage_agent(), "go", client=client, abort_event=stop) as run:
        kinds = [event.kind for event in run]
    assert kinds[-1] == "finished"
    assert run.result.ok is False
    assert run.result.error.code is AgentErrorCode.EXECUTION_CANCELLED


def test_stream_agent_sync_raises_programming_errors() -> None:
    """A script that cannot answer raises its ScriptError from the iteration."""
    with pytest.raises(ScriptError), stream_agent_sync(triage_agent(), "go", client=ScriptedClient([])) as run:
        list(run)


def test_stream_agent_sync_close_before_start_does_nothing() -> None:
    """Closing a sync stream that never started is harmless; iterating it without `with` starts it."""
    stream = stream_agent_sync(triage_agent(), "go", client=ScriptedClient([output_call(GOOD)]))
    stream.close()
    assert [event.kind for event in stream][-1] == "finished"
    stream.close()
    assert stream.result.ok is True


async def test_stream_agent_sync_refuses_a_running_event_loop() -> None:
    """Inside a running event loop, stream_agent_sync says to use stream_agent instead."""
    with pytest.raises(RuntimeError, match="async with stream_agent"):
        stream_agent_sync(triage_agent(), "go", client=ScriptedClient([output_call(GOOD)]))


def test_stream_agent_sync_passes_deps() -> None:
    """Deps reach the execution as with execute_agent_sync."""
    agent = triage_agent(instructions=lambda ctx: f"Customer tier: {ctx.deps}", deps_type=str)
    client = ScriptedClient([output_call(GOOD)])
    with stream_agent_sync(agent, "go", deps="gold", client=client) as run:
        list(run)
    assert run.result.ok is True
    assert client.requests[0]["system"].startswith("Customer tier: gold")


def test_stream_agent_sync_slow_consumer_keeps_only_the_newest_partial() -> None:
    """A consumer thread that lags gets every other event, but not one snapshot of the output per streamed piece."""
    from support import Triage

    from typedagent import ExecuteCallbacks, ToolInputDelta

    long = Triage(severity=3, summary="The VPN drops every hour for all users on the third floor. " * 20)
    validated = threading.Event()
    callbacks = ExecuteCallbacks(on_tool_result=lambda state, event: validated.set())
    events = []
    with stream_agent_sync(
        triage_agent(), "go", client=ScriptedClient([output_call(long)]), callbacks=callbacks
    ) as run:
        for event in run:
            events.append(event)
            if len(events) == 1:
                validated.wait(timeout=30)  # the consumer falls behind the whole response
                time.sleep(0.2)
    assert run.result.ok is True
    pieces = [event.partial_json for event in events if isinstance(event, ToolInputDelta)]
    assert len(pieces) > 70  # every piece of the input arrives
    partials = [event for event in events if isinstance(event, PartialOutput)]
    assert 1 <= len(partials) < 10  # not one per piece (over 70 before the backlog)
    assert partials[-1].raw == long.model_dump()

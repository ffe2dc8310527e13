"""``stream_agent``: the events of an execution as they happen, then the same result as ``execute_agent``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from support import GOOD, Triage, assert_api_valid, reflecting, triage_agent

from typedagent import (
    AgentErrorCode,
    AgentStreamEvent,
    AttemptStarted,
    ExecuteCallbacks,
    ExecutionState,
    Finished,
    PartialOutput,
    ReflectionPreview,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallFinished,
    ToolCallStarted,
    ToolInputDelta,
    ValidationFailed,
    execute_agent,
    stream_agent,
    tool,
)
from typedagent.testing import (
    FakeAnthropicServer,
    ScriptedClient,
    ScriptError,
    output_call,
    response,
    submit_call,
    text,
    thinking,
    tool_call,
)


@tool
def lookup(q: str) -> str:
    """Look a ticket up."""
    return f"ticket about {q}"


def script() -> list[Any]:
    """Think, say something, look up, hand over an invalid output, then a valid one."""
    return [
        response(thinking("The user wants triage."), text("Looking that up."), tool_call("lookup", {"q": "vpn"})),
        tool_call("final_output", {"severity": 9, "summary": "too severe"}),
        output_call(GOOD),
    ]


async def _events(client: Any, **kwargs: Any) -> tuple[list[AgentStreamEvent[Triage]], Any]:
    async with stream_agent(triage_agent(helpers=[lookup]), "VPN drops", client=client, **kwargs) as run:
        events = [event async for event in run]
    return events, run.result


async def test_stream_agent_yields_the_execution_events_in_order() -> None:
    """Attempts, thinking and text deltas, tool calls, validation failure and the final result arrive in order."""
    client = ScriptedClient(script())
    events, result = await _events(client)
    kinds = [event.kind for event in events]
    firsts = list(dict.fromkeys(kinds))
    assert firsts == [
        "attempt_started",
        "thinking_delta",
        "text_delta",
        "tool_input_delta",
        "tool_call_started",
        "tool_call_finished",
        "partial_output",
        "validation_failed",
        "finished",
    ]
    assert "".join(e.thinking for e in events if isinstance(e, ThinkingDelta)) == "The user wants triage."
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Looking that up."
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert (started[0].name, started[0].tool_kind, started[0].input) == ("lookup", "helper", {"q": "vpn"})
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished[0].result == "ticket about vpn"
    assert finished[0].duration_ms >= 0
    failed = [e for e in events if isinstance(e, ValidationFailed)]
    assert failed[0].outcome is AgentErrorCode.VALIDATION_FAILED
    assert failed[0].candidate == {"severity": 9, "summary": "too severe"}
    assert any("less than or equal to 5" in problem for problem in failed[0].problems)
    assert [e.attempt for e in events if isinstance(e, AttemptStarted)] == [1, 2]
    last = events[-1]
    assert isinstance(last, Finished)
    assert last.result is result
    assert result.ok is True
    assert result.output == GOOD
    assert_api_valid(result, client)


async def test_stream_agent_result_matches_execute_agent() -> None:
    """The streamed execution's result and conversation are those of execute_agent on the same script."""
    plain = await execute_agent(triage_agent(helpers=[lookup]), "VPN drops", client=ScriptedClient(script()))
    _, streamed = await _events(ScriptedClient(script()))
    assert streamed.ok is True
    assert plain.ok is True
    assert streamed.output == plain.output
    assert streamed.metadata.messages == plain.metadata.messages
    assert streamed.metadata.tokens == plain.metadata.tokens


async def test_stream_agent_partial_outputs_fill_in_field_by_field() -> None:
    """PartialOutput snapshots show the fields written so far, the string growing, ending with the full output."""
    long = Triage(severity=3, summary="The VPN drops every hour for all users on the third floor")
    events, result = await _events(ScriptedClient([output_call(long)]))
    partials = [e for e in events if isinstance(e, PartialOutput)]
    assert len(partials) > 3
    shown = [p.partial for p in partials]
    assert shown[0] is not None
    assert shown[0].get(lambda t: t.severity) == 3
    first_summary = shown[0].get(lambda t: t.summary)
    assert first_summary is None or long.summary.startswith(first_summary)
    summaries = [summary for s in shown if s is not None and (summary := s.get(lambda t: t.summary)) is not None]
    assert summaries == sorted(summaries, key=len)
    assert all(long.summary.startswith(summary) for summary in summaries)
    assert summaries[-1] == long.summary
    assert partials[-1].raw == long.model_dump()
    assert result.ok is True


async def test_stream_agent_partial_output_leaves_out_fields_of_the_wrong_type() -> None:
    """A field whose value does not fit its type is None in the partial; the raw input still shows it."""
    client = ScriptedClient([tool_call("final_output", {"severity": "high", "summary": "x"}), output_call(GOOD)])
    events, _ = await _events(client)
    first = next(e for e in events if isinstance(e, PartialOutput) and "summary" in e.raw)
    assert first.raw["severity"] == "high"
    assert first.partial is not None
    assert first.partial.get(lambda t: t.severity) is None
    assert first.partial.get(lambda t: t.summary) == "x"


async def test_stream_agent_reflection_previews_arrive() -> None:
    """In reflection mode, each output call's preview is an event before the model submits."""
    agent = triage_agent(output=reflecting())
    async with stream_agent(agent, "go", client=ScriptedClient([output_call(GOOD), submit_call()])) as run:
        previews = [event async for event in run if isinstance(event, ReflectionPreview)]
    assert [p.preview for p in previews] == ["severity 2: VPN drops hourly"]
    assert run.result.ok is True


async def test_stream_agent_keeps_the_callbacks() -> None:
    """Callbacks passed to stream_agent fire as they do for execute_agent."""
    seen: list[str] = []

    def on_call(state: ExecutionState, event: ToolCall) -> None:
        seen.append(event.name)

    callbacks = ExecuteCallbacks(on_tool_call=on_call)
    await _events(ScriptedClient(script()), callbacks=callbacks)
    assert seen == ["lookup", "final_output", "final_output"]


async def test_stream_agent_events_are_copies() -> None:
    """Changing a ToolCallStarted input changes nothing in the run's conversation."""
    async with stream_agent(triage_agent(helpers=[lookup]), "go", client=ScriptedClient(script())) as run:
        async for event in run:
            if isinstance(event, ToolCallStarted):
                event.input["q"] = "changed"
    assert "changed" not in str(run.result.metadata.messages)


async def test_stream_agent_over_http_streams_every_call() -> None:
    """Through the real SDK and the fake server, every request streams and the same events arrive."""
    with FakeAnthropicServer(script()) as server:
        events, result = await _events(server.client())
    assert all(request["stream"] is True for request in server.requests)
    assert [e.kind for e in events if e.kind in ("attempt_started", "validation_failed", "finished")] == [
        "attempt_started",
        "validation_failed",
        "attempt_started",
        "finished",
    ]
    assert any(isinstance(e, ToolInputDelta) for e in events)
    assert result.ok is True


async def test_stream_agent_leaving_early_cancels_the_execution() -> None:
    """Leaving the block before Finished cancels the execution; the result is then not available."""
    client = ScriptedClient(script())
    async with stream_agent(triage_agent(helpers=[lookup]), "go", client=client) as run:
        async for event in run:
            if event.kind == "text_delta":
                break
    await asyncio.sleep(0.05)
    assert len(client.requests) == 1
    with pytest.raises(RuntimeError, match="no result yet"):
        _ = run.result


async def test_stream_agent_programming_errors_propagate() -> None:
    """A script that runs out raises its ScriptError from the iteration, as execute_agent raises it."""
    with pytest.raises(ScriptError):
        await _events(ScriptedClient([]))


async def test_stream_agent_checks_arguments_at_the_call() -> None:
    """Wrong argument types raise TypeError when stream_agent is called, before anything runs."""
    with pytest.raises(TypeError):
        stream_agent(triage_agent(), 42)  # type: ignore[call-overload]


async def test_stream_agent_nested_execution_does_not_stream_into_the_parent() -> None:
    """An agent run inside a tool does not send its events to the outer stream."""
    inner_client = ScriptedClient([output_call(GOOD)])

    @tool
    async def delegate() -> str:
        """Ask a sub-agent."""
        inner = await execute_agent(triage_agent(), "sub", client=inner_client)
        return "ok" if inner.ok else "failed"

    client = ScriptedClient([tool_call("delegate"), output_call(GOOD)])
    async with stream_agent(triage_agent(helpers=[delegate]), "go", client=client) as run:
        events = [event async for event in run]
    assert sum(1 for e in events if isinstance(e, AttemptStarted)) == 1
    assert "stream" not in inner_client.requests[0]
    assert run.result.ok is True


async def test_stream_agent_is_entered_once_and_iterated_inside() -> None:
    """A stream iterated outside its block, or entered twice, says what to do instead."""
    stream = stream_agent(triage_agent(), "go", client=ScriptedClient([output_call(GOOD), output_call(GOOD)]))
    with pytest.raises(RuntimeError, match="inside `async with"):
        async for _ in stream:
            pass
    async with stream as run:
        async for _ in run:
            pass
    with pytest.raises(RuntimeError, match="entered once"):
        await stream.__aenter__()


async def test_stream_agent_passes_deps() -> None:
    """Deps reach the execution as with execute_agent (here, the instructions built from them)."""
    agent = triage_agent(instructions=lambda ctx: f"Customer tier: {ctx.deps}", deps_type=str)
    client = ScriptedClient([output_call(GOOD)])
    async with stream_agent(agent, "go", deps="gold", client=client) as run:
        async for _ in run:
            pass
    assert run.result.ok is True
    assert client.requests[0]["system"].startswith("Customer tier: gold")


LONG = Triage(severity=3, summary="The VPN drops every hour for all users on the third floor. " * 20)


async def test_stream_agent_slow_consumer_gets_every_delta_and_only_the_newest_partial() -> None:
    """While the consumer lags, a new PartialOutput of a call replaces its unread one; every other event is kept.

    A consumer that reads nothing while the output streams in would otherwise hold one snapshot of the whole
    output so far per streamed piece: memory growing with the square of the output (bench_stream_memory.py).
    """
    streamed_in = asyncio.Event()
    callbacks = ExecuteCallbacks(on_tool_call=lambda state, event: streamed_in.set())
    events: list[AgentStreamEvent[Triage]] = []
    agent = triage_agent()
    async with stream_agent(agent, "VPN drops", client=ScriptedClient([output_call(LONG)]), callbacks=callbacks) as run:
        async for event in run:
            events.append(event)
            if len(events) == 1:
                await streamed_in.wait()  # the consumer falls behind the whole response
    assert run.result.ok is True
    deltas = [event for event in events if isinstance(event, ToolInputDelta)]
    assert json.loads("".join(delta.partial_json for delta in deltas)) == LONG.model_dump()  # every piece, in order
    partials = [event for event in events if isinstance(event, PartialOutput)]
    assert len(partials) == 1  # the newest snapshot only, of the whole input
    assert partials[0].raw == LONG.model_dump()
    assert events.index(partials[0]) > events.index(deltas[-1])  # after the pieces it includes
    assert [type(event).__name__ for event in events[-2:]] == ["ToolCallFinished", "Finished"]


async def test_stream_agent_fast_consumer_still_gets_a_partial_per_piece() -> None:
    """A consumer that keeps up sees every snapshot: the backlog only drops what was never read."""
    events, _ = await _events(ScriptedClient([output_call(LONG)]))
    deltas = [event for event in events if isinstance(event, ToolInputDelta) and event.name == "final_output"]
    partials = [event for event in events if isinstance(event, PartialOutput)]
    assert len(partials) == len([delta for delta in deltas if delta.partial_json])


def test_stream_backlog_keeps_one_unread_partial_per_call_and_every_other_event() -> None:
    """Snapshots of two calls are replaced per call; deltas and other events stay, in order."""
    from typedagent._streaming.backlog import Backlog

    def partial(use_id: str, text: str) -> PartialOutput[Triage]:
        return PartialOutput(attempt=1, iteration=1, id=use_id, partial=None, raw={"summary": text})

    def delta(use_id: str, text: str) -> ToolInputDelta:
        return ToolInputDelta(attempt=1, iteration=1, id=use_id, name="final_output", partial_json=text)

    backlog: Backlog[AgentStreamEvent[Triage]] = Backlog()
    sent = [delta("a", "1"), partial("a", "1"), delta("b", "x"), partial("b", "x"), delta("a", "2"), partial("a", "12")]
    for event in sent:
        backlog.put(event)
    first = backlog.pop()
    assert first == sent[0]
    backlog.put(partial("b", "xy"))  # replaces b's unread snapshot
    read = []
    while (event := backlog.pop()) is not None:
        read.append(event)
    assert read == [sent[2], sent[4], sent[5], partial("b", "xy")]
    backlog.put(partial("a", "123"))  # read ones are never touched: a new snapshot simply waits
    assert backlog.pop() == partial("a", "123")
    assert backlog.pop() is None

"""Spans and log lines of a paused and resumed execution: one span per segment, each later one linked to the first."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from support import GOOD, triage_agent

from typedagent import Approve, ExecutePaused, ExternalResult, execute_agent, tool
from typedagent.testing import ScriptedClient, output_call, tool_call


@tool(requires_approval=True)
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool(external=True)
def ask_user(question: str) -> str:
    """Ask the user."""
    ...


AGENT = triage_agent(helpers=[delete, ask_user])


async def _three_segments() -> tuple[ExecutePaused, ExecutePaused, Any]:
    client = ScriptedClient(
        [tool_call("delete", {"path": "/a"}), tool_call("ask_user", {"question": "ok?"}), output_call(GOOD)]
    )
    first = await execute_agent(AGENT, "Ticket", client=client, pausable=True)
    assert isinstance(first, ExecutePaused)
    second = await execute_agent(AGENT, resume=first.state, decisions={first.pending[0].id: Approve()}, client=client)
    assert isinstance(second, ExecutePaused)
    decisions = {second.pending[0].id: ExternalResult("yes")}
    third = await execute_agent(AGENT, resume=second.state, decisions=decisions, client=client)
    return first, second, third


async def test_tracing_pausing_each_segment_has_its_span_linked_to_the_first(
    captured_spans: InMemorySpanExporter,
) -> None:
    """Three segments, three ``invoke_agent`` spans in three traces; the later two link to the first's span."""
    first, _, third = await _three_segments()
    assert third.ok
    spans = [span for span in captured_spans.get_finished_spans() if span.name.startswith("invoke_agent")]
    assert len(spans) == 3
    contexts = [span.get_span_context() for span in spans]
    assert len({context.trace_id for context in contexts}) == 3
    assert list(spans[0].links) == []
    for later in spans[1:]:
        (link,) = later.links
        assert (link.context.trace_id, link.context.span_id) == (contexts[0].trace_id, contexts[0].span_id)
        assert later.attributes is not None
        assert later.attributes["typedagent.resumed"] is True
    assert [span.attributes["typedagent.pauses"] for span in spans] == [1, 2, 2]  # type: ignore[index]
    conversation_ids = {span.attributes["gen_ai.conversation.id"] for span in spans}  # type: ignore[index]
    assert conversation_ids == {first.state.id}


async def test_tracing_pausing_marks_the_pause_and_the_resume(captured_spans: InMemorySpanExporter) -> None:
    """A paused segment ends with outcome ``paused`` (not an error) and a ``typedagent.pause`` event."""
    await _three_segments()
    first, second, third = [s for s in captured_spans.get_finished_spans() if s.name.startswith("invoke_agent")]
    assert first.attributes is not None
    assert first.attributes["typedagent.outcome"] == "paused"
    assert first.status.status_code is StatusCode.UNSET
    (pause,) = [event for event in first.events if event.name == "typedagent.pause"]
    assert pause.attributes is not None
    assert pause.attributes["typedagent.pending.names"] == ("delete",)
    assert pause.attributes["typedagent.pending.kinds"] == ("approval",)
    assert [event.name for event in second.events if event.name.startswith("typedagent.")][:2] == [
        "typedagent.resume",
        "typedagent.pause",
    ]
    assert third.attributes is not None
    assert third.attributes["typedagent.outcome"] == "success"
    assert third.attributes["typedagent.pauses"] == 2


async def test_tracing_pausing_log_line_says_paused(caplog: pytest.LogCaptureFixture) -> None:
    """The INFO line of a paused segment says it paused; the last segment's says it finished."""
    with caplog.at_level(logging.INFO, logger="typedagent"):
        await _three_segments()
    messages = [record.getMessage() for record in caplog.records if record.name == "typedagent"]
    assert [message.split(":")[0] for message in messages] == [
        "agent 'triage' paused",
        "agent 'triage' paused",
        "agent 'triage' finished",
    ]
    assert messages[0].startswith("agent 'triage' paused: paused after 0 attempt(s), 1 iteration(s)")


async def test_tracing_pausing_a_state_without_a_usable_trace_context_still_resumes(
    captured_spans: InMemorySpanExporter,
) -> None:
    """A state whose trace context is malformed (edited, or written by another tracer) resumes unlinked."""
    import json

    from typedagent import PausedState

    client = ScriptedClient([tool_call("delete", {"path": "/a"}), output_call(GOOD)])
    first = await execute_agent(AGENT, "Ticket", client=client, pausable=True)
    assert isinstance(first, ExecutePaused)
    data = json.loads(first.state.to_json())
    assert data["trace"].startswith("00-")
    data["trace"] = "00-not-hex-01"
    state = PausedState.from_json(json.dumps(data))
    result = await execute_agent(AGENT, resume=state, decisions={first.pending[0].id: Approve()}, client=client)
    assert result.ok
    resumed = [span for span in captured_spans.get_finished_spans() if span.name.startswith("invoke_agent")][-1]
    assert list(resumed.links) == []

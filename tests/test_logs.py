"""The ``typedagent`` logger: an INFO line per finished execution, DEBUG lines per iteration and tool call."""

from __future__ import annotations

import logging

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from support import GOOD, run, triage_agent

from typedagent import ExecutionLimits, execute_agent, tool
from typedagent.testing import (
    FakeAnthropicServer,
    ScriptedClient,
    api_error,
    delay,
    output_call,
    response,
    tool_call,
)


@tool
async def lookup(query: str) -> str:
    """Look up a ticket."""
    return f"found {query}"


def _script() -> ScriptedClient:
    return ScriptedClient([response(tool_call("lookup", {"query": "a"})), response(output_call(GOOD))])


async def test_logs_info_line_per_finished_execution(caplog: pytest.LogCaptureFixture) -> None:
    """One INFO record per execution naming agent, outcome, attempts, iterations, tokens and latency."""
    caplog.set_level(logging.INFO, logger="typedagent")
    result = await run(triage_agent(helpers=[lookup]), _script())
    infos = [record for record in caplog.records if record.levelno == logging.INFO and record.name == "typedagent"]
    assert len(infos) == 1
    record = infos[0]
    message = record.getMessage()
    assert message.startswith("agent 'triage' finished: success after 1 attempt(s), 2 iteration(s), 30 tokens")
    assert record.__dict__["typedagent_outcome"] == "success"
    assert record.__dict__["typedagent_tokens"] == result.metadata.tokens.total
    assert record.__dict__["typedagent_latency_ms"] == pytest.approx(result.metadata.latency_ms)
    assert "trace_id" not in record.__dict__


async def test_logs_failure_names_the_code(caplog: pytest.LogCaptureFixture) -> None:
    """A failed execution's INFO line names its AgentErrorCode."""
    caplog.set_level(logging.INFO, logger="typedagent")
    await run(triage_agent(), ScriptedClient([api_error(400)]))
    assert "finished: API_ERROR after 1 attempt(s)" in caplog.text


async def test_logs_debug_per_iteration_and_tool(caplog: pytest.LogCaptureFixture) -> None:
    """At DEBUG each model call and each tool call has its own line."""
    caplog.set_level(logging.DEBUG, logger="typedagent")
    await run(triage_agent(helpers=[lookup]), _script())
    debug = [record.getMessage() for record in caplog.records if record.levelno == logging.DEBUG]
    assert [line.split(" in ")[0] for line in debug] == [
        "agent 'triage' attempt 1 iteration 1: stop_reason tool_use",
        "agent 'triage' tool 'lookup' (helper): ok",
        "agent 'triage' attempt 1 iteration 2: stop_reason tool_use",
        "agent 'triage' tool 'final_output' (output): ok",
    ]


async def test_logs_carry_trace_and_span_ids(
    caplog: pytest.LogCaptureFixture, captured_spans: InMemorySpanExporter
) -> None:
    """With a tracer provider the lines carry the ids of the span they describe."""
    caplog.set_level(logging.DEBUG, logger="typedagent")
    await run(triage_agent(helpers=[lookup]), _script())
    spans = {span.name: span for span in captured_spans.get_finished_spans()}
    agent = spans["invoke_agent triage"]
    tool_span = spans["execute_tool lookup"]
    assert agent.context is not None
    assert tool_span.context is not None
    info = next(record for record in caplog.records if record.levelno == logging.INFO)
    assert info.__dict__["trace_id"] == format(agent.context.trace_id, "032x")
    assert info.__dict__["span_id"] == format(agent.context.span_id, "016x")
    assert f"trace_id={info.__dict__['trace_id']}" in info.getMessage()
    tool_line = next(record for record in caplog.records if "tool 'lookup'" in record.getMessage())
    assert tool_line.__dict__["span_id"] == format(tool_span.context.span_id, "016x")


async def test_logs_debug_names_failed_and_interrupted_calls(caplog: pytest.LogCaptureFixture) -> None:
    """A failed model call and one the deadline interrupted say so on their DEBUG lines."""
    caplog.set_level(logging.DEBUG, logger="typedagent")
    await run(triage_agent(), ScriptedClient([api_error(400)]))
    await run(
        triage_agent(), ScriptedClient([delay(5, response(output_call(GOOD)))]), limits=ExecutionLimits(timeout_s=0.05)
    )
    lines = [record.getMessage() for record in caplog.records if record.levelno == logging.DEBUG]
    assert any("iteration 1: failed (invalid_request_error)" in line for line in lines)
    assert any("iteration 1: interrupted (timeout)" in line for line in lines)


async def test_logs_warning_for_a_callback_that_raises(caplog: pytest.LogCaptureFixture) -> None:
    """A callback that raises is a WARNING naming the agent, the hook, the callback and the error; the run goes on."""
    from typedagent import ExecuteCallbacks, ExecutionState, ToolCall

    def audit(state: ExecutionState, event: ToolCall) -> None:
        raise ValueError(f"cannot audit {event.name}")

    caplog.set_level(logging.WARNING, logger="typedagent")
    result = await run(triage_agent(helpers=[lookup]), _script(), callbacks=ExecuteCallbacks(on_tool_call=audit))
    assert {record.name for record in caplog.records} == {"typedagent"}
    assert result.ok
    warnings = [record for record in caplog.records if record.levelno == logging.WARNING]
    assert [record.getMessage() for record in warnings] == [
        "agent 'triage': callback on_tool_call (test_logs_warning_for_a_callback_that_raises.<locals>.audit) raised "
        f"ValueError: cannot audit {name}; the execution goes on (recorded in metadata.callback_errors)"
        for name in ("lookup", "final_output")
    ]
    assert len(result.metadata.callback_errors) == 2


async def test_logs_model_call_lines_carry_the_trace_id_with_an_sdk_client(
    caplog: pytest.LogCaptureFixture, captured_spans: InMemorySpanExporter, fake_anthropic_server: FakeAnthropicServer
) -> None:
    """With an SDK client (whose own span traces the call), each model call's DEBUG line carries the trace id."""
    caplog.set_level(logging.DEBUG, logger="typedagent")
    fake_anthropic_server.add(response(tool_call("lookup", {"query": "a"})), response(output_call(GOOD)))
    client = fake_anthropic_server.client()
    assert (await execute_agent(triage_agent(helpers=[lookup]), "go", client=client)).ok
    spans = captured_spans.get_finished_spans()
    [agent] = [span for span in spans if span.name == "invoke_agent triage"]
    calls = [span for span in spans if span.name == "anthropic.messages.create"]
    assert agent.context is not None
    assert len(calls) == 2
    lines = [record for record in caplog.records if " iteration " in record.getMessage()]
    assert len(lines) == 2
    trace_id = format(agent.context.trace_id, "032x")
    assert [line.__dict__.get("trace_id") for line in lines] == [trace_id, trace_id]
    assert all(f"trace_id={trace_id}" in line.getMessage() for line in lines)
    assert [line.__dict__["span_id"] for line in lines] == [format(agent.context.span_id, "016x")] * 2

"""Callbacks (SPEC §5): sync and async hooks, their order, their arguments, and contained failures."""

from __future__ import annotations

import asyncio

from support import GOOD, reflecting, run, triage_agent

from typedagent import (
    AttemptOutcome,
    AttemptStart,
    ExecuteCallbacks,
    ExecutionState,
    ModelResponse,
    ToolCall,
    ToolResult,
    ValidationConfig,
    ValidationFailure,
    tool,
)
from typedagent.testing import ScriptedClient, output_call, response, submit_call, tool_call


@tool
async def lookup(query: str) -> str:
    """Look up."""
    return f"found {query}"


async def test_callbacks_order_and_arguments() -> None:
    """Hooks fire in loop order with typed state and event objects; sync and async hooks both work."""
    log: list[str] = []
    states: list[ExecutionState] = []

    def on_attempt_start(state: ExecutionState, event: AttemptStart) -> None:
        log.append(f"attempt {event.attempt}/{event.max_attempts}")

    async def on_model_response(state: ExecutionState, event: ModelResponse) -> None:
        await asyncio.sleep(0)
        states.append(state)
        log.append(f"response {event.stop_reason} {event.usage.total}")

    def on_tool_call(state: ExecutionState, event: ToolCall) -> None:
        log.append(f"call {event.kind} {event.name} {event.input}")

    async def on_tool_result(state: ExecutionState, event: ToolResult) -> None:
        log.append(f"result {event.name} <{event.content}> error={event.is_error}")

    def on_validation_failure(state: ExecutionState, event: ValidationFailure) -> None:
        log.append(f"failure {event.attempt} {event.outcome} {event.errors} {event.candidate}")

    callbacks = ExecuteCallbacks(
        on_attempt_start=on_attempt_start,
        on_model_response=on_model_response,
        on_tool_call=on_tool_call,
        on_tool_result=on_tool_result,
        on_validation_failure=on_validation_failure,
    )
    client = ScriptedClient(
        [
            response(tool_call("lookup", {"query": "vpn"}), tool_call("nope", unknown=True)),
            output_call({"severity": 8, "summary": "s"}),
            output_call(GOOD),
        ]
    )
    result = await run(triage_agent(helpers=[lookup]), client, callbacks=callbacks)
    assert result.ok
    assert log == [
        "attempt 1/3",
        "response tool_use 15",
        "call helper lookup {'query': 'vpn'}",
        "call unknown nope {}",
        "result lookup <found vpn> error=False",
        "result nope <Error: Unknown tool nope> error=True",
        "response tool_use 15",
        "call output final_output {'severity': 8, 'summary': 's'}",
        "result final_output <Error: output rejected. Fix every problem below and call 'final_output' again "
        "with a corrected output:\n- severity: Input should be less than or equal to 5> error=True",
        "failure 1 VALIDATION_FAILED ('severity: Input should be less than or equal to 5',) "
        "{'severity': 8, 'summary': 's'}",
        "attempt 2/3",
        "response tool_use 15",
        "call output final_output {'severity': 2, 'summary': 'VPN drops hourly'}",
        "result final_output <Output accepted.> error=False",
    ]
    assert [(s.agent_name, s.attempt, s.iteration, s.tokens.total) for s in states] == [
        ("triage", 1, 1, 15),
        ("triage", 1, 2, 30),
        ("triage", 2, 1, 45),
    ]
    assert all(s.elapsed_ms >= 0 for s in states)
    assert {s.key for s in states} == {None}  # only execute_many runs an execution for a keyed input


async def test_callbacks_fire_for_submit_and_reflection() -> None:
    """on_tool_call and on_tool_result fire for output and submit calls in reflection mode too."""
    events: list[tuple[str, str]] = []
    callbacks = ExecuteCallbacks(
        on_tool_call=lambda s, e: events.append(("call", e.kind)),
        on_tool_result=lambda s, e: events.append(("result", e.content)),
    )
    client = ScriptedClient([response(output_call(GOOD), submit_call())])
    await run(triage_agent(output=reflecting()), client, callbacks=callbacks)
    assert events == [
        ("call", "output"),
        ("call", "submit"),
        ("result", "severity 2: VPN drops hourly"),
        ("result", "Output accepted."),
    ]


async def test_callbacks_exceptions_are_collected_and_run_goes_on() -> None:
    """A callback that raises is recorded in metadata.callback_errors; the execution continues."""

    def bad_call(state: ExecutionState, event: ToolCall) -> None:
        raise RuntimeError(f"logger down for {event.name}")

    async def bad_start(state: ExecutionState, event: AttemptStart) -> None:
        raise ValueError("")

    callbacks = ExecuteCallbacks(on_tool_call=bad_call, on_attempt_start=bad_start)
    result = await run(triage_agent(), ScriptedClient([output_call(GOOD)]), callbacks=callbacks)
    assert result.ok
    errors = result.metadata.callback_errors
    assert [(e.callback, e.error_type, e.message) for e in errors] == [
        (
            "on_attempt_start (test_callbacks_exceptions_are_collected_and_run_goes_on.<locals>.bad_start)",
            "ValueError",
            "",
        ),
        (
            "on_tool_call (test_callbacks_exceptions_are_collected_and_run_goes_on.<locals>.bad_call)",
            "RuntimeError",
            "logger down for final_output",
        ),
    ]
    assert str(errors[1]) == "logger down for final_output"


async def test_callbacks_tool_result_has_duration() -> None:
    """ToolResult.duration_ms measures the handler's run time."""
    durations: list[float] = []

    @tool
    async def nap() -> str:
        """Naps."""
        await asyncio.sleep(0.03)
        return "rested"

    callbacks = ExecuteCallbacks(on_tool_result=lambda s, e: durations.append(e.duration_ms))
    await run(triage_agent(helpers=[nap]), ScriptedClient([tool_call("nap"), output_call(GOOD)]), callbacks=callbacks)
    assert durations[0] >= 25
    assert len(durations) == 2


async def test_callbacks_validation_failure_for_text_reply() -> None:
    """on_validation_failure also fires for attempts that end without a candidate (text reply)."""
    failures: list[ValidationFailure] = []
    callbacks = ExecuteCallbacks(on_validation_failure=lambda s, e: failures.append(e))
    await run(triage_agent(), ScriptedClient(["plain text", output_call(GOOD)]), callbacks=callbacks)
    assert len(failures) == 1
    assert failures[0].outcome is AttemptOutcome.INVALID_RESPONSE
    assert failures[0].candidate is None


async def test_callbacks_fire_for_calls_that_are_not_run() -> None:
    """Calls in a cut-off response still fire on_tool_call and on_tool_result (with the error sent)."""
    events: list[tuple[str, str, bool]] = []
    callbacks = ExecuteCallbacks(
        on_tool_call=lambda s, e: events.append(("call", e.name, False)),
        on_tool_result=lambda s, e: events.append(("result", e.content, e.is_error)),
    )
    client = ScriptedClient(
        [response(tool_call("lookup", {"query": "x"}), stop_reason="max_tokens"), output_call(GOOD)]
    )
    await run(triage_agent(helpers=[lookup]), client, callbacks=callbacks)
    assert events[:2] == [
        ("call", "lookup", False),
        ("result", "Error: not run: the response was cut off at max_tokens.", True),
    ]


def _bad(severity: int) -> dict[str, object]:
    return {"severity": severity, "summary": "VPN drops hourly"}


async def test_callbacks_tool_call_input_is_a_copy() -> None:
    """Editing ``ToolCall.input`` in a callback changes neither what is validated nor what a helper gets."""
    seen: list[str] = []

    @tool
    async def echo(query: str) -> str:
        """Echo."""
        seen.append(query)
        return query

    def tamper(state: ExecutionState, event: ToolCall) -> None:
        event.input["severity"] = 999
        event.input["query"] = "tampered"

    client = ScriptedClient([tool_call("echo", {"query": "vpn"}), output_call(GOOD)])
    result = await run(triage_agent(helpers=[echo]), client, callbacks=ExecuteCallbacks(on_tool_call=tamper))
    assert result.output == GOOD
    assert seen == ["vpn"]
    assert result.metadata.callback_errors == ()
    assert client.requests[1]["messages"][1]["content"][0]["input"] == {"query": "vpn"}


async def test_callbacks_model_response_message_is_a_copy() -> None:
    """Editing ``ModelResponse.message`` (its blocks, their inputs, its stop reason) changes nothing in the run."""

    def tamper(state: ExecutionState, event: ModelResponse) -> None:
        block = event.message.content[0]
        assert block.type == "tool_use"
        block.input["severity"] = 999  # type: ignore[index]
        event.message.stop_reason = "refusal"
        event.message.content.append(event.message.content[0])

    client = ScriptedClient([output_call(GOOD)])
    result = await run(triage_agent(), client, callbacks=ExecuteCallbacks(on_model_response=tamper))
    assert result.output == GOOD
    assert result.metadata.callback_errors == ()
    assert [len(m["content"]) for m in result.metadata.messages[1:]] == [1, 1]
    assert result.metadata.messages[1]["content"][0]["input"] == GOOD.model_dump()  # type: ignore[index]


async def test_callbacks_validation_failure_candidate_is_a_copy() -> None:
    """Editing ``ValidationFailure.candidate`` changes neither the attempt record nor ``last_output``."""

    def tamper(state: ExecutionState, event: ValidationFailure) -> None:
        assert event.candidate is not None
        event.candidate["severity"] = 3

    client = ScriptedClient([output_call(_bad(9)), output_call(_bad(8))])
    agent = triage_agent(validation=ValidationConfig(max_attempts=2))
    result = await run(agent, client, callbacks=ExecuteCallbacks(on_validation_failure=tamper))
    assert not result.ok
    assert [a.candidate for a in result.metadata.attempts] == [_bad(9), _bad(8)]
    assert result.error.last_output == _bad(8)
    assert client.requests[1]["messages"][1]["content"][0]["input"] == _bad(9)


async def test_callbacks_frozen_events_and_state_cannot_be_changed() -> None:
    """AttemptStart, ToolResult and ExecutionState refuse assignment; the run goes on as if untouched."""

    def tamper(state: ExecutionState, event: object) -> None:
        for target, name, value in ((state, "attempt", 7), (event, "attempt", 7), (event, "content", "x")):
            if hasattr(target, name):
                setattr(target, name, value)

    callbacks = ExecuteCallbacks(on_attempt_start=tamper, on_tool_result=tamper)
    client = ScriptedClient([tool_call("lookup", {"query": "vpn"}), output_call(GOOD)])
    result = await run(triage_agent(helpers=[lookup]), client, callbacks=callbacks)
    assert result.output == GOOD
    assert [e.error_type for e in result.metadata.callback_errors] == ["FrozenInstanceError"] * 3
    assert [a.number for a in result.metadata.attempts] == [1]
    assert client.requests[1]["messages"][2]["content"][0]["content"] == "found vpn"

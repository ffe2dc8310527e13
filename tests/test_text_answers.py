"""Native and prompted modes in the loop: the turn-ending text is the answer, through the one validation pipeline."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from pydantic import BaseModel, Field, field_validator
from support import GOOD, Triage, run, triage_agent

from typedagent import (
    AgentErrorCode,
    ExecuteCallbacks,
    OutputRejected,
    OutputTool,
    ValidationConfig,
    define_agent,
    execute_agent,
    tool,
)
from typedagent._run.request import PROMPTED_SCHEMA_HEADING
from typedagent.testing import (
    ScriptedClient,
    conversation,
    output_call,
    response,
    submit_call,
    text,
    thinking,
    tool_call,
)

MODES = pytest.mark.parametrize("mode", ["native", "prompted"])
GOOD_JSON = '{"severity": 2, "summary": "VPN drops hourly"}'


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"found {query}"


def answering(mode: Any, **kwargs: Any) -> OutputTool[Triage]:
    """The output of the tests here, in ``mode``."""
    return OutputTool(Triage, mode=mode, **kwargs)


def user_text(message: dict[str, Any]) -> str:
    """The text of a user message made of text blocks."""
    return "".join(block["text"] for block in message["content"] if block["type"] == "text")


@MODES
async def test_text_answer_after_a_helper_is_the_output(mode: Any) -> None:
    """The model may call helpers first; the JSON text that ends its turn is the output, and the run ends there."""
    client = ScriptedClient([tool_call("lookup", {"query": "vpn"}), text(GOOD_JSON)])
    result = await run(triage_agent(output=answering(mode), helpers=[lookup]), client)
    assert result.ok is True
    assert result.output == GOOD
    assert [message["role"] for message in conversation(result)] == ["user", "assistant", "user", "assistant"]
    assert conversation(result)[-1]["content"] == [{"type": "text", "text": GOOD_JSON}]
    record = result.metadata.attempts[0]
    assert (record.outcome, record.candidate, record.iterations) == (AgentErrorCode.SUCCESS, GOOD.model_dump(), 2)


@MODES
async def test_text_answer_request_offers_helpers_and_chooses_nothing(mode: Any) -> None:
    """Every request offers the helpers with tool_choice auto (never forced: the answer is text)."""
    client = ScriptedClient([tool_call("lookup", {"query": "vpn"}), text(GOOD_JSON)])
    await run(triage_agent(output=answering(mode), helpers=[lookup]), client)
    for request in client.requests:
        assert [tool["name"] for tool in request["tools"]] == ["lookup"]
        assert request["tool_choice"] == {"type": "auto"}


@MODES
async def test_text_answer_without_tools_sends_neither_tools_nor_tool_choice(mode: Any) -> None:
    """An agent with no tool at all sends no ``tools`` and no ``tool_choice`` (the API refuses one without tools)."""
    client = ScriptedClient([text(GOOD_JSON)])
    assert (await run(triage_agent(output=answering(mode)), client)).ok is True
    assert "tools" not in client.requests[0]
    assert "tool_choice" not in client.requests[0]


async def test_native_request_sends_the_format_merged_with_output_config() -> None:
    """Native mode sends output_config.format (the transformed schema) beside the user's own output_config."""
    agent = triage_agent(output=answering("native"), model_settings={"output_config": {"effort": "low"}})
    client = ScriptedClient([text(GOOD_JSON)])
    await run(agent, client)
    sent = client.requests[0]["output_config"]
    assert sent["effort"] == "low"
    assert sent["format"]["type"] == "json_schema"
    assert sent["format"]["schema"]["additionalProperties"] is False
    assert sent["format"]["schema"]["required"] == ["severity", "summary"]
    assert PROMPTED_SCHEMA_HEADING not in client.requests[0]["system"]
    assert dict(agent.model_settings["output_config"]) == {"effort": "low"}  # the agent's settings are not changed


async def test_prompted_request_puts_the_schema_in_the_system_prompt() -> None:
    """Prompted mode sends no output_config; its system prompt asks for JSON and gives the schema with constraints."""
    agent = triage_agent(output=answering("prompted"), instructions="You triage tickets.")
    client = ScriptedClient([text(GOOD_JSON)])
    await run(agent, client)
    request = client.requests[0]
    assert "output_config" not in request
    system = request["system"]
    assert system.startswith("You triage tickets.\n\nAnswer with your result as one JSON object")
    assert "Write only the JSON: no text or Markdown fence before or after it." in system
    schema = json.loads(system.split(PROMPTED_SCHEMA_HEADING + "\n", 1)[1])
    assert schema["properties"]["severity"] == {"maximum": 5, "minimum": 1, "type": "integer"}


@MODES
async def test_text_answer_rejected_sends_every_problem_then_the_next_attempt(mode: Any) -> None:
    """Every problem of a rejected answer (schema, validators) goes back in a user message; the next attempt fixes."""

    def no_shouting(out: Triage) -> None:
        if out.summary.isupper():
            raise OutputRejected("do not shout")

    client = ScriptedClient([text('{"severity": 9, "summary": "VPN DOWN"}'), text(GOOD_JSON)])
    result = await run(triage_agent(output=answering(mode), validators=[no_shouting]), client)
    assert result.ok is True
    first = result.metadata.attempts[0]
    assert first.outcome is AgentErrorCode.VALIDATION_FAILED
    assert first.validation_errors == ("severity: Input should be less than or equal to 5",)
    assert first.candidate == {"severity": 9, "summary": "VPN DOWN"}
    assert user_text(conversation(result)[2]) == (
        "Error: output rejected. Fix every problem below and send the corrected output as one JSON object:\n"
        "- severity: Input should be less than or equal to 5"
    )

    client = ScriptedClient([text('{"severity": 3, "summary": "VPN DOWN"}'), text(GOOD_JSON)])
    result = await run(triage_agent(output=answering(mode), validators=[no_shouting]), client)
    assert result.metadata.attempts[0].validation_errors == ("do not shout",)


@MODES
async def test_text_answer_repairing_validator_replaces_the_output(mode: Any) -> None:
    """A validator that returns a value of the output type replaces it, as in tool mode."""

    def tidy(out: Triage) -> Triage:
        return out.model_copy(update={"summary": out.summary.strip()})

    client = ScriptedClient([text('{"severity": 2, "summary": "  VPN drops hourly "}')])
    result = await run(triage_agent(output=answering(mode), validators=[tidy]), client)
    assert result.ok is True
    assert result.output == GOOD
    assert result.metadata.attempts[0].candidate == {"severity": 2, "summary": "  VPN drops hourly "}


def sync_crash(out: Triage) -> None:
    raise KeyError("oops")


async def async_crash(out: Triage) -> None:
    raise KeyError("oops")


@MODES
@pytest.mark.parametrize("broken", [sync_crash, async_crash])
async def test_text_answer_crashing_validator_fails_the_execution(mode: Any, broken: Any) -> None:
    """A validator (sync, on a worker thread, or async) that raises anything else fails with VALIDATOR_ERROR."""
    result = await run(triage_agent(output=answering(mode), validators=[broken]), ScriptedClient([text(GOOD_JSON)]))
    assert result.ok is False
    assert result.error.code is AgentErrorCode.VALIDATOR_ERROR
    assert result.error.last_output == GOOD.model_dump()


@MODES
async def test_text_answer_that_is_not_json_is_a_validation_failure(mode: Any) -> None:
    """Truncated JSON, or prose with no JSON at all, is a problem told to the model, then the next attempt."""
    client = ScriptedClient([text('{"severity": 2, "summ'), text("It is a severity 2 VPN problem."), text(GOOD_JSON)])
    result = await run(triage_agent(output=answering(mode)), client)
    assert result.ok is True
    first, second, _ = result.metadata.attempts
    assert first.outcome is second.outcome is AgentErrorCode.VALIDATION_FAILED
    assert first.validation_errors[0].startswith("the answer is not valid JSON (Unterminated string")
    assert second.validation_errors == (
        "the answer holds no JSON object: send the output as one JSON object matching the schema",
    )
    assert first.candidate is second.candidate is None


@MODES
async def test_text_answer_in_a_fence_or_prose_is_found(mode: Any) -> None:
    """JSON in a Markdown fence or with prose around it is the answer."""
    client = ScriptedClient([text(f"Here is the triage:\n```json\n{GOOD_JSON}\n```\nLet me know.")])
    result = await run(triage_agent(output=answering(mode)), client)
    assert result.output == GOOD


@MODES
async def test_text_answer_cut_off_at_max_tokens_is_reported_as_such(mode: Any) -> None:
    """A max_tokens cut ends the attempt with MAX_TOKENS, and the model is told its answer was cut off."""
    client = ScriptedClient([response(text('{"severity": 2, "su'), stop_reason="max_tokens"), text(GOOD_JSON)])
    result = await run(triage_agent(output=answering(mode), max_tokens=300), client)
    assert result.ok is True
    assert result.metadata.attempts[0].outcome is AgentErrorCode.MAX_TOKENS
    assert user_text(conversation(result)[2]) == (
        "Your response was cut off at max_tokens (300), so your answer is incomplete JSON. Respond more briefly, "
        "with the complete output as one JSON object."
    )


@MODES
async def test_text_answer_every_attempt_cut_off_fails_with_max_tokens(mode: Any) -> None:
    """When the last attempt is cut off too, the failure's code is MAX_TOKENS."""
    cut = response(text('{"severity": 2, "su'), stop_reason="max_tokens")
    agent = triage_agent(output=answering(mode), validation=ValidationConfig(max_attempts=2))
    result = await run(agent, ScriptedClient([cut, cut]))
    assert result.ok is False
    assert result.error.code is AgentErrorCode.MAX_TOKENS


@MODES
async def test_text_answer_empty_turn_is_an_invalid_response(mode: Any) -> None:
    """A turn that ends with no text at all is INVALID_RESPONSE, with feedback asking for the JSON answer."""
    client = ScriptedClient([response(thinking("hmm")), text(GOOD_JSON)])
    result = await run(triage_agent(output=answering(mode)), client)
    assert result.metadata.attempts[0].outcome is AgentErrorCode.INVALID_RESPONSE
    assert (
        user_text(conversation(result)[2])
        == "You replied without an answer. Reply with your output as one JSON object."
    )


@MODES
async def test_text_beside_a_tool_call_is_not_the_answer(mode: Any) -> None:
    """Text in a response that calls a tool is ignored, JSON or not: only the turn-ending text is the output."""
    client = ScriptedClient(
        [
            response(text('{"severity": 1, "summary": "early guess"}'), tool_call("lookup", {"query": "vpn"})),
            text(GOOD_JSON),
        ]
    )
    result = await run(triage_agent(output=answering(mode), helpers=[lookup]), client)
    assert result.output == GOOD
    assert [record.iterations for record in result.metadata.attempts] == [2]


@MODES
async def test_text_answer_of_a_list_type_is_wrapped_and_unwrapped(mode: Any) -> None:
    """A non-object output is answered as {"value": ...} and unwrapped; a bare array is a problem, told how to wrap."""

    class Item(BaseModel):
        name: str
        qty: int = Field(ge=1)

    agent = triage_agent(output=OutputTool(list[Item], mode=mode))
    client = ScriptedClient([text('[{"name": "bolt", "qty": 4}]'), output_call([Item(name="bolt", qty=4)])])
    result = await execute_agent(agent, "Order", client=client)
    assert result.ok is True
    assert result.output == [Item(name="bolt", qty=4)]
    assert result.metadata.attempts[0].validation_errors == (
        'the answer is a JSON array, not an object: send the output as one JSON object whose "value" is the array',
    )
    assert conversation(result)[-1]["content"][0]["text"] == '{"value": [{"name": "bolt", "qty": 4}]}'


@MODES
async def test_text_answer_a_call_of_the_output_name_is_an_unknown_tool(mode: Any) -> None:
    """No output tool is offered: a call by its name is answered as unknown and the attempt goes on."""
    client = ScriptedClient([tool_call("final_output", GOOD.model_dump(), unknown=True), text(GOOD_JSON)])
    calls: list[str] = []
    callbacks = ExecuteCallbacks(on_tool_call=lambda state, call: calls.append(call.kind))
    result = await run(triage_agent(output=answering(mode)), client, callbacks=callbacks)
    assert result.ok is True
    assert calls == ["unknown"]
    assert conversation(result)[2]["content"][0]["content"] == "Error: Unknown tool final_output"


@MODES
async def test_text_answer_history_continues_from_a_native_run(mode: Any) -> None:
    """``metadata.messages`` of a text-answer run is a valid history for the next execution."""
    agent = triage_agent(output=answering(mode))
    first = await run(agent, ScriptedClient([text(GOOD_JSON)]))
    client = ScriptedClient([text('{"severity": 3, "summary": "worse"}')])
    second = await run(agent, client, prompt="And now?", message_history=first.metadata.messages)
    assert second.ok is True
    assert [message["role"] for message in client.requests[0]["messages"]] == ["user", "assistant", "user"]


# Reflection: the model sees its formatted candidate, sends a revised JSON answer or calls submit.


def reflecting_in(mode: Any) -> OutputTool[Triage]:
    """A text-mode output with a reflection handler."""
    return answering(mode, reflection_handler=lambda t: f"severity {t.severity}: {t.summary}")


@MODES
async def test_text_reflection_previews_each_answer_until_submit(mode: Any) -> None:
    """Each answer is previewed in a user message; a revised answer replaces the candidate; submit validates it."""
    revised = '{"severity": 3, "summary": "VPN drops hourly"}'
    client = ScriptedClient([text(GOOD_JSON), text(revised), submit_call()])
    result = await run(triage_agent(output=reflecting_in(mode)), client)
    assert result.ok is True
    assert result.output == Triage(severity=3, summary="VPN drops hourly")
    messages = conversation(result)
    assert user_text(messages[2]) == (
        "Preview of your answer:\n\nseverity 2: VPN drops hourly\n\nSend a revised JSON answer to change it, or call "
        "submit to have this answer validated."
    )
    assert user_text(messages[4]).startswith("Preview of your answer:\n\nseverity 3: VPN drops hourly")
    assert messages[6]["content"][0]["content"] == "Output accepted."
    assert [tool["name"] for tool in client.requests[0]["tools"]] == ["submit"]
    assert "Send a revised JSON answer to change it, and call `submit`" in client.requests[0]["system"]


@MODES
async def test_text_reflection_submit_rejection_names_the_json_answer(mode: Any) -> None:
    """A submitted candidate that fails a validator is rejected on the submit call, asking for corrected JSON."""

    def severe(out: Triage) -> None:
        if out.severity < 3:
            raise OutputRejected("severity must be at least 3")

    client = ScriptedClient(
        [text(GOOD_JSON), submit_call(), text('{"severity": 3, "summary": "VPN drops"}'), submit_call()]
    )
    result = await run(triage_agent(output=reflecting_in(mode), validators=[severe]), client)
    assert result.ok is True
    rejected = conversation(result)[4]["content"][0]
    assert rejected["is_error"] is True
    assert rejected["content"] == (
        "Error: output rejected. Fix every problem below and send the corrected output as one JSON object, then call "
        "submit:\n- severity must be at least 3"
    )


@MODES
async def test_text_reflection_schema_invalid_answer_is_not_kept(mode: Any) -> None:
    """An answer that fails the schema is not kept: the model is told why; submit then finds no candidate."""
    client = ScriptedClient([text('{"severity": 9, "summary": "x"}'), submit_call(), text(GOOD_JSON), submit_call()])
    result = await run(triage_agent(output=reflecting_in(mode)), client)
    assert result.ok is True
    first = result.metadata.attempts[0]
    assert first.outcome is AgentErrorCode.SUBMIT_BEFORE_OUTPUT
    assert first.validation_errors == (
        "Nothing to submit: send your output as one JSON object first (it must pass the schema), then call submit.",
        "severity: Input should be less than or equal to 5",
    )
    assert user_text(conversation(result)[2]) == (
        "Error: this answer does not match the output schema, so it was not kept:\n"
        "- severity: Input should be less than or equal to 5\n"
        "Fix these and send the corrected answer as one JSON object."
    )


@MODES
async def test_text_reflection_not_json_is_told_and_not_kept(mode: Any) -> None:
    """Prose with no JSON in reflection mode is told to the model; nothing is kept."""
    client = ScriptedClient([text("Working on it."), text(GOOD_JSON), submit_call()])
    result = await run(triage_agent(output=reflecting_in(mode)), client)
    assert result.ok is True
    assert user_text(conversation(result)[2]).startswith(
        "Error: this answer does not match the output schema, so it was not kept:\n- the answer holds no JSON object"
    )


@MODES
async def test_text_reflection_handler_failure_keeps_the_candidate(mode: Any) -> None:
    """A reflection handler that raises: the model is told, the candidate is kept, submit validates it."""

    def broken(out: Triage) -> str:
        raise RuntimeError("preview broke")

    client = ScriptedClient([text(GOOD_JSON), submit_call()])
    result = await run(triage_agent(output=answering(mode, reflection_handler=broken)), client)
    assert result.ok is True
    assert user_text(conversation(result)[2]) == (
        "Error: the reflection handler failed (preview broke). Your output was kept as the candidate; call submit "
        "to have it validated, or send a revised JSON answer to change it."
    )


@MODES
async def test_text_reflection_preview_that_is_not_text_is_shown_and_warned(mode: Any) -> None:
    """A preview that is not a str is shown as its str(), with a warning in the metadata."""
    client = ScriptedClient([text(GOOD_JSON), submit_call()])
    result = await run(triage_agent(output=answering(mode, reflection_handler=lambda t: t.severity)), client)
    assert user_text(conversation(result)[2]).startswith("Preview of your answer:\n\n2\n\n")
    assert result.metadata.warnings == (
        "reflection_handler of output tool 'final_output' returned int, not str; its str() was shown to the model",
    )


# Thinking, and forcing the output on an attempt's last iteration.

THINKING = {"thinking": {"type": "enabled", "budget_tokens": 1024}}


def forcing(max_iterations: int = 2) -> ValidationConfig:
    return ValidationConfig(
        max_attempts=1, max_iterations_per_attempt=max_iterations, force_output_on_last_iteration=True
    )


@pytest.mark.parametrize("settings", [{}, THINKING])
async def test_native_never_forces_a_tool_and_forces_text_on_the_last_iteration(settings: dict[str, Any]) -> None:
    """With or without thinking: auto, then tool_choice none on the last iteration; the tools stay the same."""
    agent = triage_agent(
        output=answering("native"), helpers=[lookup], validation=forcing(), model_settings=settings, max_tokens=4096
    )
    client = ScriptedClient([response(thinking("hm"), tool_call("lookup", {"query": "vpn"})), text(GOOD_JSON)])
    result = await run(agent, client)
    assert result.ok is True
    first, last = client.requests
    assert (first["tool_choice"], last["tool_choice"]) == ({"type": "auto"}, {"type": "none"})
    assert first["tools"] == last["tools"]
    assert first["output_config"] == last["output_config"]
    assert result.metadata.attempts[0].output_forced is True


async def test_text_forcing_without_tools_changes_nothing() -> None:
    """An agent with no tools answers in text anyway: its last request is the same, and counts as forced."""
    agent = triage_agent(output=answering("prompted"), validation=forcing(1))
    client = ScriptedClient([text(GOOD_JSON)])
    result = await run(agent, client)
    assert "tool_choice" not in client.requests[0]
    assert result.metadata.attempts[0].output_forced is True


@MODES
async def test_text_reflection_forced_answer_is_validated_as_submitted(mode: Any) -> None:
    """Reflecting without a candidate on the last iteration: tool_choice none, and the answer is validated at once."""
    agent = triage_agent(output=reflecting_in(mode), helpers=[lookup], validation=forcing())
    client = ScriptedClient([tool_call("lookup", {"query": "vpn"}), text(GOOD_JSON)])
    result = await run(agent, client)
    assert result.ok is True
    assert client.requests[1]["tool_choice"] == {"type": "none"}


@pytest.mark.parametrize(("settings", "forced"), [({}, True), (THINKING, False)])
async def test_text_reflection_with_a_candidate_forces_submit_unless_thinking(
    settings: dict[str, Any], forced: bool
) -> None:
    """With a candidate the last iteration calls submit: forced by tool_choice, or (thinking) asked in the turn."""
    agent = triage_agent(output=reflecting_in("native"), validation=forcing(), model_settings=settings)
    client = ScriptedClient([text(GOOD_JSON), submit_call()])
    result = await run(agent, client)
    assert result.ok is True
    last = client.requests[1]
    if forced:
        assert last["tool_choice"] == {"type": "tool", "name": "submit"}
    else:
        assert last["tool_choice"] == {"type": "auto"}
        assert user_text(last["messages"][-1]).endswith(
            "This is your last response for this attempt: call 'submit' now, with your best output so far."
        )


# Interruption while an answer is validated.


async def test_text_answer_abort_during_validation_cancels_in_phase_tool() -> None:
    """An abort while a slow validator runs interrupts it; the failure keeps the candidate."""
    stop = threading.Event()
    release = threading.Event()

    def slow(out: Triage) -> None:
        stop.set()  # the abort comes while the validator runs
        release.wait(5)

    agent = triage_agent(output=answering("native"), validators=[slow])
    result = await execute_agent(agent, "hi", client=ScriptedClient([text(GOOD_JSON)]), abort_event=stop)
    release.set()
    assert result.ok is False
    assert result.error.code is AgentErrorCode.EXECUTION_CANCELLED
    assert result.error.context.phase == "tool"  # type: ignore[union-attr]
    assert result.error.last_output == GOOD.model_dump()


@MODES
async def test_text_reflection_model_validation_crash_fails_the_execution(mode: Any) -> None:
    """A crash in the output model's own validation code while an answer is previewed is VALIDATOR_ERROR."""

    class Fragile(BaseModel):
        n: int

        @field_validator("n")
        @classmethod
        def explode(cls, value: int) -> int:
            raise KeyError("bug")

    agent = define_agent(
        name="fragile", model="claude-sonnet-4-6", output=OutputTool(Fragile, mode=mode, reflection_handler=str)
    )
    result = await execute_agent(agent, "go", client=ScriptedClient([text('{"n": 1}')]))
    assert result.ok is False
    assert result.error.code is AgentErrorCode.VALIDATOR_ERROR
    assert result.error.last_output == {"n": 1}


async def test_text_reflection_abort_during_the_preview_cancels() -> None:
    """An abort while the reflection handler runs interrupts it: EXECUTION_CANCELLED in phase tool."""
    stop = threading.Event()
    release = threading.Event()

    def slow_preview(out: Triage) -> str:
        stop.set()
        release.wait(5)
        return "late"

    agent = triage_agent(output=answering("prompted", reflection_handler=slow_preview))
    result = await execute_agent(agent, "hi", client=ScriptedClient([text(GOOD_JSON)]), abort_event=stop)
    release.set()
    assert result.ok is False
    assert result.error.code is AgentErrorCode.EXECUTION_CANCELLED
    assert result.error.context.phase == "tool"  # type: ignore[union-attr]

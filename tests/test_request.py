"""Each iteration's request: forcing the output on an attempt's last iteration (``force_output_on_last_iteration``)."""

from __future__ import annotations

import pytest
from support import GOOD, reflecting, results_of, run, triage_agent

from typedagent import AgentDefinitionError, AgentErrorCode, AttemptOutcome, ValidationConfig, tool
from typedagent.testing import (
    ScriptedClient,
    api_error,
    output_call,
    response,
    submit_call,
    text,
    thinking,
    tool_call,
)


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"found {query}"


def forcing(max_iterations: int = 2, max_attempts: int = 1) -> ValidationConfig:
    return ValidationConfig(
        max_attempts=max_attempts, max_iterations_per_attempt=max_iterations, force_output_on_last_iteration=True
    )


async def test_force_output_names_the_output_tool_on_the_last_iteration() -> None:
    """The last iteration forces the output tool with tool_choice; the other requests and the tools stay as they are."""
    client = ScriptedClient([tool_call("lookup", {"query": "vpn"}), output_call(GOOD)])
    result = await run(triage_agent(helpers=[lookup], validation=forcing()), client)
    assert result.ok is True
    first, last = client.requests
    assert first["tool_choice"] == {"type": "any"}
    assert last["tool_choice"] == {"type": "tool", "name": "final_output"}
    assert first["tools"] == last["tools"]
    assert first["system"] == last["system"]
    assert result.metadata.attempts[0].output_forced is True


async def test_force_output_is_off_by_default() -> None:
    """Without the option the last iteration sends tool_choice any, and the record says nothing was forced."""
    client = ScriptedClient([tool_call("lookup", {"query": "vpn"}), output_call(GOOD)])
    agent = triage_agent(helpers=[lookup], validation=ValidationConfig(max_iterations_per_attempt=2))
    result = await run(agent, client)
    assert [request["tool_choice"] for request in client.requests] == [{"type": "any"}, {"type": "any"}]
    assert result.metadata.attempts[0].output_forced is False


async def test_force_output_forces_submit_when_reflecting_with_a_candidate() -> None:
    """In reflection mode with a candidate, the last iteration forces ``submit``."""
    client = ScriptedClient([output_call(GOOD), submit_call()])
    result = await run(triage_agent(output=reflecting(), validation=forcing()), client)
    assert result.ok is True
    assert client.requests[1]["tool_choice"] == {"type": "tool", "name": "submit"}


async def test_force_output_validates_a_last_output_call_as_submitted() -> None:
    """Reflecting without a candidate, the output tool is forced, and that call is validated as if submitted."""
    client = ScriptedClient([tool_call("lookup", {"query": "vpn"}), output_call(GOOD)])
    result = await run(triage_agent(output=reflecting(), helpers=[lookup], validation=forcing()), client)
    assert client.requests[1]["tool_choice"] == {"type": "tool", "name": "final_output"}
    assert result.ok is True
    assert result.output == GOOD
    assert results_of(result.metadata.messages[-1]) == [("toolu_02_002", "Output accepted.", False)]


async def test_force_output_a_rejected_forced_output_starts_the_next_attempt() -> None:
    """A forced output that fails validation is fed back as usual; the next attempt's requests are not forced."""
    client = ScriptedClient(
        [
            tool_call("lookup", {"query": "vpn"}),
            output_call({"severity": 9, "summary": "too severe"}),
            output_call(GOOD),
        ]
    )
    result = await run(triage_agent(helpers=[lookup], validation=forcing(max_attempts=2)), client)
    assert result.ok is True
    assert [request["tool_choice"]["type"] for request in client.requests] == ["any", "tool", "any"]
    outcomes = [(a.outcome, a.output_forced) for a in result.metadata.attempts]
    assert outcomes == [(AttemptOutcome.VALIDATION_FAILED, True), (AttemptOutcome.SUCCESS, False)]


async def test_force_output_cannot_stop_a_text_answer_but_keeps_the_failure_honest() -> None:
    """A model that still answers in text on the forced turn ends the attempt with INVALID_RESPONSE, as usual."""
    client = ScriptedClient(["I'd rather chat."])
    agent = triage_agent(validation=forcing(max_iterations=1))
    result = await run(agent, client)
    assert client.requests[0]["tool_choice"] == {"type": "tool", "name": "final_output"}
    assert result.ok is False
    assert result.error.code is AgentErrorCode.INVALID_RESPONSE


THINKING = {"thinking": {"type": "enabled", "budget_tokens": 1024}}


async def test_force_output_with_thinking_tells_the_last_turn_instead() -> None:
    """With thinking on, tool_choice stays auto and the tools unchanged; the last user turn says it is the last."""
    client = ScriptedClient(
        [
            response(thinking("need data"), tool_call("lookup", {"query": "vpn"})),
            response(thinking("done"), output_call(GOOD)),
        ]
    )
    agent = triage_agent(helpers=[lookup], validation=forcing(), model_settings=THINKING)
    result = await run(agent, client)
    assert result.ok is True
    first, last = client.requests
    assert first["tool_choice"] == last["tool_choice"] == {"type": "auto"}
    assert first["tools"] == last["tools"]
    assert last["messages"][-1]["content"][-1] == {
        "type": "text",
        "text": "This is your last response for this attempt: call 'final_output' now, with your best output so far.",
    }
    assert last["messages"][-1]["content"][0]["type"] == "tool_result"
    # The note stays in the conversation, so the next request extends the prefix the last one cached.
    assert result.metadata.messages[2] == last["messages"][2]
    assert result.metadata.attempts[0].output_forced is True


async def test_force_output_with_thinking_on_a_single_iteration_attempt() -> None:
    """With one iteration per attempt, the prompt's own user turn carries the note."""
    client = ScriptedClient([output_call(GOOD)])
    agent = triage_agent(validation=forcing(max_iterations=1), model_settings=THINKING)
    result = await run(agent, client, prompt="Ticket: VPN drops")
    assert result.ok is True
    assert [block["type"] for block in client.requests[0]["messages"][0]["content"]] == ["text", "text"]


async def test_force_output_with_thinking_after_a_paused_turn_forces_nothing() -> None:
    """A paused turn is continued as it is (the assistant's turn is last): no note, and the record says so."""
    client = ScriptedClient([response(text("searching"), stop_reason="pause_turn"), output_call(GOOD)])
    agent = triage_agent(validation=forcing(), model_settings=THINKING)
    result = await run(agent, client)
    assert result.ok is True
    assert client.requests[1]["messages"][-1]["role"] == "assistant"
    assert result.metadata.attempts[0].output_forced is False


def test_force_output_must_be_a_bool() -> None:
    """The option is checked like the other ValidationConfig fields."""
    with pytest.raises(AgentDefinitionError, match="force_output_on_last_iteration must be True or False"):
        ValidationConfig(force_output_on_last_iteration="yes")  # type: ignore[arg-type]


REFUSED = "tool_choice: forced tool use is not supported for this model, which always thinks."


async def test_request_refused_forcing_falls_back_to_auto_and_warns() -> None:
    """A 400 refusing a forced tool_choice switches the execution to auto (no iteration lost) and warns."""
    client = ScriptedClient([api_error(400, REFUSED), output_call(GOOD)])
    result = await run(triage_agent(validation=ValidationConfig(max_iterations_per_attempt=1)), client)
    assert result.ok
    assert [request["tool_choice"] for request in client.requests] == [{"type": "any"}, {"type": "auto"}]
    assert result.metadata.iterations == 2
    assert result.metadata.attempts[0].iterations == 1
    assert len(result.metadata.warnings) == 1
    assert "refused a forced tool_choice" in result.metadata.warnings[0]


async def test_request_other_bad_requests_still_fail() -> None:
    """A 400 that does not name tool_choice is an API_ERROR as before; so is one once auto is already sent."""
    client = ScriptedClient([api_error(400, "messages: roles must alternate")])
    result = await run(triage_agent(), client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.API_ERROR
    thinking = {"type": "enabled", "budget_tokens": 1024}
    client = ScriptedClient([api_error(400, REFUSED)])
    result = await run(triage_agent(model_settings={"thinking": thinking}), client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.API_ERROR


async def test_request_refused_forcing_on_the_forced_last_iteration_asks_in_the_conversation() -> None:
    """After a refusal, the forced last iteration tells the last user turn instead of forcing the tool."""
    client = ScriptedClient([api_error(400, REFUSED), tool_call("lookup", {"query": "vpn"}), output_call(GOOD)])
    result = await run(triage_agent(helpers=[lookup], validation=forcing()), client)
    assert result.ok is True
    refused, first, last = client.requests
    assert refused["tool_choice"] == {"type": "any"}
    assert first["tool_choice"] == last["tool_choice"] == {"type": "auto"}
    assert last["messages"][-1]["content"][-1] == {
        "type": "text",
        "text": "This is your last response for this attempt: call 'final_output' now, with your best output so far.",
    }
    assert result.metadata.attempts[0].iterations == 2

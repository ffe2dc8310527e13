"""Odd but real model responses never produce a conversation the API would reject (issue 5)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from typedagent import (
    AgentDefinition,
    AgentErrorCode,
    ApiErrorContext,
    AttemptOutcome,
    ExecuteCallbacks,
    ExecuteFailure,
    OutputTool,
    ValidationConfig,
    define_agent,
    execute_agent,
    tool,
)
from typedagent.testing import (
    FunctionClient,
    ScriptedClient,
    assert_valid_conversation,
    conversation_problems,
    output_call,
    response,
    tool_call,
)


class Out(BaseModel):
    n: int


def agent(**overrides: Any) -> AgentDefinition[Out, None]:
    params: dict[str, Any] = {
        "name": "odd",
        "model": "claude-sonnet-4-6",
        "output": OutputTool(Out),
        "validation": ValidationConfig(max_attempts=2),
    }
    params.update(overrides)
    return define_agent(**params)


FEEDBACK = "You replied without calling a tool. Call 'final_output' with your output; do not answer in plain text."


async def test_empty_end_turn_response_adds_no_empty_assistant_turn() -> None:
    """A response with no content blocks (the API does send these) is not echoed back as an empty turn."""
    client = ScriptedClient([response(), output_call(Out(n=1))])
    result = await execute_agent(agent(), "go", client=client)
    assert result.ok
    assert [a.outcome for a in result.metadata.attempts] == [AttemptOutcome.INVALID_RESPONSE, AttemptOutcome.SUCCESS]
    assert client.requests[1]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "go"}, {"type": "text", "text": FEEDBACK}]}
    ]
    assert_valid_conversation(result.metadata.messages)
    assert result.metadata.tokens.total == 30


async def test_empty_pause_turn_response_resends_the_same_conversation() -> None:
    """An empty paused turn leaves the conversation as it was; the next call continues from there."""
    client = ScriptedClient([response(stop_reason="pause_turn"), output_call(Out(n=2))])
    result = await execute_agent(agent(), "go", client=client)
    assert result.ok
    assert client.requests[1]["messages"] == [{"role": "user", "content": "go"}]
    for request in client.requests:
        assert conversation_problems(request["messages"]) == []


async def test_empty_response_after_content_block_prompt_appends_feedback_to_it() -> None:
    """With a block-list prompt, the feedback joins the same user turn."""
    client = ScriptedClient([response(stop_reason="end_turn"), output_call(Out(n=3))])
    prompt = [{"type": "text", "text": "go"}]
    result = await execute_agent(agent(), prompt, client=client)  # type: ignore[arg-type]
    assert result.ok
    assert client.requests[1]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "go"}, {"type": "text", "text": FEEDBACK}]}
    ]


def _nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("client_kind", ["scripted", "function"])
async def test_deeply_nested_tool_input_is_a_malformed_response(client_kind: str) -> None:
    """A tool input nested 300 deep (prompt injection can steer that) ends as 'malformed_response', never a crash."""
    hostile = output_call({"n": 1, "junk": _nested(300)})
    client = ScriptedClient([hostile]) if client_kind == "scripted" else FunctionClient(lambda request: hostile)
    seen: list[object] = []
    callbacks = ExecuteCallbacks(
        on_model_response=lambda s, e: seen.append(e), on_tool_call=lambda s, e: seen.append(e)
    )
    result = await execute_agent(agent(), "go", client=client, callbacks=callbacks)
    assert isinstance(result, ExecuteFailure)
    assert result.error.code is AgentErrorCode.API_ERROR
    assert result.error.context == ApiErrorContext(
        status_code=None, error_type="malformed_response", request_id=None, attempt=1, iteration=1
    )
    assert result.error.message.startswith(
        "The Messages API call failed (malformed_response): content block 0 of the response is nested more than "
        "100 levels deep"
    )
    assert result.metadata.tokens.total == 15
    assert result.metadata.messages == [{"role": "user", "content": "go"}]
    assert seen == []


async def test_duplicate_tool_use_ids_fail_as_malformed_response() -> None:
    """Two tool_use blocks with one id cannot be answered (the API rejects the turn): API_ERROR, nothing runs."""
    ran: list[int] = []

    @tool
    def count(n: int) -> int:
        """Count."""
        ran.append(n)
        return n

    duplicated = response(tool_call("count", {"n": 1}, id="toolu_same"), tool_call("count", {"n": 2}, id="toolu_same"))
    client = ScriptedClient([duplicated])
    result = await execute_agent(agent(helpers=[count]), "x", client=client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.API_ERROR
    assert isinstance(result.error.context, ApiErrorContext)
    assert result.error.context.error_type == "malformed_response"
    assert "two tool_use blocks have the id 'toolu_same'" in result.error.message
    assert ran == []
    assert len(client.requests) == 1
    assert_valid_conversation(result.metadata.messages)

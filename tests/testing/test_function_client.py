"""``FunctionClient``: answers computed from the request, sync or async."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from anthropic.types import Message
from toolkit_support import PARIS, PROMPT, geo_agent, lookup_then_answer

from typedagent import execute_agent
from typedagent.testing import FunctionClient, api_error, conversation, delay, output_call, tool_call


def plan(request: dict[str, Any]) -> Any:
    """Look up first; answer once a tool result is in the conversation."""
    if len(request["messages"]) == 1:
        return tool_call("lookup", {"query": "Paris"})
    return output_call(PARIS)


async def test_function_client_sync_function() -> None:
    """A plain function's script items are served, and every request is recorded."""
    client = FunctionClient(plan)
    result = await execute_agent(geo_agent(), PROMPT, client=client)
    assert conversation(result) == lookup_then_answer()
    assert [len(request["messages"]) for request in client.requests] == [1, 3]
    assert client.requests[0]["model"] == "claude-haiku-4-5"


async def test_function_client_async_function() -> None:
    """An async function is awaited, and may return delayed items."""

    async def answer(request: dict[str, Any]) -> Any:
        return delay(0, plan(request))

    result = await execute_agent(geo_agent(), PROMPT, client=FunctionClient(answer))
    assert conversation(result) == lookup_then_answer()


async def test_function_client_returns_messages_and_json() -> None:
    """A ``Message`` is returned as is; a response's JSON is validated into one."""
    ready = Message.model_validate(
        {
            "id": "msg_own",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku-4-5",
            "content": [{"type": "tool_use", "id": "t1", "name": "lookup", "input": {"query": "Paris"}}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )
    answers: list[Any] = [
        ready,
        {
            **ready.model_dump(),
            "content": [{"type": "tool_use", "id": "t2", "name": "answer", "input": PARIS.model_dump()}],
        },
    ]
    client = FunctionClient(lambda request: answers[len(client.requests) - 1])
    result = await execute_agent(geo_agent(), PROMPT, client=client)
    assert result.ok
    assert [m["content"][0]["id"] for m in conversation(result)[1::2]] == ["t1", "t2"]


async def test_function_client_errors_are_raised() -> None:
    """An ``api_error`` answer raises the SDK exception."""
    client = FunctionClient(lambda request: api_error(429))
    with pytest.raises(anthropic.RateLimitError):
        await client.messages.create(model="m", messages=[])
    assert client.requests == [{"model": "m", "messages": []}]


async def test_function_client_sync_function_failing_fails_the_test() -> None:
    """A sync function runs as ``messages.create`` is called: its failed ``assert`` propagates out of the run."""

    def model(request: dict[str, Any]) -> Any:
        assert request["max_tokens"] == 1, "the agent should ask for one token"
        return output_call(PARIS)

    with pytest.raises(AssertionError, match="the agent should ask for one token"):
        await execute_agent(geo_agent(), PROMPT, client=FunctionClient(model))


async def test_function_client_api_error_comes_back_as_a_result() -> None:
    """An ``api_error`` answer is raised when the call is awaited, so the run reports API_ERROR."""
    result = await execute_agent(geo_agent(), PROMPT, client=FunctionClient(lambda request: api_error(429)))
    assert not result.ok
    assert result.error.context.status_code == 429  # type: ignore[union-attr]

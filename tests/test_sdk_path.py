"""The real SDK path: ``anthropic.AsyncAnthropic`` over ``httpx2.MockTransport``, end to end."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
from pydantic import BaseModel
from support import GOOD, Triage, reflecting, triage_agent

from typedagent import AgentErrorCode, ApiErrorContext, OutputTool, define_agent, execute_agent, tool
from typedagent.testing import assert_valid_conversation


@tool
async def lookup(query: str) -> str:
    """Look up."""
    return f"found {query}"


def message(content: list[dict[str, Any]], stop_reason: str = "tool_use", **usage: int) -> dict[str, Any]:
    """A Messages API response body."""
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5, **usage},
    }


def sdk_client(bodies: list[tuple[int, dict[str, Any]]], seen: list[dict[str, Any]]) -> anthropic.AsyncAnthropic:
    """An AsyncAnthropic whose HTTP layer answers ``bodies`` in order and records each request body."""
    replies = iter(bodies)

    def handle(request: httpx2.Request) -> httpx2.Response:
        assert request.url.path == "/v1/messages"
        assert request.headers["authorization"] == "Bearer test-key"
        seen.append(json.loads(request.content))
        status, body = next(replies)
        return httpx2.Response(status, json=body, headers={"request-id": f"req_{len(seen)}"})

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handle))
    return anthropic.AsyncAnthropic(api_key="test-key", http_client=http, max_retries=0)


async def test_sdk_path_round_trip() -> None:
    """Requests and responses round-trip through the SDK's own types and JSON encoding."""
    seen: list[dict[str, Any]] = []
    client = sdk_client(
        [
            (200, message([{"type": "tool_use", "id": "toolu_a", "name": "lookup", "input": {"query": "vpn"}}])),
            (
                200,
                message(
                    [
                        {"type": "text", "text": "Here it is."},
                        {"type": "tool_use", "id": "toolu_b", "name": "final_output", "input": GOOD.model_dump()},
                    ],
                    cache_read_input_tokens=100,
                ),
            ),
        ],
        seen,
    )
    result = await execute_agent(triage_agent(helpers=[lookup], instructions="Triage."), "VPN drops", client=client)
    assert result.ok
    assert isinstance(result.output, Triage)
    assert result.output == GOOD
    assert result.metadata.tokens.total == 130
    assert_valid_conversation(result.metadata.messages)
    first, second = seen
    assert first["model"] == "claude-sonnet-4-6"
    assert first["tool_choice"] == {"type": "any"}
    assert first["cache_control"] == {"type": "ephemeral"}
    assert [t["name"] for t in first["tools"]] == ["lookup", "final_output"]
    assert first["messages"] == [{"role": "user", "content": "VPN drops"}]
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_a", "name": "lookup", "input": {"query": "vpn"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "found vpn"}]},
    ]


async def test_sdk_path_reflection_round_trip() -> None:
    """Reflection mode works over the SDK: preview, submit, accepted."""
    seen: list[dict[str, Any]] = []
    client = sdk_client(
        [
            (
                200,
                message(
                    [
                        {"type": "tool_use", "id": "t1", "name": "final_output", "input": GOOD.model_dump()},
                        {"type": "tool_use", "id": "t2", "name": "submit", "input": {}},
                    ]
                ),
            )
        ],
        seen,
    )
    result = await execute_agent(triage_agent(output=reflecting()), "x", client=client)
    assert result.ok
    assert [t["name"] for t in seen[0]["tools"]] == ["final_output", "submit"]


async def test_sdk_path_status_error_maps_to_api_error() -> None:
    """An HTTP error from the API becomes API_ERROR with the SDK's status, error type and request id."""
    seen: list[dict[str, Any]] = []
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": "tools.0: bad schema"}}
    client = sdk_client([(400, body)], seen)
    result = await execute_agent(triage_agent(), "x", client=client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.API_ERROR
    assert result.error.context == ApiErrorContext(
        status_code=400, error_type="invalid_request_error", request_id="req_1", attempt=1, iteration=1
    )
    assert isinstance(result.error.cause, anthropic.BadRequestError)
    assert "tools.0: bad schema" in result.error.message
    assert "check the model id, tool schemas" in result.error.message


class Node(BaseModel):
    """A recursive output model."""

    name: str
    children: list[Node] = []


async def test_sdk_path_recursive_output_model() -> None:
    """A recursive output model's $defs/$ref schema is sent through the SDK and a nested output comes back typed."""
    seen: list[dict[str, Any]] = []
    tree = {"name": "root", "children": [{"name": "a", "children": [{"name": "a1", "children": []}]}]}
    client = sdk_client(
        [(200, message([{"type": "tool_use", "id": "t1", "name": "final_output", "input": tree}]))], seen
    )
    agent = define_agent(name="tree", model="claude-sonnet-4-6", output=OutputTool(Node))
    result = await execute_agent(agent, "Draw a tree", client=client)
    assert result.ok
    assert result.output == Node.model_validate(tree)
    assert isinstance(result.output.children[0].children[0], Node)
    [sent] = seen[0]["tools"]
    assert sent["input_schema"] == agent.tool_params()[0]["input_schema"]
    assert sent["input_schema"]["type"] == "object"
    assert sent["input_schema"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert "Node" in sent["input_schema"]["$defs"]

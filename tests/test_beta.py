"""Beta parameters in model_settings reach the request through the SDK's beta resource, with their headers."""

from __future__ import annotations

import typing
from typing import Any

import pytest
from anthropic.types.beta import BetaMessage
from anthropic.types.beta.beta_context_management_config_param import Edit
from anthropic.types.beta.message_create_params import MessageCreateParamsBase as BetaParams
from anthropic.types.message_create_params import MessageCreateParamsBase as Params
from support import GOOD, handing_over, recorded, run, triage_agent

from typedagent import ExecuteCallbacks, ExecutionState, ModelResponse, ToolCall, ToolResult, execute_agent
from typedagent._agent.settings import BETA_SETTINGS
from typedagent._api.beta import BETA_ONLY_SETTINGS, EDIT_BETAS, beta_request
from typedagent.testing import FakeAnthropicServer, FunctionClient, ScriptedClient, conversation, output_call

DEEPWIKI = {"type": "url", "name": "deepwiki", "url": "https://mcp.deepwiki.com/mcp"}
"""The MCP server of pydantic-ai's test_anthropic_mcp_servers.yaml."""


def test_beta_only_settings_are_the_beta_parameters_the_standard_create_lacks() -> None:
    """The settings routed to the beta resource are exactly the allowed ones the standard messages.create lacks."""
    beta_only = BetaParams.__annotations__.keys() - Params.__annotations__.keys()
    assert BETA_SETTINGS & beta_only == BETA_ONLY_SETTINGS


def test_every_context_management_edit_of_the_sdk_has_its_beta() -> None:
    """EDIT_BETAS covers each edit type the SDK knows: a new one fails here until its beta header is known."""
    sdk = {typing.get_args(typing.get_type_hints(edit)["type"])[0] for edit in typing.get_args(Edit)}
    assert set(EDIT_BETAS) == sdk


@pytest.mark.parametrize(
    ("settings", "betas"),
    [
        ({"mcp_servers": [DEEPWIKI]}, ["mcp-client-2025-11-20"]),
        ({"mcp_servers": [{**DEEPWIKI, "tool_configuration": {"enabled": True}}]}, ["mcp-client-2025-04-04"]),
        ({"mcp_servers": [DEEPWIKI], "betas": ["mcp-client-2026-09-15"]}, ["mcp-client-2026-09-15"]),
        (
            {"context_management": {"edits": [{"type": "compact_20260112"}, {"type": "clear_thinking_20251015"}]}},
            ["compact-2026-01-12", "context-management-2025-06-27"],
        ),
        ({"context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]}}, ["context-management-2025-06-27"]),
        ({"betas": ["interleaved-thinking-2025-05-14"]}, ["interleaved-thinking-2025-05-14"]),
        ({"context_management": {"edits": [{"type": "something_new_20990101"}]}}, None),
    ],
)
def test_beta_request_adds_the_beta_each_feature_needs(settings: dict[str, Any], betas: list[str] | None) -> None:
    """Each feature's beta is added unless betas already names a version of it; an unknown edit adds none."""
    assert beta_request(settings).get("betas") == betas


async def test_beta_settings_go_through_client_beta_messages() -> None:
    """model_settings with mcp_servers call client.beta.messages.create with betas; the answer is a BetaMessage.

    The response is pydantic-ai's recorded MCP connector answer (test_anthropic_mcp_servers.yaml), handing over
    the output at the end.
    """
    agent = triage_agent(
        model_settings={"mcp_servers": [DEEPWIKI]},
        server_tools=[{"type": "mcp_toolset", "mcp_server_name": "deepwiki"}],
    )
    responses = [handing_over(recorded("mcp_response.json"), GOOD)]
    answered: list[object] = []
    client = FunctionClient(lambda request: responses.pop(0))
    callbacks = ExecuteCallbacks(on_model_response=lambda state, event: answered.append(event.message))
    result = await run(agent, client, callbacks=callbacks)  # type: ignore[arg-type]
    assert result.ok
    [request] = client.requests
    assert request["betas"] == ["mcp-client-2025-11-20"]
    assert request["mcp_servers"] == [DEEPWIKI]
    assert request["tools"][0] == {"type": "mcp_toolset", "mcp_server_name": "deepwiki"}
    assert isinstance(answered[0], BetaMessage)
    assert [block["type"] for block in conversation(result)[1]["content"]] == [
        "thinking",
        "mcp_tool_use",
        "mcp_tool_result",
        "text",
        "tool_use",
    ]


async def test_mcp_tool_calls_are_reported_like_server_tool_calls() -> None:
    """on_tool_call and on_tool_result fire for an MCP call with kind "mcp" and the API's server_name."""
    events: list[ToolCall | ToolResult] = []

    def record(state: ExecutionState, event: ToolCall | ToolResult) -> None:
        events.append(event)

    agent = triage_agent(model_settings={"mcp_servers": [DEEPWIKI]})
    responses = [handing_over(recorded("mcp_response.json"), GOOD)]
    callbacks = ExecuteCallbacks(on_tool_call=record, on_tool_result=record)
    result = await run(agent, FunctionClient(lambda request: responses.pop(0)), callbacks=callbacks)  # type: ignore[arg-type]
    assert result.ok
    call, answer = events[0], events[1]
    assert isinstance(call, ToolCall)
    assert (call.id, call.name, call.kind, call.server) == (
        "mcptoolu_01SAss3KEwASziHZoMR6HcZU",
        "ask_question",
        "mcp",
        "deepwiki",
    )
    assert call.input == {
        "question": "What is pydantic-ai and what does this repository do?",
        "repoName": "pydantic/pydantic-ai",
    }
    assert isinstance(answer, ToolResult)
    assert (answer.id, answer.name, answer.is_error, answer.duration_ms, answer.server) == (
        call.id,
        "ask_question",
        False,
        0.0,
        "deepwiki",
    )
    assert answer.content.startswith("Pydantic AI is a Python agent framework")


async def test_beta_settings_over_http_send_the_anthropic_beta_header() -> None:
    """Through the real SDK, the request carries mcp_servers in its body and the beta in anthropic-beta."""
    agent = triage_agent(model_settings={"mcp_servers": [DEEPWIKI], "betas": ["interleaved-thinking-2025-05-14"]})
    async with FakeAnthropicServer([output_call(GOOD)]) as server:
        result = await execute_agent(agent, "Ticket: VPN drops", client=server.client())
    assert result.ok
    assert server.requests[0]["mcp_servers"] == [DEEPWIKI]
    assert "betas" not in server.requests[0]
    assert server.request_headers[0]["anthropic-beta"] == "interleaved-thinking-2025-05-14,mcp-client-2025-11-20"


async def test_requests_without_beta_settings_use_the_standard_resource() -> None:
    """No beta parameter: messages.create, no betas, and a plain Message."""
    answered: list[ModelResponse] = []
    client = ScriptedClient([output_call(GOOD)])
    callbacks = ExecuteCallbacks(on_model_response=lambda state, event: answered.append(event))
    await run(
        triage_agent(model_settings={"container": "container_011CaNRhtVsGiXZx1CgSETLH"}), client, callbacks=callbacks
    )
    assert "betas" not in client.requests[0]
    assert not isinstance(answered[0].message, BetaMessage)


class _NoBeta:
    """A client with messages.create only."""

    def __init__(self) -> None:
        self.messages = ScriptedClient([output_call(GOOD)]).messages


async def test_a_client_without_beta_messages_is_told_before_anything_is_sent() -> None:
    """Beta settings with a client that has no beta.messages are a TypeError naming the settings."""
    agent = triage_agent(model_settings={"context_management": {"edits": [{"type": "compact_20260112"}]}})
    with pytest.raises(TypeError, match=r"beta parameters \(context_management\).*has no beta.messages"):
        await execute_agent(agent, "hi", client=_NoBeta())

"""The ``typedagent[aiohttp]`` extra: runs on the SDK's aiohttp transport (``anthropic.DefaultAioHttpClient``)."""

from __future__ import annotations

import pytest
from anthropic import AsyncAnthropic, DefaultAioHttpClient
from pydantic import BaseModel

from typedagent import OutputTool, define_agent, execute_agent, tool
from typedagent.testing import FakeAnthropicServer, assert_valid_conversation, output_call, tool_call

# DefaultAioHttpClient exists in every SDK install but needs aiohttp to be built: `make test` installs the extra.
pytest.importorskip("aiohttp", reason="the aiohttp extra is not installed (pip install 'typedagent[aiohttp]')")


class Verdict(BaseModel):
    label: str


@tool
async def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


async def test_aiohttp_transport_runs_an_agent_end_to_end() -> None:
    """Over DefaultAioHttpClient and real loopback HTTP, a helper turn and an output turn give the typed output."""
    agent = define_agent(name="aio", model="claude-sonnet-4-6", output=OutputTool(Verdict), helpers=[lookup])
    script = [tool_call("lookup", {"key": "a"}), output_call(Verdict(label="ok"))]
    async with FakeAnthropicServer(script) as server:
        client = AsyncAnthropic(base_url=server.base_url, api_key="test", http_client=DefaultAioHttpClient())
        async with client:
            result = await execute_agent(agent, "Classify this.", client=client)
    assert result.ok, result
    assert result.output == Verdict(label="ok")
    assert result.metadata.iterations == 2
    assert_valid_conversation(result.metadata.messages)
    assert [len(request["messages"]) for request in server.requests] == [1, 3]
    assert server.requests[1]["messages"][2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": server.requests[1]["messages"][1]["content"][0]["id"],
            "content": "value of a",
        }
    ]
    assert all(request["cache_control"] == {"type": "ephemeral"} for request in server.requests)

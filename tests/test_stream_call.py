"""The streamed model call: when it streams, the same response as unstreamed, and its failures and interruptions."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from support import GOOD, recorded, triage_agent

from typedagent import AgentErrorCode, ExecutionLimits, execute_agent, stream_agent, tool
from typedagent._limits import Guard
from typedagent._model_call import call_model
from typedagent._stream_call import must_stream
from typedagent.testing import (
    FakeAnthropicServer,
    FunctionClient,
    RecordingClient,
    ReplayClient,
    ScriptedClient,
    output_call,
    response,
    stream_dropped,
    stream_error,
    stream_stalled,
    text,
    thinking,
    tool_call,
    usage,
)

PARAMS: dict[str, Any] = {
    "model": "claude-sonnet-4-6",
    "max_tokens": 1024,
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"name": "search", "input_schema": {"type": "object"}}],
}
RICH = response(
    thinking("The user asks about the VPN; search first.", signature="EqQBCkYIBxgCKkBsig"),
    text("Let me look that up for you, one moment."),
    tool_call("search", {"q": "vpn drops", "filters": {"since": "2026-01-01", "tags": ["net", "é"]}}, id="toolu_1"),
    usage=usage(input_tokens=120, output_tokens=64, cache_read_input_tokens=30, web_search_requests=1),
)


@tool
def search(q: str, filters: dict[str, Any] | None = None) -> str:
    """Search the tickets."""
    return f"3 tickets about {q}"


def agent() -> Any:
    """The triage agent with the search helper RICH calls."""
    return triage_agent(helpers=[search])


class Watcher:
    """A stream observer that keeps the event types it saw."""

    def __init__(self) -> None:
        self.types: list[str] = []

    def stream_event(self, event: Any, snapshot: Any) -> None:
        """Keep the type."""
        self.types.append(event.type)


def _without_id(message: Any) -> dict[str, Any]:
    data: dict[str, Any] = message.model_dump()
    data.pop("id")
    return data


async def test_stream_call_response_equals_the_unstreamed_one_through_the_sdk() -> None:
    """Over HTTP with the real SDK, a streamed response is the unstreamed one: blocks, signature, usage."""
    with FakeAnthropicServer([RICH, RICH]) as server:
        client = server.client()
        plain = await call_model(client, dict(PARAMS), Guard(None, None))
        watcher = Watcher()
        streamed = await call_model(client, dict(PARAMS), Guard(None, None), watcher)
    assert type(streamed) is type(plain)
    assert _without_id(streamed) == _without_id(plain)
    assert [type(block) for block in streamed.content] == [type(block) for block in plain.content]  # type: ignore[union-attr]
    assert watcher.types[0] == "message_start"
    assert watcher.types[-1] == "message_stop"
    assert "content_block_delta" in watcher.types
    assert server.requests[1]["stream"] is True
    assert "stream" not in server.requests[0]


@pytest.mark.parametrize(
    ("name", "beta"),
    [
        ("web_search_response.json", False),
        ("advisor_response.json", False),
        ("mcp_response.json", True),
        ("code_execution_response.json", False),
        ("compaction_response.json", True),
    ],
)
async def test_stream_call_recorded_responses_stream_back_identical(name: str, beta: bool) -> None:
    """Responses of real API traffic (server tools, MCP, citations, new fields) accumulate from a stream unchanged."""
    data = recorded(name)
    client = FunctionClient(lambda request: data)
    resource: Any = client.beta.messages if beta else client.messages
    plain = await resource.create(**PARAMS)
    streamed = await call_model(client, {**PARAMS, **({"betas": ["x"]} if beta else {})}, Guard(None, None), Watcher())
    assert type(streamed) is type(plain)
    assert streamed.model_dump(warnings=False) == plain.model_dump(warnings=False)  # type: ignore[union-attr]


def test_must_stream_asks_the_sdk_rule() -> None:
    """A max_tokens the SDK would refuse unstreamed must stream; a custom client timeout or a small one need not."""
    with FakeAnthropicServer() as server:
        client = server.client()
        assert must_stream(client.messages, {**PARAMS, "max_tokens": 64_000})
        assert not must_stream(client.messages, {**PARAMS, "max_tokens": 21_000})
        assert must_stream(client.messages, {**PARAMS, "model": "claude-opus-4-0", "max_tokens": 9_000})
        assert not must_stream(client.messages, {**PARAMS, "max_tokens": 64_000, "timeout": 3600})
        assert not must_stream(server.client(timeout=3600).messages, {**PARAMS, "max_tokens": 64_000})
    assert not must_stream(ScriptedClient().messages, {**PARAMS, "max_tokens": 64_000})


async def test_stream_call_large_max_tokens_works_with_the_sdk_client() -> None:
    """max_tokens 64,000 (refused unstreamed by the SDK) succeeds: the call streams by itself."""
    with FakeAnthropicServer([output_call(GOOD)]) as server:
        agent = triage_agent(max_tokens=64_000)
        result = await execute_agent(agent, "go", client=server.client())
    assert result.ok is True
    assert result.output == GOOD
    assert server.requests[0]["stream"] is True
    assert server.requests[0]["max_tokens"] == 64_000


@pytest.mark.parametrize("where", ["server", "in_process"])
async def test_stream_call_error_event_mid_stream_is_an_api_error(where: str) -> None:
    """An overloaded_error event after the stream started fails the run with API_ERROR naming the error type."""
    script = [stream_error(RICH, after=4)]
    with FakeAnthropicServer(script) as server:
        client: Any = server.client() if where == "server" else ScriptedClient(script)
        async with stream_agent(agent(), "go", client=client) as run:
            kinds = [event.kind async for event in run]
    result = run.result
    assert result.ok is False
    assert result.error.code is AgentErrorCode.API_ERROR
    assert result.error.context.error_type == "overloaded_error"  # type: ignore[union-attr]
    assert "while it streamed" in result.error.message
    assert "thinking_delta" in kinds
    assert kinds[-1] == "finished"


@pytest.mark.parametrize("where", ["server", "in_process"])
async def test_stream_call_dropped_connection_mid_stream_is_a_connection_error(where: str) -> None:
    """A connection dropped mid-stream fails the run with API_ERROR (connection_error), not a crash."""
    script = [stream_dropped(RICH, after=5)]
    with FakeAnthropicServer(script) as server:
        client: Any = server.client() if where == "server" else ScriptedClient(script)
        async with stream_agent(agent(), "go", client=client) as run:
            async for _ in run:
                pass
    result = run.result
    assert result.ok is False
    assert result.error.code is AgentErrorCode.API_ERROR
    assert result.error.context.error_type == "connection_error"  # type: ignore[union-attr]
    assert "stream broke" in result.error.message


@pytest.mark.parametrize("where", ["server", "in_process"])
async def test_stream_call_abort_interrupts_a_stream_in_flight_within_100ms(where: str) -> None:
    """Setting the abort event while a stream is stalled mid-response ends the run within 100 ms (CANCELLED)."""
    script = [stream_stalled(RICH, after=5)]
    stop = asyncio.Event()
    with FakeAnthropicServer(script) as server:
        client: Any = server.client() if where == "server" else ScriptedClient(script)
        async with stream_agent(agent(), "go", client=client, abort_event=stop) as run:
            async for event in run:
                if event.kind == "thinking_delta":
                    asyncio.get_running_loop().call_later(0.2, stop.set)
                    set_at = time.monotonic() + 0.2
        ended = time.monotonic()
    assert run.result.ok is False
    assert run.result.error.code is AgentErrorCode.EXECUTION_CANCELLED
    assert ended - set_at < 0.1


async def test_stream_call_deadline_interrupts_a_stalled_stream() -> None:
    """The execution's timeout ends a stream that went silent, within 100 ms of the deadline (TIMEOUT)."""
    with FakeAnthropicServer([stream_stalled(RICH, after=4)]) as server:
        started = time.monotonic()
        async with stream_agent(agent(), "go", client=server.client(), limits=ExecutionLimits(timeout_s=0.3)) as run:
            async for _ in run:
                pass
        elapsed = time.monotonic() - started
    assert run.result.ok is False
    assert run.result.error.code is AgentErrorCode.TIMEOUT
    assert elapsed < 0.4


async def test_stream_call_fault_items_refuse_unstreamed_requests() -> None:
    """A stream fault scripted for a request that does not stream is a script error, said as such."""
    with pytest.raises(AssertionError, match="not streamed"):
        await execute_agent(triage_agent(), "go", client=ScriptedClient([stream_error(RICH)]))


async def test_stream_call_cassettes_record_and_replay_streamed_calls(tmp_path: Any) -> None:
    """A streamed call records its whole response; the replay streams it back, events and result the same."""
    path = tmp_path / "stream.json"
    recording = RecordingClient(ScriptedClient([output_call(GOOD)]), path)
    async with stream_agent(triage_agent(), "go", client=recording) as run:
        recorded_kinds = [event.kind async for event in run]
    assert run.result.ok is True
    assert recording.entries[0]["request"]["stream"] is True
    assert recording.entries[0]["response"]["content"][0]["input"] == GOOD.model_dump()
    async with stream_agent(triage_agent(), "go", client=ReplayClient(path)) as replay:
        replayed_kinds = [event.kind async for event in replay]
    assert replay.result.ok is True
    assert replay.result.output == GOOD
    assert replayed_kinds == recorded_kinds

"""The streamed model call: when it streams, the same response as unstreamed, and its failures and interruptions."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx2
import pytest
from support import GOOD, recorded, triage_agent

from typedagent import (
    AgentErrorCode,
    ApiErrorContext,
    ExecutionLimits,
    ValidationConfig,
    execute_agent,
    execute_many,
    stream_agent,
    tool,
)
from typedagent._api.api_errors import ApiFailure
from typedagent._api.model_call import call_model
from typedagent._api.stream_call import must_stream
from typedagent._shared.limits import Guard
from typedagent.testing import (
    FakeAnthropicServer,
    FunctionClient,
    RecordingClient,
    ReplayClient,
    ScriptedClient,
    ScriptError,
    api_error,
    malformed_body,
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
from typedagent.testing._render import render_message
from typedagent.testing._scripted import build_message
from typedagent.testing._stream_script import message_events

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
        assert not must_stream(client.messages, {**PARAMS, "max_tokens": None})
    assert not must_stream(ScriptedClient().messages, {**PARAMS, "max_tokens": 64_000})


def test_must_stream_remembers_the_sdks_answer_per_client_and_timeout() -> None:
    """The answer is remembered per client, model and max_tokens, and asked again when that can change it.

    That is when the client's timeout changes, or another client comes along (one at a collected client's id too).
    """
    with FakeAnthropicServer() as server:
        client = server.client()
        big = {**PARAMS, "max_tokens": 64_000}
        assert must_stream(client.messages, big)
        assert must_stream(client.messages, big)  # remembered
        client.timeout = 3600  # a timeout of the client's own: the SDK's rule no longer applies
        assert not must_stream(client.messages, big)
        for _ in range(20):  # new clients, some at a collected one's address: each asked for its own answer
            assert not must_stream(server.client(timeout=3600).messages, big)
            assert must_stream(server.client().messages, big)


async def test_stream_call_large_max_tokens_works_with_the_sdk_client() -> None:
    """max_tokens 64,000 (refused unstreamed by the SDK) succeeds: the call streams by itself."""
    with FakeAnthropicServer([output_call(GOOD)]) as server:
        agent = triage_agent(max_tokens=64_000)
        result = await execute_agent(agent, "go", client=server.client())
    assert result.ok is True
    assert result.output == GOOD
    assert server.requests[0]["stream"] is True
    assert server.requests[0]["max_tokens"] == 64_000


async def test_stream_call_large_max_tokens_works_under_execute_many() -> None:
    """Through execute_many's rate-limited client too, a max_tokens the SDK refuses unstreamed is streamed."""
    with FakeAnthropicServer([output_call(GOOD), output_call(GOOD)]) as server:
        results = [
            item.result
            async for item in execute_many(triage_agent(max_tokens=64_000), ["a", "b"], client=server.client())
        ]
    assert [result.ok for result in results] == [True, True]
    assert [request["stream"] for request in server.requests] == [True, True]


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
    assert result.error.context.status_code == 200  # type: ignore[union-attr]
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
    assert "does not retry a started stream" in result.error.message
    assert "already retried" not in result.error.message


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
        client = server.client()
        limits = ExecutionLimits(timeout_s=0.3)
        async with stream_agent(agent(), "go", client=client, limits=limits) as run:
            async for event in run:
                if event.kind == "attempt_started":
                    started = time.monotonic()  # the deadline's clock started a little before
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


async def _drain(stream: Any) -> None:
    async with stream as run:
        async for _ in run:
            pass


class OneStream:
    """A client whose streamed answer is the given events (SDK models), then what ``end`` raises, if anything."""

    def __init__(self, events: list[dict[str, Any]], end: Exception | None = None) -> None:
        self.events = events
        self.end = end
        self.messages = self
        self.closed = False

    async def create(self, **params: Any) -> Any:
        """The stream itself."""
        return self

    def __aiter__(self) -> Any:
        return self._iterate()

    async def _iterate(self) -> Any:
        from anthropic._models import construct_type
        from anthropic.types import RawMessageStreamEvent

        for data in self.events:
            yield construct_type(type_=RawMessageStreamEvent, value=data)
        if self.end is not None:
            raise self.end

    async def close(self) -> None:
        """Record the close."""
        self.closed = True


def _events_of(item: Any) -> list[dict[str, Any]]:
    rendered = render_message(item, PARAMS, call=1, message_id="msg_1", new_id=lambda: "toolu_1", source="test")
    return [event for event in message_events(rendered) if event["type"] != "ping"]


@pytest.mark.parametrize(
    ("end", "error_type", "says"),
    [
        (None, "connection_error", "ended before message_stop"),
        (httpx2.ReadTimeout("read timed out"), "timeout_error", "timed out"),
        (httpx2.ReadError("connection reset"), "connection_error", "stream broke (ReadError"),
    ],
)
async def test_stream_call_stream_cut_short_is_a_wire_error(end: Exception | None, error_type: str, says: str) -> None:
    """A stream that ends before message_stop, times out or breaks is the SDK's connection or timeout error."""
    client = OneStream(_events_of(RICH)[:6], end)
    failure = await call_model(client, dict(PARAMS), Guard(None, None), Watcher())
    assert isinstance(failure, ApiFailure)
    assert failure.error_type == error_type
    assert says in str(failure.cause).lower() or says in repr(failure.cause).lower() or says in str(failure.cause)
    assert "does not retry a started stream" in failure.advice
    assert client.closed


async def test_stream_call_unreadable_tool_input_is_reported_not_raised() -> None:
    """Tool input JSON the SDK's accumulator cannot parse fails the call (reported), and the stream is closed."""
    events = _events_of(tool_call("search", {"q": "x"}))
    broken = [
        {**event, "delta": {"type": "input_json_delta", "partial_json": "}}{"}}
        if event.get("delta", {}).get("type") == "input_json_delta"
        else event
        for event in events
    ]
    client = OneStream(broken)
    failure = await call_model(client, dict(PARAMS), Guard(None, None), Watcher())
    assert isinstance(failure, ApiFailure)
    assert "Unable to parse tool parameter JSON" in str(failure.cause)
    assert client.closed


async def test_stream_call_error_before_the_stream_starts() -> None:
    """An API error answered before any event (a 529) is the usual API error; a malformed body cannot stream."""
    async with stream_agent(agent(), "go", client=ScriptedClient([api_error(529)])) as run:
        async for _ in run:
            pass
    assert run.result.ok is False
    assert run.result.error.context.status_code == 529  # type: ignore[union-attr]
    failing = stream_agent(agent(), "go", client=ScriptedClient([malformed_body()]))
    with pytest.raises(ScriptError, match="cannot be streamed"):
        await _drain(failing)


async def test_stream_call_function_client_message_streams() -> None:
    """A FunctionClient returning a Message streams it when the request streams."""
    message = build_message(render_message(RICH, PARAMS, call=1, message_id="m", new_id=lambda: "t", source="x"))
    streamed = await call_model(FunctionClient(lambda request: message), dict(PARAMS), Guard(None, None), Watcher())
    assert _without_id(streamed) == _without_id(message)


async def test_stream_call_cassettes_record_a_failed_stream(tmp_path: Any) -> None:
    """A stream that fails with an error event is recorded as that error; the replay fails the same way."""
    path = tmp_path / "failed.json"
    recording = RecordingClient(ScriptedClient([stream_error(RICH, after=4)]), path)
    async with stream_agent(agent(), "go", client=recording) as run:
        async for _ in run:
            pass
    assert recording.entries[0]["error"]["type"] == "overloaded_error"
    async with stream_agent(agent(), "go", client=ReplayClient(path)) as replay:
        async for _ in replay:
            pass
    assert replay.result.ok is False
    assert replay.result.error.context.error_type == "overloaded_error"  # type: ignore[union-attr]


def _sse_client(events: list[dict[str, Any]]) -> Any:
    """A real AsyncAnthropic whose every request is answered 200 with ``events`` as a server-sent event stream."""
    import anthropic

    body = "".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in events).encode()

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream", "request-id": "req_sse"}, content=body
        )

    transport = httpx2.MockTransport(answer)
    return anthropic.AsyncAnthropic(api_key="test", http_client=httpx2.AsyncClient(transport=transport), max_retries=0)


def _output_events(partial_json: list[str], stop_reason: str = "tool_use") -> list[dict[str, Any]]:
    """The events of a response calling the output tool, its input streamed as ``partial_json`` chunks."""
    return [
        {"type": "message_start", "message": {**_START, "usage": {"input_tokens": 10, "output_tokens": 1}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "final_output", "input": {}},
        },
        *(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": chunk}}
            for chunk in partial_json
        ),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None}, "usage": _END_USAGE},
        {"type": "message_stop"},
    ]


_START: dict[str, Any] = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-6",
    "content": [],
    "stop_reason": None,
    "stop_sequence": None,
}
_END_USAGE: dict[str, Any] = {"output_tokens": 7}
_TEXT_START: list[dict[str, Any]] = [
    {"type": "message_start", "message": {**_START, "usage": {"input_tokens": 10, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
]
BROKEN_STREAMS: dict[str, list[dict[str, Any]]] = {
    "delta-for-an-unknown-index": [
        *_TEXT_START,
        {"type": "content_block_delta", "index": 5, "delta": {"type": "text_delta", "text": "hi"}},
    ],
    "event-before-message-start": [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ],
    "null-delta": [*_TEXT_START, {"type": "content_block_delta", "index": 0, "delta": None}],
    "invalid-tool-input-json": _output_events(["}}{"]),
}


@pytest.mark.parametrize("name", list(BROKEN_STREAMS))
async def test_stream_call_a_stream_breaking_the_protocol_is_an_api_error_of_the_call_made(name: str) -> None:
    """A stream the API answered but that breaks the event protocol is a stream_protocol_error, counted as sent."""
    client = _sse_client([*BROKEN_STREAMS[name], {"type": "message_stop"}])
    async with client, stream_agent(triage_agent(), "go", client=client) as run:
        async for _ in run:
            pass
    result = run.result
    assert not result.ok
    assert result.error.code is AgentErrorCode.API_ERROR
    context = result.error.context
    assert isinstance(context, ApiErrorContext)
    assert (context.error_type, context.status_code, context.iteration) == ("stream_protocol_error", None, 1)
    assert result.metadata.iterations == 1
    assert [attempt.iterations for attempt in result.metadata.attempts] == [1]
    assert "not sent" not in result.error.message
    assert "broke the Messages API's stream protocol" in result.error.message
    assert "run again" in result.error.message


async def test_stream_call_tool_input_that_never_completes_is_a_failure_not_a_cut_value() -> None:
    """Output-tool JSON that stops mid-value while the stream ends normally fails the call, never a truncated output."""
    chunks = ['{"severity": 2, ', '"summary": "VPN drops hourly"']  # the closing brace never comes
    client = _sse_client(_output_events(chunks))
    async with client, stream_agent(triage_agent(), "go", client=client) as run:
        async for _ in run:
            pass
    result = run.result
    assert not result.ok
    context = result.error.context
    assert isinstance(context, ApiErrorContext)
    assert context.error_type == "stream_protocol_error"
    assert "the input of tool call 'final_output' (toolu_1) never completed" in result.error.message
    assert result.metadata.tokens.input_tokens == 10  # what the broken response cost still counts
    assert result.metadata.tokens.output_tokens == 7


async def test_stream_call_tool_input_cut_by_max_tokens_stays_a_max_tokens_outcome() -> None:
    """A tool input cut off because max_tokens was reached is the MAX_TOKENS outcome, as unstreamed."""
    chunks = ['{"severity": 2, ', '"summary": "VPN drops']
    client = _sse_client(_output_events(chunks, stop_reason="max_tokens"))
    agent = triage_agent(validation=ValidationConfig(max_attempts=1))
    async with client, stream_agent(agent, "go", client=client) as run:
        async for _ in run:
            pass
    assert not run.result.ok
    assert run.result.error.code is AgentErrorCode.MAX_TOKENS

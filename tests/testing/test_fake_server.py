"""``FakeAnthropicServer``: scripts and faults served over real HTTP to the real ``anthropic`` SDK."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import anthropic
import pytest
from toolkit_support import PARIS, PROMPT, geo_agent, lookup_then_answer

from typedagent import AgentErrorCode, ApiErrorContext, execute_agent, execute_agent_sync
from typedagent.testing import (
    FakeAnthropicServer,
    ScriptedClient,
    ScriptError,
    api_error,
    conversation,
    delay,
    dropped_connection,
    malformed_body,
    output_call,
    stream_error,
    tool_call,
)

SCENARIO = [tool_call("lookup", {"query": "Paris"}), output_call(PARIS)]


def api_context(status: int | None, error_type: str, request_id: str | None) -> ApiErrorContext:
    """The API_ERROR context of a failed first call."""
    return ApiErrorContext(status_code=status, error_type=error_type, request_id=request_id, attempt=1, iteration=1)


async def test_fake_server_serves_a_script_like_the_scripted_client() -> None:
    """The same script gives the same conversation and the same requests in process and over HTTP."""
    scripted = ScriptedClient(SCENARIO)
    in_process = await execute_agent(geo_agent(), PROMPT, client=scripted)
    async with FakeAnthropicServer(SCENARIO) as server, server.client() as client:
        result = await execute_agent(geo_agent(), PROMPT, client=client)
    assert result.ok
    assert result.output == PARIS
    assert conversation(result) == conversation(in_process) == lookup_then_answer()
    assert server.requests == json.loads(json.dumps(scripted.requests))
    assert server.requests_served == 2
    assert server.remaining == 0
    assert server.problems == []
    assert server.request_headers[0]["authorization"] == "Bearer test"
    assert server.request_headers[0]["content-type"] == "application/json"


def test_fake_server_sync_context_manager() -> None:
    """``with`` works from sync code, with ``execute_agent_sync``."""
    with FakeAnthropicServer(SCENARIO) as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}"
        result = execute_agent_sync(geo_agent(), PROMPT, client=server.client())
    assert conversation(result) == lookup_then_answer()


async def test_fake_server_429_with_retry_after_is_retried_by_the_sdk() -> None:
    """A 429 with ``retry-after`` is retried by the SDK, which then gets the next item."""
    async with FakeAnthropicServer([api_error(429, retry_after=0.01), *SCENARIO]) as server:
        result = await execute_agent(geo_agent(), PROMPT, client=server.client(max_retries=1))
    assert result.ok
    assert server.requests_served == 3
    assert [headers["x-stainless-retry-count"] for headers in server.request_headers] == ["0", "1", "0"]
    assert server.requests[0] == server.requests[1]


@pytest.mark.parametrize(
    ("item", "status", "error_type"),
    [
        (api_error(529, "Overloaded"), 529, "overloaded_error"),
        (api_error(500, "Internal"), 500, "api_error"),
        (api_error(429, "Rate limited", retry_after=30), 429, "rate_limit_error"),
        (api_error(400, "tools.0: bad", request_id="req_custom"), 400, "invalid_request_error"),
    ],
)
async def test_fake_server_status_errors_reach_the_loop(item: Any, status: int, error_type: str) -> None:
    """With retries off, a status error is an API_ERROR with the status, error type and request id sent."""
    async with FakeAnthropicServer([item]) as server:
        result = await execute_agent(geo_agent(), PROMPT, client=server.client(max_retries=0))
    assert not result.ok
    assert result.error.code == AgentErrorCode.API_ERROR
    assert result.error.context == api_context(status, error_type, item.request_id or "req_fake_000001")


async def test_fake_server_error_body_and_headers_on_the_wire() -> None:
    """Errors are sent as the API sends them: status, JSON error body, request-id and retry-after headers."""
    async with FakeAnthropicServer([api_error(429, "Slow down", retry_after=7)]) as server:
        status, headers, body = await raw_request(server, json.dumps({"model": "m", "messages": []}).encode())
    assert status == "HTTP/1.1 429 Too Many Requests"
    assert headers["retry-after"] == "7"
    assert headers["request-id"] == "req_fake_000001"
    assert headers["content-type"] == "application/json"
    assert json.loads(body) == {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}


async def test_fake_server_529_status_line() -> None:
    """529 has no standard reason phrase; the server sends ``Overloaded``."""
    async with FakeAnthropicServer([api_error(529), api_error(599)]) as server:
        first = await raw_request(server, b"{}")
        second = await raw_request(server, b"{}")
    assert (first[0], second[0]) == ("HTTP/1.1 529 Overloaded", "HTTP/1.1 599 Unknown")


async def test_fake_server_slow_response_hits_the_client_timeout() -> None:
    """A delay longer than the client's timeout ends in a timeout_error API_ERROR."""
    async with FakeAnthropicServer([delay(30, output_call(PARIS))]) as server:
        result = await execute_agent(geo_agent(), PROMPT, client=server.client(max_retries=0, timeout=0.2))
    assert not result.ok
    assert result.error.context == api_context(None, "timeout_error", None)
    assert server.requests_served == 1


async def test_fake_server_delay_then_answer() -> None:
    """A short delay still answers with the delayed item."""
    async with FakeAnthropicServer([delay(0.01, SCENARIO[0]), SCENARIO[1]]) as server:
        result = await execute_agent(geo_agent(), PROMPT, client=server.client())
    assert conversation(result) == lookup_then_answer()


async def test_fake_server_timeout_item_never_answers() -> None:
    """``api_error("timeout")`` holds the request open until the client gives up."""
    async with FakeAnthropicServer([api_error("timeout")]) as server:
        result = await execute_agent(geo_agent(), PROMPT, client=server.client(max_retries=0, timeout=0.2))
    assert result.error.context == api_context(None, "timeout_error", None)


async def test_fake_server_latency_applies_to_every_reply() -> None:
    """``latency_ms`` delays every reply, so a shorter client timeout fires."""
    async with FakeAnthropicServer(SCENARIO, latency_ms=30_000, strict=False) as server:
        result = await execute_agent(geo_agent(), PROMPT, client=server.client(max_retries=0, timeout=0.2))
    assert result.error.context == api_context(None, "timeout_error", None)


async def test_fake_server_malformed_body() -> None:
    """A broken body with status 200 fails the call as a malformed response."""
    async with FakeAnthropicServer([malformed_body()]) as server:
        result = await execute_agent(geo_agent(), PROMPT, client=server.client(max_retries=0))
    assert not result.ok
    assert result.error.code == AgentErrorCode.API_ERROR
    assert result.error.context == api_context(None, "malformed_response", None)


async def test_fake_server_dropped_connection_is_retried() -> None:
    """A dropped connection is a connection error the SDK retries; without retries it is API_ERROR."""
    async with FakeAnthropicServer([dropped_connection(), *SCENARIO]) as server:
        result = await execute_agent(geo_agent(), PROMPT, client=server.client(max_retries=1))
    assert result.output == PARIS
    assert server.requests_served == 3
    assert conversation(result)[1]["content"][0]["id"] == "toolu_02_001"  # ids carry the request number
    async with FakeAnthropicServer([dropped_connection()]) as server:
        failed = await execute_agent(geo_agent(), PROMPT, client=server.client(max_retries=0))
    assert failed.error.context == api_context(None, "connection_error", None)


async def test_fake_server_script_exhausted_fails_on_exit() -> None:
    """A request beyond the script gets a 400 the SDK does not retry, and leaving the block raises."""
    server = FakeAnthropicServer([SCENARIO[0]])
    with pytest.raises(ScriptError) as caught:
        async with server:
            result = await execute_agent(geo_agent(), PROMPT, client=server.client(max_retries=2))
    assert str(caught.value) == (
        "FakeAnthropicServer could not answer 1 request(s):\n"
        "  - FakeAnthropicServer: request 2 arrived but the script has only 1 item(s). Add a response for it "
        "(the client asked for more turns or retries than the script provides)."
    )
    assert result.error.context == ApiErrorContext(
        status_code=400, error_type="invalid_request_error", request_id="req_fake_000002", attempt=1, iteration=2
    )
    assert server.requests_served == 2


async def test_fake_server_unknown_tool_and_unstreamed_stream_fault_are_problems() -> None:
    """Unknown tools and a stream fault served to a plain request are listed in ``problems`` (not strict)."""
    script = [tool_call("nope"), stream_error("x")]
    async with FakeAnthropicServer(script, strict=False) as server, server.client() as client:
        with pytest.raises(anthropic.BadRequestError, match="calls tool 'nope'"):
            await client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(anthropic.BadRequestError, match="not streamed, but its script item is a stream fault"):
            await client.messages.create(model="m", max_tokens=5, messages=[])
    assert len(server.problems) == 2
    assert server.problems[0].startswith("FakeAnthropicServer: response 1, block 1 calls tool 'nope', but the request")


async def test_fake_server_exception_in_the_block_is_not_masked() -> None:
    """When the block raises, that error propagates, not the server's problem list."""

    async def failing_test() -> None:
        async with FakeAnthropicServer([]) as server:
            await execute_agent(geo_agent(), PROMPT, client=server.client(max_retries=0))
            assert server.problems != []
            raise KeyError("own")

    with pytest.raises(KeyError, match="own"):
        await failing_test()


async def test_fake_server_per_conversation_replays_for_each_conversation() -> None:
    """In per-conversation mode every concurrent execution gets the whole scenario, retries included."""
    script = [tool_call("lookup", {"query": "Paris"}), api_error(429, retry_after=0.001), output_call(PARIS)]
    async with FakeAnthropicServer(script, per_conversation=True, latency_ms=1) as server:
        client = server.client(max_retries=2)
        results = await asyncio.gather(*(execute_agent(geo_agent(), PROMPT, client=client) for _ in range(25)))
    assert all(result.ok for result in results)
    assert server.requests_served == 75
    shapes = {json.dumps([[b["type"] for b in m["content"]] for m in conversation(r)[1:]]) for r in results}
    assert shapes == {json.dumps([["tool_use"], ["tool_result"], ["tool_use"], ["tool_result"]])}
    assert len({r.metadata.messages[1]["content"][0]["id"] for r in results}) == 25  # type: ignore[index]


async def test_fake_server_per_conversation_problems() -> None:
    """A conversation longer than the script, or a turn with only faults left, is a problem."""
    async with FakeAnthropicServer(
        [tool_call("lookup", {"query": "Paris"})], per_conversation=True, strict=False
    ) as server:
        result = await execute_agent(geo_agent(), PROMPT, client=server.client())
    assert not result.ok
    assert server.problems == [
        "FakeAnthropicServer: request 2 is turn 2 of its conversation, but the script has only 1 turn(s). "
        "Add a response for it."
    ]
    async with FakeAnthropicServer([api_error(500)], per_conversation=True, strict=False) as server:
        result = await execute_agent(geo_agent(), PROMPT, client=server.client(max_retries=1))
    assert result.error.context == api_context(400, "invalid_request_error", "req_fake_000002")
    assert server.problems == [
        "FakeAnthropicServer: request 2 (turn 1, retry 1) has no response left: the script ends with faults. "
        "Add a response after them, or lower the client's max_retries."
    ]


async def test_fake_server_per_conversation_delayed_items() -> None:
    """Delayed faults and responses keep their place in a per-conversation scenario."""
    script = [delay(0, api_error(500)), delay(0, SCENARIO[0]), SCENARIO[1]]
    async with FakeAnthropicServer(script, per_conversation=True) as server:
        result = await execute_agent(geo_agent(), PROMPT, client=server.client(max_retries=1))
    assert result.output == PARIS
    assert server.requests_served == 3


async def test_fake_server_serve_in_the_running_loop() -> None:
    """``serve()`` runs in the caller's loop until ``request_stop()``; stopping an idle server is a no-op."""
    server = FakeAnthropicServer(SCENARIO)
    server.request_stop()
    task = asyncio.create_task(server.serve())
    for _ in range(5000):  # serve() binds the port at its first await
        if server._port:
            break
        await asyncio.sleep(0.001)
    result = await execute_agent(geo_agent(), PROMPT, client=server.client())
    server.request_stop()
    await task
    assert conversation(result) == lookup_then_answer()


async def test_fake_server_add_updates_the_scenario() -> None:
    """Items added later are served, in per-conversation mode too."""
    async with FakeAnthropicServer(per_conversation=True) as server:
        server.add(SCENARIO[0]).add(SCENARIO[1])
        result = await execute_agent(geo_agent(), PROMPT, client=server.client())
    assert conversation(result) == lookup_then_answer()


async def test_fake_server_other_routes_and_bodies() -> None:
    """Other paths are 404, non-JSON bodies 400, and ``/_fake/stats`` reports the count."""
    async with FakeAnthropicServer(["hello"], strict=False) as server:
        not_found = await raw_request(server, b"", method="GET", path="/v1/models")
        not_json = await raw_request(server, b"not json")
        answered = await raw_request(server, b'{"messages": []}')
        stats = await raw_request(server, b"", method="GET", path="/_fake/stats?x=1")
    assert not_found[0] == "HTTP/1.1 404 Not Found"
    assert json.loads(not_found[2])["error"] == {
        "type": "not_found_error",
        "message": "FakeAnthropicServer serves POST /v1/messages only, not GET /v1/models.",
    }
    assert (not_json[0], json.loads(not_json[2])["error"]["type"]) == (
        "HTTP/1.1 400 Bad Request",
        "invalid_request_error",
    )
    assert json.loads(answered[2])["content"] == [{"type": "text", "text": "hello"}]
    assert json.loads(stats[2]) == {"requests_served": 1, "problems": []}


async def test_fake_server_keep_alive_chunked_and_close() -> None:
    """Several requests share one connection; chunked bodies are read; ``Connection: close`` closes it."""
    async with FakeAnthropicServer(["one", "two", "three"]) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        body = b'{"messages": []}'
        writer.write(request_bytes(body))
        first = await read_reply(reader)
        writer.write(
            b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n"
            + f"{len(body) - 4:x}\r\n".encode()
            + body[:-4]
            + b"\r\n4;ext=1\r\n"
            + body[-4:]
            + b"\r\n0\r\n\r\n"
        )
        second = await read_reply(reader)
        writer.write(request_bytes(body, extra="connection: close\r\n"))
        third = await read_reply(reader)
        assert await reader.read() == b""  # closed by the server
        writer.close()
    assert [json.loads(reply[2])["content"][0]["text"] for reply in (first, second, third)] == ["one", "two", "three"]
    assert (first[1]["connection"], third[1]["connection"]) == ("keep-alive", "close")


async def test_fake_server_survives_garbage_and_early_disconnects() -> None:
    """A client sending non-HTTP or disconnecting mid-request does not stop the server."""
    async with FakeAnthropicServer(["ok"]) as server:
        for garbage in (b"nonsense\r\n\r\n", b"POST /v1/messages HTTP/1.1\r\ncontent-length: 99\r\n\r\n{", b"partial"):
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(garbage)
            writer.write_eof()
            assert await reader.read() == b""
            writer.close()
        status, _, body = await raw_request(server, b'{"messages": []}', version="HTTP/1.0")
    assert status == "HTTP/1.1 200 OK"
    assert json.loads(body)["content"] == [{"type": "text", "text": "ok"}]


async def test_fake_server_internal_failure_is_a_500_problem() -> None:
    """A request the server cannot even inspect gets a non-retryable 500 and is listed as a problem."""
    async with FakeAnthropicServer(["x"], per_conversation=True, strict=False) as server:
        status, headers, body = await raw_request(server, b'{"messages": ["not a message"]}')
    assert (status, headers["x-should-retry"]) == ("HTTP/1.1 500 Internal Server Error", "false")
    assert json.loads(body)["error"]["message"].startswith("FakeAnthropicServer failed: AttributeError:")
    assert server.problems[0].startswith("request failed in the server: AttributeError:")


def test_fake_server_lifecycle_errors() -> None:
    """The URL needs a started server; starting twice or on a taken port fails; stopping twice is fine."""
    server = FakeAnthropicServer()
    with pytest.raises(RuntimeError, match="not started"):
        _ = server.base_url
    with server:
        with pytest.raises(RuntimeError, match="already running"):
            server.start()
        with pytest.raises(OSError, match="address already in use"):
            FakeAnthropicServer(port=server.port).start()
    server.stop()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", server.port)) != 0


def request_bytes(
    body: bytes, *, method: str = "POST", path: str = "/v1/messages", version: str = "HTTP/1.1", extra: str = ""
) -> bytes:
    """A raw HTTP request."""
    head = f"{method} {path} {version}\r\nhost: 127.0.0.1\r\ncontent-length: {len(body)}\r\n{extra}\r\n"
    return head.encode() + body


async def read_reply(reader: asyncio.StreamReader) -> tuple[str, dict[str, str], bytes]:
    """Status line, headers and body of one HTTP reply."""
    head = (await reader.readuntil(b"\r\n\r\n")).decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in head[1:] if line)
    return head[0], headers, await reader.readexactly(int(headers["content-length"]))


async def raw_request(
    server: FakeAnthropicServer,
    body: bytes,
    *,
    method: str = "POST",
    path: str = "/v1/messages",
    version: str = "HTTP/1.1",
) -> tuple[str, dict[str, str], bytes]:
    """Send one request on a fresh connection and read the reply."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(request_bytes(body, method=method, path=path, version=version))
    reply = await read_reply(reader)
    writer.close()
    return reply

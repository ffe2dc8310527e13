"""Scripted responses as the API streams them: event sequences and the fake server's server-sent events."""

from __future__ import annotations

import json

import httpx2

from typedagent.testing import (
    FakeAnthropicServer,
    ServerRateLimits,
    response,
    script_from_json,
    script_to_json,
    stream_dropped,
    stream_error,
    stream_stalled,
    text,
    thinking,
    tool_call,
)
from typedagent.testing._stream_script import message_events

MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-6",
    "content": [
        {"type": "thinking", "thinking": "Plan the answer.", "signature": "EqQBsig"},
        {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"q": "vpn"}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 12, "output_tokens": 40, "cache_read_input_tokens": 3},
}


def test_message_events_follow_the_api_sequence() -> None:
    """message_start, a ping after the first block opens, deltas, signature, message_delta with usage, message_stop."""
    events = message_events(MESSAGE)
    types = [event["type"] for event in events]
    assert types[:3] == ["message_start", "content_block_start", "ping"]
    assert types[-2:] == ["message_delta", "message_stop"]
    start = events[0]["message"]
    assert start["content"] == []
    assert start["stop_reason"] is None
    assert start["usage"]["output_tokens"] == 1
    deltas = [event["delta"] for event in events if event["type"] == "content_block_delta"]
    assert "".join(d["thinking"] for d in deltas if d["type"] == "thinking_delta") == "Plan the answer."
    assert [d["signature"] for d in deltas if d["type"] == "signature_delta"] == ["EqQBsig"]
    pieces = [d["partial_json"] for d in deltas if d["type"] == "input_json_delta"]
    assert pieces[0] == ""
    assert json.loads("".join(pieces)) == {"q": "vpn"}
    assert events[-2]["delta"]["stop_reason"] == "tool_use"
    assert events[-2]["usage"] == {"input_tokens": 12, "cache_read_input_tokens": 3, "output_tokens": 40}


async def test_fake_server_streams_server_sent_events() -> None:
    """A streamed request gets text/event-stream with one event per frame, and an error event where scripted."""
    item = response(thinking("Plan."), text("Hello"), tool_call("search", {"q": "vpn"}))
    body = {"model": "m", "max_tokens": 5, "messages": [], "stream": True, "tools": [{"name": "search"}]}
    async with FakeAnthropicServer([item, stream_error(item, after=3)]) as server, httpx2.AsyncClient() as http:
        answer = await http.post(f"{server.base_url}/v1/messages", json=body)
        failed = await http.post(f"{server.base_url}/v1/messages", json=body)
    assert answer.headers["content-type"].startswith("text/event-stream")
    frames = answer.text.strip().split("\n\n")
    names = [frame.split("\n")[0] for frame in frames]
    assert names[:3] == ["event: message_start", "event: content_block_start", "event: ping"]
    assert names[-1] == "event: message_stop"
    for frame in frames:
        name, data = frame.split("\n")
        assert json.loads(data.removeprefix("data: "))["type"] == name.removeprefix("event: ")
    last = failed.text.strip().split("\n\n")[-1].split("\n")
    assert last[0] == "event: error"
    assert json.loads(last[1].removeprefix("data: "))["error"]["type"] == "overloaded_error"


def test_message_events_carry_stop_details_in_the_message_delta() -> None:
    """A refusal's stop_details arrive in the message_delta, as the stop reason does."""
    details = {"type": "refusal", "category": "cyber", "explanation": None}
    events = message_events({**MESSAGE, "content": [], "stop_reason": "refusal", "stop_details": details})
    assert "stop_details" not in events[0]["message"]
    assert events[-2]["delta"]["stop_details"] == details


def test_stream_faults_round_trip_through_script_json() -> None:
    """Stream faults survive script_to_json / script_from_json, so the server in its own process serves them."""
    script = [stream_error(text("a"), after=2), stream_dropped("b", after=4), stream_stalled(text("c"))]
    again = script_from_json(json.loads(json.dumps(script_to_json(script))))
    assert again == [
        stream_error(response(text("a")), after=2),
        stream_dropped(response(text("b")), after=4),
        stream_stalled(response(text("c"))),
    ]


async def test_fake_server_streams_carry_the_rate_limit_headers() -> None:
    """A streamed answer of a server enforcing rate limits carries the same rate-limit headers as a plain one."""
    limits = ServerRateLimits(requests_per_minute=600)
    body = {"model": "m", "max_tokens": 5, "messages": [], "stream": True}
    async with FakeAnthropicServer(["hi"], rate_limits=limits) as server, httpx2.AsyncClient() as http:
        answer = await http.post(f"{server.base_url}/v1/messages", json=body)
    assert answer.headers["content-type"].startswith("text/event-stream")
    assert answer.headers["anthropic-ratelimit-requests-limit"] == "600"
    assert answer.headers["anthropic-ratelimit-requests-remaining"] == "599"

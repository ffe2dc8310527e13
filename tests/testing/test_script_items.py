"""Script items as JSON (for the fake server's own process) and their builders."""

from __future__ import annotations

from typing import Any

import pytest
from toolkit_support import PARIS, PROMPT, geo_agent

from typedagent import execute_agent
from typedagent.testing import (
    ApiErrorSpec,
    Block,
    Delayed,
    FakeAnthropicServer,
    FakeAnthropicServerProcess,
    MalformedBody,
    ScriptedClient,
    ScriptedResponse,
    ScriptError,
    ScriptStep,
    api_error,
    delay,
    dropped_connection,
    malformed_body,
    output_call,
    response,
    script_from_json,
    script_to_json,
    submit_call,
    thinking,
    tool_call,
    usage,
)


def test_script_to_json_writes_every_kind() -> None:
    """Each kind of item has a readable JSON form; blocks and strings become responses."""
    script = [
        tool_call("lookup", {"query": "Paris"}),
        "plain",
        response(thinking("hm"), output_call(PARIS), stop_reason="max_tokens", usage=usage(1, 2)),
        tool_call("ghost", unknown=True),
        api_error(429, "slow", retry_after=1.5),
        delay(0.25, submit_call(id="s1")),
        malformed_body("{", status=200),
    ]
    assert script_to_json(script) == [
        {
            "kind": "response",
            "content": [{"type": "tool_use", "name": "lookup", "input": {"query": "Paris"}, "id": None}],
            "stop_reason": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
        {
            "kind": "response",
            "content": [{"type": "text", "text": "plain"}],
            "stop_reason": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
        {
            "kind": "response",
            "content": [
                {"type": "thinking", "thinking": "hm", "signature": "scripted-signature"},
                {
                    "type": "tool_use",
                    "name": None,
                    "input": {"city": "Paris", "population": 2100000},
                    "id": None,
                    "output": True,
                },
            ],
            "stop_reason": "max_tokens",
            "usage": {
                "input_tokens": 1,
                "output_tokens": 2,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        },
        {
            "kind": "response",
            "content": [{"type": "tool_use", "name": "ghost", "input": {}, "id": None, "unknown": True}],
            "stop_reason": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
        {
            "kind": "error",
            "status": 429,
            "message": "slow",
            "error_type": None,
            "request_id": None,
            "headers": {"retry-after": "1.5"},
        },
        {
            "kind": "delay",
            "seconds": 0.25,
            "item": {
                "kind": "response",
                "content": [{"type": "tool_use", "name": "submit", "input": {}, "id": "s1"}],
                "stop_reason": None,
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        },
        {"kind": "malformed", "body": "{", "status": 200},
    ]


def test_script_from_json_round_trips() -> None:
    """Reading the JSON back gives equal items (blocks and strings as one-block responses)."""
    script = [
        response("a", tool_call("lookup", {"query": "x"}), output_call({"city": "X", "population": 1})),
        api_error("connection", "gone"),
        delay(1, api_error(529)),
        malformed_body(),
    ]
    assert script_from_json(script_to_json(script)) == script
    assert script_from_json(["hi"]) == ["hi"]
    assert script_from_json(script_to_json([tool_call("t", id="x")])) == [
        ScriptedResponse(blocks=(tool_call("t", id="x"),))
    ]
    tool_use = script_from_json([{"kind": "response", "content": [{"type": "tool_use", "name": "t", "input": {}}]}])
    assert tool_use == [response(Block(type="tool_use", data={"name": "t", "input": {}, "id": None}))]


@pytest.mark.parametrize("entry", [{"kind": "nope"}, 42, ["response"]])
def test_script_from_json_rejects_unknown_entries(entry: object) -> None:
    """Anything that is not an item says what an item looks like."""
    with pytest.raises(ValueError, match=r"is not a script item: expected a string or an object whose 'kind' is"):
        script_from_json([entry])


def test_fault_builders() -> None:
    """The fault helpers build the items the clients and server understand."""
    assert api_error(429, retry_after=2) == ApiErrorSpec(
        status=429, message="scripted API error", headers={"retry-after": "2"}
    )
    assert dropped_connection() == ApiErrorSpec(
        status="connection", message="the server closed the connection without a response"
    )
    assert delay(1, "x") == Delayed(seconds=1, item="x")
    assert malformed_body() == MalformedBody(body='{"type": "message", "content": [', status=200)
    assert api_error(418).resolved_type == "api_error"
    assert api_error("timeout").resolved_type == "api_error"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf"), -1.0])
def test_configured_delays_must_be_finite(bad: float) -> None:
    """Delays, retry-after headers and server latencies refuse NaN, infinities and negatives."""
    makers: list[Any] = [
        lambda: delay(bad, "x"),
        lambda: script_from_json([{"kind": "delay", "seconds": str(bad), "item": "x"}]),
        lambda: api_error(429, retry_after=bad),
        lambda: FakeAnthropicServer([], latency_ms=bad),
        lambda: FakeAnthropicServerProcess([], latency_ms=bad),
    ]
    for make in makers:
        with pytest.raises(ValueError, match="must be a finite number >= 0"):
            make()


def test_script_helpers_all_build_script_steps() -> None:
    """Every helper returns a ScriptStep, the one element type a mixed script has."""
    built = [
        tool_call("lookup"),
        output_call(PARIS),
        submit_call(),
        thinking("hm"),
        response("a", "b"),
        api_error(529),
        dropped_connection(),
        delay(1, "late"),
        malformed_body(),
    ]
    assert [type(item).__mro__[1] for item in built] == [ScriptStep] * len(built)


async def test_foreign_script_steps_are_refused_with_a_message() -> None:
    """A ScriptStep no helper builds fails the test, saying how scripts are made."""
    with pytest.raises(ScriptError, match=r"^ScriptStep is not a script item: build scripts with the typedagent"):
        await execute_agent(geo_agent(), PROMPT, client=ScriptedClient([ScriptStep()]))

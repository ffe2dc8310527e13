"""``ScriptedClient`` and the script item builders, driven through the real loop."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest
from toolkit_support import PARIS, PROMPT, Answer, geo_agent, lookup_then_answer

from typedagent import AgentErrorCode, ApiErrorContext, ExecutionLimits, OutputTool, execute_agent
from typedagent.testing import (
    ScriptedClient,
    ScriptError,
    api_error,
    assert_valid_conversation,
    conversation,
    delay,
    dropped_connection,
    malformed_body,
    output_call,
    redacted_thinking,
    response,
    submit_call,
    text,
    thinking,
    tool_call,
    usage,
)


async def test_scripted_client_runs_a_helper_then_the_output() -> None:
    """A helper call then an output call from a model instance give the exact conversation expected."""
    client = ScriptedClient([tool_call("lookup", {"query": "Paris"}), output_call(PARIS)])
    result = await execute_agent(geo_agent(), PROMPT, client=client)
    assert result.ok
    assert result.output == PARIS
    assert conversation(result) == lookup_then_answer()
    assert client.remaining == 0


async def test_scripted_client_records_every_request() -> None:
    """Each request is recorded with model, system, tools, tool_choice and the messages as sent then."""
    client = ScriptedClient([tool_call("lookup", {"query": "Paris"}), output_call(PARIS)])
    await execute_agent(geo_agent(), PROMPT, client=client)
    assert len(client.requests) == 2
    first, second = client.requests
    assert first["model"] == "claude-haiku-4-5"
    assert first["system"].startswith("Answer geography questions.\n\nCalling `answer` hands over")
    assert [tool["name"] for tool in first["tools"]] == ["lookup", "answer"]
    assert first["tool_choice"] == {"type": "any"}
    assert first["messages"] == [{"role": "user", "content": PROMPT}]
    assert second["messages"] == lookup_then_answer()[:3]


async def test_scripted_client_output_call_from_dict_and_several_calls_in_one_response() -> None:
    """``response`` puts several blocks (text, calls, a dict output) in one turn with custom usage."""
    client = ScriptedClient(
        [
            response(
                "Let me check.",
                tool_call("lookup", {"query": "Paris"}, id="toolu_a"),
                tool_call("lookup", {"query": "France"}, id="toolu_b"),
                usage=usage(100, 20, cache_creation_input_tokens=7, cache_read_input_tokens=3),
            ),
            output_call({"city": "Paris", "population": 2100000}, id="toolu_c"),
        ]
    )
    result = await execute_agent(geo_agent(), PROMPT, client=client)
    assert result.ok
    assert conversation(result)[1:3] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check."},
                {"id": "toolu_a", "input": {"query": "Paris"}, "name": "lookup", "type": "tool_use"},
                {"id": "toolu_b", "input": {"query": "France"}, "name": "lookup", "type": "tool_use"},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "facts about Paris"},
                {"type": "tool_result", "tool_use_id": "toolu_b", "content": "facts about France"},
            ],
        },
    ]
    tokens = result.metadata.tokens
    assert (tokens.input_tokens, tokens.output_tokens) == (110, 25)
    assert (tokens.cache_creation_input_tokens, tokens.cache_read_input_tokens) == (7, 3)


async def test_scripted_client_thinking_blocks_are_kept_verbatim() -> None:
    """Thinking and redacted thinking blocks reach the conversation unchanged, before the call."""
    client = ScriptedClient(
        [response(thinking("Paris, surely.", "sig-1"), redacted_thinking("opaque"), output_call(PARIS))]
    )
    result = await execute_agent(geo_agent(), PROMPT, client=client)
    assert conversation(result)[1]["content"][:2] == [
        {"type": "thinking", "thinking": "Paris, surely.", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "opaque"},
    ]


async def test_scripted_client_stop_reason_and_plain_text() -> None:
    """A chosen stop_reason is served as is; a plain string is an end_turn text response."""
    client = ScriptedClient([response(text("cut"), stop_reason="max_tokens"), "just text", output_call(PARIS)])
    first = await client.messages.create(model="m", messages=[], tools=[{"name": "answer"}])
    second = await client.messages.create(model="m", messages=[], tools=[{"name": "answer"}])
    assert (first.stop_reason, second.stop_reason) == ("max_tokens", "end_turn")
    assert second.content[0].type == "text"
    assert second.content[0].text == "just text"
    third = await client.messages.create(model="m", messages=[], tools=[{"name": "answer"}])
    assert (third.id, third.stop_reason, third.content[0].id) == ("msg_scripted_003", "tool_use", "toolu_03_001")


async def test_scripted_client_submit_call_in_reflection_mode() -> None:
    """``submit_call`` ends a reflection-mode attempt with the latest candidate."""
    agent = geo_agent(output=OutputTool(Answer, name="answer", reflection_handler=lambda a: f"{a.city}?"))
    client = ScriptedClient([output_call(PARIS), submit_call()])
    result = await execute_agent(agent, PROMPT, client=client)
    assert result.ok
    assert [tool["name"] for tool in client.requests[0]["tools"]] == ["lookup", "answer", "submit"]
    assert conversation(result)[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_01_001", "content": "Paris?"}
    ]


async def test_scripted_client_script_runs_out_fails_the_test() -> None:
    """A request beyond the script raises ScriptError naming the call (not an API_ERROR result)."""
    client = ScriptedClient([tool_call("lookup", {"query": "Paris"})])
    with pytest.raises(ScriptError) as caught:
        await execute_agent(geo_agent(), PROMPT, client=client)
    assert str(caught.value) == (
        "ScriptedClient: request 2 arrived but the script has only 1 item(s). Add a response for it "
        "(the loop asked for more turns than the script provides)."
    )
    assert isinstance(caught.value, AssertionError)


async def test_scripted_client_unknown_tool_fails_unless_marked() -> None:
    """Calling a tool the request does not offer is a ScriptError, unless ``unknown=True``."""
    with pytest.raises(ScriptError, match=r"response 1, block 2 calls tool 'serach', but the request offered only"):
        await execute_agent(geo_agent(), PROMPT, client=ScriptedClient([response("hm", tool_call("serach"))]))
    client = ScriptedClient([tool_call("serach", unknown=True), output_call(PARIS)])
    result = await execute_agent(geo_agent(), PROMPT, client=client)
    assert result.ok
    assert conversation(result)[2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01_001",
            "content": "Error: Unknown tool serach",
            "is_error": True,
        }
    ]


async def test_scripted_client_output_call_needs_tools() -> None:
    """``output_call`` without a name fails clearly when the request offers no tools."""
    client = ScriptedClient([output_call(PARIS)])
    with pytest.raises(ScriptError, match=r"^ScriptedClient: request 1 offers no tools, so output_call has none"):
        await client.messages.create(model="m", messages=[])


@pytest.mark.parametrize(
    ("item", "status", "error_type", "cls"),
    [
        (api_error(429, "slow down", retry_after=2), 429, "rate_limit_error", anthropic.RateLimitError),
        (api_error(529, "busy"), 529, "overloaded_error", anthropic.OverloadedError),
        (api_error(500), 500, "api_error", anthropic.InternalServerError),
        (api_error(418, error_type="teapot_error"), 418, "teapot_error", anthropic.APIStatusError),
        (api_error(402), 402, "billing_error", anthropic.PaymentRequiredError),
    ],
)
async def test_scripted_client_api_error_raises_the_sdk_exception(
    item: Any, status: int, error_type: str, cls: type[Exception]
) -> None:
    """``api_error(status)`` raises the SDK's class for that status with the API's error body and headers."""
    client = ScriptedClient([item])
    with pytest.raises(cls) as caught:
        await client.messages.create(model="m", messages=[])
    error: Any = caught.value
    assert (error.status_code, error.type, error.request_id) == (status, error_type, f"req_scripted_{status}")
    assert error.body == {"type": "error", "error": {"type": error_type, "message": item.message}}
    if status == 429:
        assert error.response.headers["retry-after"] == "2"


async def test_scripted_client_api_error_becomes_api_error_result() -> None:
    """Through the loop an injected error is an API_ERROR failure carrying status, type and request id."""
    client = ScriptedClient([api_error(529, request_id="req_42")])
    result = await execute_agent(geo_agent(), PROMPT, client=client)
    assert not result.ok
    assert result.error.code == AgentErrorCode.API_ERROR
    assert result.error.context == ApiErrorContext(
        status_code=529, error_type="overloaded_error", request_id="req_42", attempt=1, iteration=1
    )


@pytest.mark.parametrize(
    ("item", "cls"),
    [(api_error("timeout"), anthropic.APITimeoutError), (dropped_connection(), anthropic.APIConnectionError)],
)
async def test_scripted_client_connection_faults(item: Any, cls: type[Exception]) -> None:
    """Timeouts and dropped connections raise the SDK's own exceptions in process."""
    with pytest.raises(cls):
        await ScriptedClient([item]).messages.create(model="m", messages=[])


async def test_scripted_client_malformed_bodies_fail_like_the_sdk() -> None:
    """A broken JSON body raises the SDK's JSON error; JSON that is no Message is returned unvalidated."""
    client = ScriptedClient([malformed_body(), malformed_body('{"surprise": true}'), malformed_body("[]")])
    with pytest.raises(json.JSONDecodeError):
        await client.messages.create(model="m", messages=[])
    odd = await client.messages.create(model="m", messages=[])
    assert odd.model_extra == {"surprise": True}
    assert odd.content is None
    assert (await client.messages.create(model="m", messages=[])).content is None
    result = await execute_agent(geo_agent(), PROMPT, client=ScriptedClient([malformed_body()]))
    assert not result.ok
    assert result.error.code == AgentErrorCode.API_ERROR


async def test_scripted_client_malformed_error_status_raises_status_error() -> None:
    """A malformed body with an error status raises the SDK's status error for it."""
    with pytest.raises(anthropic.InternalServerError) as caught:
        await ScriptedClient([malformed_body("<html>bad gateway</html>", status=502)]).messages.create(model="m")
    assert caught.value.status_code == 502


async def test_scripted_client_delay_lets_the_timeout_limit_fire() -> None:
    """A delayed response is served after its pause, so an execution deadline shorter than it fires."""
    client = ScriptedClient([delay(30, output_call(PARIS))])
    result = await execute_agent(geo_agent(), PROMPT, client=client, limits=ExecutionLimits(timeout_s=0.05))
    assert not result.ok
    assert result.error.code == AgentErrorCode.TIMEOUT
    served = ScriptedClient([delay(0, delay(0, output_call(PARIS)))])
    assert (await execute_agent(geo_agent(), PROMPT, client=served)).ok


async def test_scripted_client_add_extends_the_script() -> None:
    """``add`` appends items (chainable) and ``remaining`` counts what is left."""
    client = ScriptedClient().add(tool_call("lookup", {"query": "Paris"})).add(output_call(PARIS))
    assert client.remaining == 2
    result = await execute_agent(geo_agent(), PROMPT, client=client)
    assert result.ok
    assert client.remaining == 0
    assert_valid_conversation(result)


def test_scripted_client_is_not_collected_by_pytest() -> None:
    """The class opts out of pytest collection despite its ``Test``-free but script-like name."""
    assert ScriptedClient.__test__ is False


def test_scripted_client_disagreement_raises_when_create_is_called() -> None:
    """A script that cannot answer raises as ``messages.create`` is called, before there is anything to await."""
    client = ScriptedClient([tool_call("nope")])
    with pytest.raises(ScriptError, match=r"^ScriptedClient: response 1, block 1 calls tool 'nope'"):
        client.messages.create(model="m", messages=[], tools=[{"name": "lookup"}])
    with pytest.raises(ScriptError, match=r"^ScriptedClient: request 2 arrived but the script has only 1 item"):
        client.messages.create(model="m", messages=[])


async def test_scripted_client_behind_an_awaiting_wrapper_is_api_error() -> None:
    """A wrapper that awaits the scripted call inside its own coroutine turns a ScriptError into API_ERROR."""
    scripted = ScriptedClient([])

    class Wrapper:
        def __init__(self) -> None:
            self.messages = self

        async def create(self, **params: Any) -> Any:
            return await scripted.messages.create(**params)

    result = await execute_agent(geo_agent(), PROMPT, client=Wrapper())
    assert not result.ok
    assert result.error.context.error_type == "ScriptError"  # type: ignore[union-attr]
    assert "ScriptedClient: request 1 arrived but the script has only 0 item(s)." in result.error.message

"""The real SDK path: ``anthropic.AsyncAnthropic`` over ``httpx2.MockTransport``, end to end."""

from __future__ import annotations

import json
import pickle
from typing import Any

import anthropic
import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from support import GOOD, Triage, reflecting, triage_agent

from typedagent import (
    AgentErrorCode,
    ApiErrorContext,
    ExecuteCallbacks,
    ExecuteFailure,
    OutputTool,
    ValidationConfig,
    define_agent,
    execute_agent,
    tool,
)
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


def nested(depth: int) -> Any:
    """A JSON value ``depth`` objects deep."""
    value: Any = "leaf"
    for _ in range(depth):
        value = {"child": value}
    return value


def body(content: list[dict[str, Any]], stop_reason: str = "tool_use", usage: Any = None) -> dict[str, Any]:
    """A response body whose usage may have any shape (default: 10 input, 5 output tokens)."""
    return {
        **message(content, stop_reason),
        "usage": {"input_tokens": 10, "output_tokens": 5} if usage is None else usage,
    }


def output_use(**extra: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_h", "name": "final_output", "input": {**GOOD.model_dump(), **extra}}


HOSTILE: dict[str, tuple[dict[str, Any], str, int]] = {
    "deep-output-input": (body([output_use(extra=nested(300))]), "nested more than 100 levels deep", 15),
    "deep-helper-input": (
        body([{"type": "tool_use", "id": "toolu_h", "name": "lookup", "input": {"query": nested(120)}}]),
        "content block 0 of the response is nested more than 100 levels deep",
        15,
    ),
    "deep-unknown-block": (
        body([{"type": "text", "text": "hi"}, {"type": "future_block", "data": [nested(200)]}], "end_turn"),
        "content block 1 of the response is nested more than 100 levels deep",
        15,
    ),
    "usage-string": (body([output_use()], usage="n/a"), "the response's usage is not a set of token counts", 0),
    "usage-list": (body([output_use()], usage=[10, 5]), "the response's usage is not a set of token counts", 0),
    "usage-bool": (
        body([output_use()], usage={"input_tokens": True, "output_tokens": 5}),
        "the response's usage is not a set of token counts",
        0,
    ),
    "refusal-null-text": (
        body([{"type": "text", "text": None}], "refusal"),
        "text block 0 of the response has no text string",
        15,
    ),
    "text-object": (body([{"type": "text", "text": {"a": 1}}], "end_turn"), "text block 0 of the response", 15),
}


@pytest.mark.parametrize("case", list(HOSTILE))
async def test_sdk_path_hostile_content_is_a_malformed_response(case: str) -> None:
    """Over the real SDK, deep or wrongly shaped content is API_ERROR 'malformed_response', never an exception."""
    hostile, reason, tokens = HOSTILE[case]
    seen: list[dict[str, Any]] = []
    hooks = ExecuteCallbacks(on_model_response=lambda s, e: None, on_tool_call=lambda s, e: None)
    result = await execute_agent(
        triage_agent(helpers=[lookup]), "x", client=sdk_client([(200, hostile)], seen), callbacks=hooks
    )
    assert isinstance(result, ExecuteFailure)
    assert result.error.context == ApiErrorContext(
        status_code=None, error_type="malformed_response", request_id=None, attempt=1, iteration=1
    )
    assert reason in result.error.message
    assert result.metadata.tokens.total == tokens
    assert result.metadata.messages == [{"role": "user", "content": "x"}]
    assert result.metadata.callback_errors == ()
    assert_valid_conversation(result.metadata.messages)
    assert pickle.loads(pickle.dumps(result)).error.message == result.error.message


UNSENDABLE = {
    "nan": (output_use(extra=[1.5, float("nan")]), "holds a number that is not finite (NaN or infinity)"),
    "infinity": (output_use(extra={"x": float("inf")}), "holds a number that is not finite"),
    "surrogate-text": ({"type": "text", "text": "a\ud800b"}, "holds text with an unpaired surrogate"),
    "surrogate-key": (output_use(extra={"k\udc00": 1}), "holds text with an unpaired surrogate"),
    # the same at the first level of the input, and in a block's own field: both are read without the deep walk
    "surrogate-input-key": (output_use(**{"k\udc00": 1}), "holds text with an unpaired surrogate"),
    "surrogate-input-value": (output_use(extra="a\udfffb"), "holds text with an unpaired surrogate"),
    "surrogate-id": ({**output_use(), "id": "toolu_\ud800"}, "holds text with an unpaired surrogate"),
    "infinity-input-value": (output_use(extra=float("-inf")), "holds a number that is not finite"),
}


@pytest.mark.parametrize("case", list(UNSENDABLE))
async def test_sdk_path_content_json_cannot_send_back_is_a_malformed_response(case: str) -> None:
    """NaN, Infinity or an unpaired surrogate escape parse, but cannot be sent back: 'malformed_response' at once."""
    block, reason = UNSENDABLE[case]
    raw = json.dumps(body([block], "end_turn")).encode()  # json.dumps writes NaN, Infinity and \ud800 escapes

    def handle(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=raw, headers={"content-type": "application/json"})

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handle))
    client = anthropic.AsyncAnthropic(api_key="test-key", http_client=http, max_retries=0)
    result = await execute_agent(triage_agent(), "x", client=client)
    assert isinstance(result, ExecuteFailure)
    assert result.error.context.error_type == "malformed_response"  # type: ignore[union-attr]
    assert f"content block 0 of the response {reason}" in result.error.message
    assert result.error.message.endswith(
        "Text the model read (the prompt, a document, a tool result) can steer it "
        "into such output: treat those inputs as untrusted."
    )
    assert result.metadata.tokens.total == 15
    assert result.metadata.messages == [{"role": "user", "content": "x"}]


@pytest.mark.parametrize(("depth", "ok"), [(98, True), (99, False)])
async def test_sdk_path_content_nested_up_to_the_limit_is_kept(depth: int, ok: bool) -> None:
    """A tool input 100 levels deep (counting the block) is kept verbatim and sent back; one level more is not."""
    seen: list[dict[str, Any]] = []
    deep = output_use(extra=nested(depth))
    events: list[Any] = []
    hooks = ExecuteCallbacks(
        on_model_response=lambda s, e: events.append(e), on_tool_call=lambda s, e: events.append(e)
    )
    replies = [(200, body([{"type": "text", "text": "a"}, deep])), (200, body([output_use()]))]
    agent = triage_agent(output=reflecting(), validation=ValidationConfig(max_attempts=1, max_iterations_per_attempt=2))
    result = await execute_agent(agent, "x", client=sdk_client(replies, seen), callbacks=hooks)
    assert result.metadata.callback_errors == ()
    if ok:
        assert seen[1]["messages"][1]["content"][1] == deep
        assert len(events) == 4  # two responses, two output calls
    else:
        assert isinstance(result, ExecuteFailure)
        assert result.error.context.error_type == "malformed_response"  # type: ignore[union-attr]
        assert len(seen) == 1


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


_JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=6)
)
_JSON_VALUES = st.recursive(
    _JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=4), inner, max_size=4
        )
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=_JSON_VALUES)
def test_the_response_checks_shortcut_passes_only_what_the_full_walk_passes(value: Any) -> None:
    """The quick check of content (every response takes it) never passes what the full walk would refuse.

    It says "sendable" only where the walk finds no problem (NaN, infinity, a lone surrogate in a value or a key),
    and says it for all such data unless its text mentions NaN or Infinity (then the walk decides).
    """
    from anthropic.types import ToolUseBlock

    _assert_shortcut_agrees(ToolUseBlock(id="toolu_1", name="lookup", type="tool_use", input={"value": value}), value)


def _assert_shortcut_agrees(block: Any, value: Any) -> None:
    """The quick check passes ``block`` (holding ``value``) only if the walk does, and does for words-free data."""
    from typedagent._api.response import _content_problem, _plainly_sendable

    problem = _content_problem(block)
    sendable = _plainly_sendable(block)
    if sendable:
        assert problem is None
    if problem is None and "NaN" not in repr(value) and "Infinity" not in repr(value):
        assert sendable


def _cited_text(start: Any) -> dict[str, Any]:
    """A text block with one citation whose ``start_char_index`` is ``start``."""
    citation = {"type": "char_location", "cited_text": "x", "document_index": 0, "document_title": None}
    return {"type": "text", "text": "t", "citations": [{**citation, "start_char_index": start, "end_char_index": 1}]}


@settings(max_examples=200, deadline=None)
@given(value=_JSON_VALUES)
def test_the_response_checks_shortcut_looks_inside_nested_models_too(value: Any) -> None:
    """Content inside the models a block holds (a citation of a text block) is cleared as strictly as a tool input.

    A model's own serializer would write a NaN there as null: the check opens models into their fields instead.
    """
    from anthropic._models import construct_type
    from anthropic.types import TextBlock

    _assert_shortcut_agrees(construct_type(type_=TextBlock, value=_cited_text(value)), value)


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_a_number_that_is_not_finite_inside_a_citation_is_refused(number: float) -> None:
    """The API's citations are models inside a block: a NaN there is found like one in a tool input."""
    from anthropic._models import construct_type
    from anthropic.types import Message

    from typedagent._api.response import MalformedResponse, check_response

    message = construct_type(type_=Message, value=body([_cited_text(number)], stop_reason="end_turn"))
    with pytest.raises(MalformedResponse, match="holds a number that is not finite"):
        check_response(message)


@pytest.mark.parametrize("depth", [97, 98, 99, 100, 101])
def test_the_response_checks_shortcut_and_the_walk_agree_on_depth(depth: int) -> None:
    """Around the limit of ``MAX_CONTENT_DEPTH`` levels (the block counts as the first), both see the same."""
    from anthropic.types import ToolUseBlock

    from typedagent._api.response import _content_problem, _plainly_sendable

    block = ToolUseBlock(id="toolu_1", name="lookup", type="tool_use", input=nested(depth))
    problem = _content_problem(block)
    assert (problem is None) == (depth <= 99)  # the block at 1, the input at 2: the innermost object at depth + 1
    assert _plainly_sendable(block) == (problem is None)

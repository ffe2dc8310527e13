"""Tool definitions and the conversation handed to the SDK ready to send: the same bytes, or the SDK's own copy."""

from __future__ import annotations

import asyncio
import base64
import datetime
import math
from pathlib import Path
from typing import Any

import anthropic
import httpx2
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from support import GOOD, triage_agent

from typedagent import execute_agent
from typedagent._api.sdk_ready import SdkReady, for_the_sdk, plain_json
from typedagent.testing import FakeAnthropicServer, ScriptedClient, output_call

_ANSWER = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-6",
    "content": [],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}


def _recording_client(bodies: list[bytes]) -> anthropic.AsyncAnthropic:
    def handle(request: httpx2.Request) -> httpx2.Response:
        bodies.append(request.content)
        return httpx2.Response(200, json=_ANSWER)

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handle))
    return anthropic.AsyncAnthropic(api_key="test-key", max_retries=0, http_client=http)


def _sent(params: dict[str, Any], *, beta: bool, ready: bool) -> bytes | str:
    """The request body the SDK sends for ``params`` (``ready``: through ``for_the_sdk``), or what it raised."""
    bodies: list[bytes] = []
    client = _recording_client(bodies)
    resource: Any = client.beta.messages if beta else client.messages
    sent = for_the_sdk(resource, params) if ready else params
    try:
        asyncio.run(resource.create(**sent))
    except Exception as exc:
        return type(exc).__name__
    return bodies[-1]


class _Model(BaseModel):
    text: str


_ODD: Any = st.sampled_from(
    [
        math.nan,
        math.inf,
        (1, "two"),
        frozenset({"a"}),
        datetime.date(2026, 11, 26),
        datetime.datetime(2026, 11, 26, 12, tzinfo=datetime.UTC),
        _Model(text="a model"),
        anthropic.omit,
        b"bytes",
        "\ud800",  # a lone surrogate: JSON text, but no UTF-8
    ]
)
_JSON: Any = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
_ANY: Any = st.recursive(
    _JSON | _ODD,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _params(tools: Any, content: Any) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-6",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": content}],
        "tools": [{"name": "lookup", "input_schema": {"type": "object", "properties": tools}}],
    }


@settings(max_examples=60, deadline=None)
@given(tools=_ANY, content=_ANY, beta=st.booleans())
def test_sdk_ready_sends_the_same_bytes_as_the_sdks_own_copy(tools: Any, content: Any, beta: bool) -> None:
    """Whatever the values (JSON, NaN, tuples, dates, models, ``omit``, surrogates), the body is the SDK's own."""
    params = _params(tools, content)
    assert _sent(params, beta=beta, ready=True) == _sent(params, beta=beta, ready=False)


@settings(max_examples=40, deadline=None)
@given(tools=_JSON, content=_JSON)
def test_sdk_ready_hands_json_data_over_without_the_sdks_copy(tools: Any, content: Any) -> None:
    """JSON data goes ready (the SDK takes it as its copy); the caller's parameters are left as they were."""
    params = _params(tools, content)
    before = repr(params)
    client = anthropic.AsyncAnthropic(api_key="test-key")
    plain = for_the_sdk(client.messages, params)
    assert isinstance(plain["tools"], SdkReady)
    assert isinstance(plain["messages"], SdkReady)
    assert plain["messages"].model_dump(mode="json", exclude_unset=True) is params["messages"]
    beta = for_the_sdk(client.beta.messages, params)
    assert isinstance(beta["messages"], SdkReady)
    assert beta["tools"] is params["tools"]  # the beta resource reads its tools itself
    assert repr(params) == before
    assert params["tools"] is not plain["tools"]


def test_sdk_ready_leaves_a_file_to_the_sdk_which_reads_it(tmp_path: Path) -> None:
    """A document whose data is a file to read is no JSON data: the SDK's copy reads and encodes it, as before."""
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(b"%PDF-1.4 tiny")
    source = {"type": "base64", "media_type": "application/pdf", "data": pdf}
    params = _params({}, [{"type": "document", "source": source}])
    client = anthropic.AsyncAnthropic(api_key="test-key")
    assert not isinstance(for_the_sdk(client.messages, params)["messages"], SdkReady)
    body = _sent(params, beta=False, ready=True)
    assert isinstance(body, bytes)
    assert base64.b64encode(b"%PDF-1.4 tiny") in body
    assert body == _sent(params, beta=False, ready=False)


def test_sdk_ready_only_for_the_sdks_own_resources() -> None:
    """Any other client (a testing client, a wrapper) gets its parameters as they are, the same dict."""
    params = _params({}, "hello")
    assert for_the_sdk(ScriptedClient([]).messages, params) is params
    assert for_the_sdk(object(), params) is params


def test_sdk_ready_plain_json_is_strict() -> None:
    """Plain: what the SDK's copy leaves as it is, or turns into what encodes the same (a tuple into a list)."""
    assert plain_json([{"a": [1, 2.5, None, True, "x"]}])
    assert plain_json([(1, 2)])  # a tuple: the SDK copies it into a list, which encodes the same
    assert not plain_json([math.nan])
    assert not plain_json([{"a": datetime.date(2026, 1, 1)}])
    assert not plain_json([anthropic.omit])
    cycle: list[Any] = []
    cycle.append(cycle)
    assert not plain_json(cycle)


async def test_sdk_ready_run_over_http_sends_what_the_sdk_would() -> None:
    """A whole run over HTTP: the requests the server receives parse as the conversation typedagent kept."""
    server = FakeAnthropicServer([output_call(GOOD)])
    async with server, server.client() as client:
        result = await execute_agent(triage_agent(), "a ticket", client=client)
    assert result.ok
    assert server.requests[0]["messages"] == [{"role": "user", "content": "a ticket"}]
    assert [tool["name"] for tool in server.requests[0]["tools"]] == ["final_output"]

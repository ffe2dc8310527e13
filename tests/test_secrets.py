"""The API key never leaks: not in logs, error messages, metadata, cassettes or reprs (issue 5, point 5).

Every scenario runs the real SDK over real HTTP (``FakeAnthropicServer``), with every logger at
DEBUG (the SDK's ``anthropic`` and ``httpx2`` loggers included), then searches everything typedagent
hands back or writes for the key. Each test also proves the key was in play — the server received
it — so a pass is not vacuous.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import pickle
import secrets
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anthropic
import pytest
from pydantic import BaseModel

from typedagent import (
    AgentDefinition,
    AgentErrorCode,
    AgentExecutionError,
    ApiErrorContext,
    ExecuteCallbacks,
    ExecuteFailure,
    ExecuteResult,
    OutputTool,
    define_agent,
    execute_agent,
    tool,
)
from typedagent.testing import (
    FakeAnthropicServer,
    RecordingClient,
    ReplayClient,
    ScriptItem,
    api_error,
    conversation,
    dropped_connection,
    malformed_body,
    output_call,
    tool_call,
)

KEY = f"sk-ant-api03-{secrets.token_hex(24)}-typedagentSecretTest"
"""A fresh key per run: it cannot appear anywhere by coincidence."""
FRAGMENTS = (KEY, KEY[14:40])
"""The key, and a distinctive slice of it (catches a key that was cut or reformatted)."""


class Out(BaseModel):
    n: int


class Details(BaseModel):
    """Error details of an API error (the SDK keeps them as a model)."""

    note: str


@tool
async def lookup(query: str) -> str:
    """Look up."""
    return f"found {query}"


def agent() -> AgentDefinition[Out, None]:
    return define_agent(name="secrets", model="claude-sonnet-4-6", output=OutputTool(Out), helpers=[lookup])


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Capture every log record at DEBUG, the SDK's own loggers included."""
    caplog.set_level(logging.DEBUG)
    for name in ("anthropic", "anthropic._base_client", "httpx2", "httpcore2", "typedagent", "asyncio"):
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


def everything_said(
    result: ExecuteResult[Any], events: list[Any], logs: pytest.LogCaptureFixture | None
) -> dict[str, str]:
    """Every text a user could print, log, pickle or store after a run, by where it comes from."""
    texts = {
        "logs": logs.text + "\n".join(str(r.__dict__) for r in logs.records) if logs else "",
        "repr(result)": repr(result),
        "str(result)": str(result),
        "metadata": repr(dataclasses.asdict(result.metadata)),
        "messages": json.dumps(conversation(result.metadata.messages), default=str),
        "callback events": repr(events),
    }
    if isinstance(result, ExecuteFailure):
        error = result.error
        with pytest.raises(AgentExecutionError) as raised:
            result.unwrap()
        texts |= {
            "error.message": error.message,
            "str(error)": str(error),
            "repr(error)": repr(error),
            "context": repr(error.context),
            "unwrap()": f"{raised.value!s} {raised.value!r}",
            "cause": f"{error.cause!s} {error.cause!r}",
            "traceback(cause)": "".join(traceback.format_exception(error.cause)) if error.cause else "",
        }
    texts["pickle.dumps(result)"] = pickle.dumps(result).decode("latin-1")
    return texts


def assert_no_key(texts: dict[str, str]) -> None:
    leaks = [where for where, text in texts.items() if any(fragment in text for fragment in FRAGMENTS)]
    assert leaks == [], f"the API key appears in: {leaks}"


def recorded_events() -> tuple[ExecuteCallbacks, list[Any]]:
    events: list[Any] = []

    def keep(state: Any, event: Any) -> None:
        events.append((state, event))

    hooks = ExecuteCallbacks(
        on_attempt_start=keep,
        on_model_response=keep,
        on_tool_call=keep,
        on_tool_result=keep,
        on_validation_failure=keep,
    )
    return hooks, events


SCENARIOS: dict[str, list[ScriptItem]] = {
    "success": [tool_call("lookup", {"query": "vpn"}), output_call(Out(n=1))],
    "auth-error": [api_error(401, "invalid x-api-key")],
    "retried-then-success": [api_error(529, retry_after=0.01), api_error(429, retry_after=0.01), output_call(Out(n=2))],
    "retries-exhausted": [api_error(500, retry_after=0.01), api_error(500, retry_after=0.01), api_error(500)],
    "malformed": [malformed_body()],
    "dropped": [dropped_connection(), dropped_connection(), dropped_connection()],
    # A proxy or gateway that echoes the request's credentials in its error body.
    "echoed-by-error": [api_error(401, f"invalid credentials: x-api-key {KEY}, Authorization: Bearer {KEY}")],
    "echoed-by-proxy": [malformed_body(f"<html>proxy refused x-api-key={KEY}</html>")],
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
async def test_secrets_key_never_in_logs_errors_metadata_or_reprs(
    scenario: str, debug_logs: pytest.LogCaptureFixture
) -> None:
    """Success, auth errors, retries, malformed bodies, dropped connections: the key is nowhere."""
    hooks, events = recorded_events()
    async with FakeAnthropicServer(SCENARIOS[scenario], strict=False) as server:
        client = anthropic.AsyncAnthropic(api_key=KEY, base_url=server.base_url, max_retries=2)
        result = await execute_agent(agent(), "Ticket: VPN drops", client=client, callbacks=hooks)
        await client.close()
    assert server.request_headers[0]["authorization"] == f"Bearer {KEY}"  # the key was in play
    assert "Request options" in debug_logs.text  # the SDK's DEBUG logging was captured
    assert result.ok is (scenario in ("success", "retried-then-success"))
    assert_no_key(everything_said(result, events, debug_logs))


async def test_secrets_default_client_reads_the_key_from_the_environment_and_never_shows_it(
    monkeypatch: pytest.MonkeyPatch, debug_logs: pytest.LogCaptureFixture
) -> None:
    """With client=None the default AsyncAnthropic reads ANTHROPIC_API_KEY; no output carries it."""
    async with FakeAnthropicServer([api_error(403, "this key may not use this model")], strict=False) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        result = await execute_agent(agent(), "go")
    assert server.request_headers[0]["authorization"] == f"Bearer {KEY}"
    assert not result.ok
    assert_no_key(everything_said(result, [], debug_logs))


async def test_secrets_cassettes_never_hold_the_key(tmp_path: Path, debug_logs: pytest.LogCaptureFixture) -> None:
    """RecordingClient writes no key (successes and errors alike), and the cassette replays."""
    path = tmp_path / "cassette.json"
    script = [tool_call("lookup", {"query": "vpn"}), output_call(Out(n=3))]
    async with FakeAnthropicServer(script) as server:
        real = anthropic.AsyncAnthropic(api_key=KEY, base_url=server.base_url, max_retries=0)
        recorded = await execute_agent(agent(), "go", client=RecordingClient(real, path))
        await real.close()
    assert recorded.ok
    assert server.request_headers[0]["authorization"] == f"Bearer {KEY}"
    error_path = tmp_path / "errors.json"
    async with FakeAnthropicServer([api_error(401, "invalid x-api-key")], strict=False) as server:
        real = anthropic.AsyncAnthropic(api_key=KEY, base_url=server.base_url, max_retries=0)
        failed = await execute_agent(agent(), "go", client=RecordingClient(real, error_path))
        await real.close()
    assert not failed.ok
    for written in (path, error_path):
        text = written.read_text()
        assert json.loads(text)["calls"]  # something was recorded
        assert not any(fragment in text for fragment in FRAGMENTS), written.name
    replayed = await execute_agent(agent(), "go", client=ReplayClient(path))
    assert replayed.ok
    assert replayed.output == Out(n=3)
    assert_no_key(everything_said(failed, [], debug_logs))


def test_secrets_key_not_in_the_reprs_of_definitions_and_results() -> None:
    """Nothing typedagent builds holds the client, so no repr can show its key."""
    definition = agent()
    texts = {"repr(agent)": repr(definition), "tool_params": json.dumps(definition.tool_params())}
    assert_no_key(texts)
    assert "client" not in {field.name for field in dataclasses.fields(ExecuteFailure)}


def assert_not_sent(result: ExecuteResult[Any], error_type: str, server: FakeAnthropicServer) -> None:
    """The run failed with ``error_type`` before any request went out."""
    assert isinstance(result, ExecuteFailure)
    assert result.error.code is AgentErrorCode.API_ERROR
    assert result.error.context == ApiErrorContext(
        status_code=None, error_type=error_type, request_id=None, attempt=1, iteration=0
    )
    assert result.metadata.iterations == 0
    assert server.request_headers == []


@pytest.mark.parametrize("shape", ["trailing-newline", "leading-space", "inner-space", "non-ascii"])
async def test_secrets_malformed_key_of_the_default_client_is_reported_before_sending(
    shape: str, monkeypatch: pytest.MonkeyPatch, debug_logs: pytest.LogCaptureFixture
) -> None:
    """A key HTTP cannot carry is 'invalid_api_key_format', says what is wrong, is never sent and never shown."""
    bad, said = {
        "trailing-newline": (
            f"{KEY}\n",
            "The API key (ANTHROPIC_API_KEY, or the client's api_key) ends with a line "
            "break: a trailing newline is common when the key is read from a file or a mounted secret. Strip the "
            "whitespace from the key.",
        ),
        "leading-space": (f" {KEY}", "The API key (ANTHROPIC_API_KEY, or the client's api_key) starts with a space"),
        "inner-space": (f"{KEY[:20]} {KEY[20:]}", "contains a space (character 21 of "),
        "non-ascii": (f"{KEY}\u201d", "contains a non-ASCII character (character "),
    }[shape]
    async with FakeAnthropicServer([output_call(Out(n=1))], strict=False) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", bad)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        result = await execute_agent(agent(), "go")
    assert_not_sent(result, "invalid_api_key_format", server)
    assert said in result.error.message  # type: ignore[union-attr]
    assert_no_key(everything_said(result, [], debug_logs))


async def test_secrets_malformed_key_of_a_given_client_is_reported_before_sending(
    debug_logs: pytest.LogCaptureFixture,
) -> None:
    """A client built with a key that ends in a newline fails the same way, not as a misleading connection error."""
    async with FakeAnthropicServer([output_call(Out(n=1))], strict=False) as server:
        client = anthropic.AsyncAnthropic(auth_token=f"{KEY}\r\n", base_url=server.base_url, max_retries=2)
        result = await execute_agent(agent(), "go", client=client)
        await client.close()
    assert_not_sent(result, "invalid_api_key_format", server)
    assert "The auth token (ANTHROPIC_AUTH_TOKEN, or the client's auth_token) ends with a line break" in (
        result.error.message  # type: ignore[union-attr]
    )
    assert_no_key(everything_said(result, [], debug_logs))


async def test_secrets_illegal_header_value_is_named_and_scrubbed_from_the_cause() -> None:
    """A header HTTP refuses (here the key in a custom header) is 'invalid_header_value'; the cause quotes no key."""
    async with FakeAnthropicServer([output_call(Out(n=1))], strict=False) as server:
        client = anthropic.AsyncAnthropic(
            api_key=None, default_headers={"X-Api-Key": f"{KEY}\n"}, base_url=server.base_url, max_retries=0
        )
        result = await execute_agent(agent(), "go", client=client)
        await client.close()
    assert_not_sent(result, "invalid_header_value", server)
    assert "strip whitespace from ANTHROPIC_API_KEY and any custom headers" in result.error.message  # type: ignore[union-attr]
    # The HTTP library logs the refused header itself, before typedagent sees the error: no logs are checked here.
    texts = everything_said(result, [], None)
    assert "Illegal header value" in texts["traceback(cause)"]
    assert_no_key(texts)


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("", "The API key (ANTHROPIC_API_KEY, or the client's api_key) is empty: set it to the key itself."),
        (f"\t{KEY}", "starts with a tab. Strip the whitespace from the key."),
        (f"{KEY} ", "ends with a space. Strip the whitespace from the key."),
        (f"{KEY[:9]}\x07{KEY[9:]}", f"contains a control character (character 10 of {len(KEY) + 1}), which no API key"),
        (KEY, None),
    ],
    ids=["empty", "tab", "space", "control", "fine"],
)
def test_secrets_credential_problem_names_the_flaw_not_the_key(value: str, said: str | None) -> None:
    """Each way a key cannot go into a header is named, by position, without quoting the key."""
    from typedagent._api.secrets import credential_problem

    problem = credential_problem(SimpleNamespace(api_key=value, auth_token=None))
    if said is None:
        assert problem is None
    else:
        assert problem is not None
        assert said in problem
        assert not any(fragment in problem for fragment in FRAGMENTS)


def test_secrets_scrub_redacts_headers_and_quotes_of_them() -> None:
    """Sensitive headers of the requests and responses an exception holds are redacted, and their quotes cut."""
    import httpx2

    from typedagent._api.secrets import scrub

    request = httpx2.Request("POST", "https://api.example/v1", headers={"Authorization": f"Bearer {KEY}", "a": "b"})
    inner = ValueError(f"refused header b'Bearer {KEY}\\n'")
    outer = RuntimeError("wrapped")
    outer.request = request  # type: ignore[attr-defined]
    outer.response = httpx2.Response(401, headers={"Set-Cookie": "session=0123456789abcdef"})  # type: ignore[attr-defined]
    outer.note = f"key was {KEY}"  # type: ignore[attr-defined]
    outer.__cause__ = inner
    scrub(outer)
    assert request.headers["authorization"] == "[redacted]"
    assert request.headers["a"] == "b"
    assert outer.response.headers["set-cookie"] == "[redacted]"  # type: ignore[attr-defined]
    assert str(inner) == "refused header b'[redacted]\\n'"
    assert outer.note == "key was [redacted]"  # type: ignore[attr-defined]
    assert KEY.encode() not in pickle.dumps(outer)


def test_secrets_scrub_cuts_an_echoed_key_out_of_bodies_and_cached_text() -> None:
    """An error body echoing the key: its body, details, the response's read text and the request body are cut."""
    import httpx2

    from typedagent._api.secrets import scrub

    echoed = {"type": "error", "error": {"type": "authentication_error", "message": f"bad key {KEY}"}, "n": [1, KEY]}
    request = httpx2.Request("POST", "https://api.example/v1", headers={"x-api-key": KEY}, content=b'{"prompt": "hi"}')
    response = httpx2.Response(401, json=echoed, request=request)
    assert KEY in response.text  # read: the response keeps its content and text
    error = anthropic.AuthenticationError(f"Error code: 401 - {echoed}", response=response, body=echoed)
    error.details = Details(note=f"seen {KEY}")  # type: ignore[assignment]
    deep: object = KEY
    for _ in range(30):
        deep = [deep]
    error.deep = deep  # type: ignore[attr-defined]
    scrub(error)
    assert error.body == {
        "type": "error",
        "error": {"type": "authentication_error", "message": "bad key [redacted]"},
        "n": [1, "[redacted]"],
    }
    assert echoed["n"] == [1, KEY]  # copied, never changed in place
    assert KEY not in response.text
    assert KEY.encode() not in response.content
    assert response.json()["error"]["message"] == "bad key [redacted]"
    assert request.content == b'{"prompt": "hi"}'
    assert KEY not in str(error)
    assert error.details == Details(note="seen [redacted]")
    assert KEY.encode() not in pickle.dumps((error.body, response, str(error), error.details))

"""Every way the client can fail becomes an ``API_ERROR`` result (issue 5, point 2).

The real ``AsyncAnthropic`` runs over ``httpx2.MockTransport`` with ``max_retries=0``, so each
exception is the one the SDK itself builds from the HTTP response: its class is chosen by the SDK
from the status and the body's ``error.details.error_code``, exactly as in production.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import anthropic
import httpx2
import pytest
from pydantic import BaseModel

from typedagent import (
    AgentDefinition,
    AgentErrorCode,
    ApiErrorContext,
    AttemptOutcome,
    ExecuteFailure,
    OutputTool,
    TokenUsage,
    ValidationConfig,
    define_agent,
    execute_agent,
    tool,
)
from typedagent.testing import ScriptedClient, api_error, assert_valid_conversation, output_call, tool_call


class Out(BaseModel):
    n: int


@tool
async def lookup(query: str) -> str:
    """Look up."""
    return f"found {query}"


def agent(**overrides: Any) -> AgentDefinition[Out, None]:
    params: dict[str, Any] = {"name": "errors", "model": "claude-sonnet-4-6", "output": OutputTool(Out)}
    params.update(overrides)
    return define_agent(**params)


Handler = Callable[[httpx2.Request], httpx2.Response]


def sdk_client(handler: Handler, **kwargs: Any) -> anthropic.AsyncAnthropic:
    """The real SDK client, its HTTP layer answered by ``handler`` (no retries unless asked)."""
    kwargs.setdefault("max_retries", 0)
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    return anthropic.AsyncAnthropic(api_key="sk-ant-test", http_client=http, **kwargs)


async def fail_with(handler: Handler, **kwargs: Any) -> ExecuteFailure:
    result = await execute_agent(agent(), "go", client=sdk_client(handler, **kwargs))
    assert isinstance(result, ExecuteFailure), result
    assert_valid_conversation(result.metadata.messages)
    return result


def _status_subclasses(cls: type[Any]) -> Iterator[type[Any]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _status_subclasses(sub)


def _every_status_class() -> list[tuple[type[anthropic.APIStatusError], int, str | None]]:
    """Every ``APIStatusError`` subclass the SDK defines, with the (status, error_code) it is raised for."""
    from anthropic._error_classes import ERROR_CLASSES

    keys = {cls: key for key, cls in ERROR_CLASSES.items()}
    keys.setdefault(anthropic.InternalServerError, (500, None))
    cases = []
    for cls in sorted(set(_status_subclasses(anthropic.APIStatusError)), key=lambda c: c.__name__):
        assert cls in keys, f"{cls.__name__}: an SDK status error this test does not know how to provoke"
        status, code = keys[cls]
        cases.append((cls, status, code))
    return cases


STATUS_CASES = _every_status_class()

# The body's error.type for each status, as the API sends it (any string must pass through).
API_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "request_timeout_error",
    409: "conflict_error",
    412: "precondition_failed_error",
    413: "request_too_large",
    422: "unprocessable_entity_error",
    429: "rate_limit_error",
    431: "request_header_fields_too_large_error",
    499: "client_closed_request_error",
    500: "api_error",
    501: "not_implemented_error",
    503: "service_unavailable_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def test_api_errors_cases_cover_statuses_400_to_529() -> None:
    """The walk below covers dozens of SDK classes, from 400 up to 529."""
    statuses = {status for _, status, _ in STATUS_CASES}
    assert {400, 401, 403, 404, 408, 413, 429, 500, 503, 504, 529} <= statuses
    assert len(STATUS_CASES) >= 100


@pytest.mark.parametrize(("cls", "status", "error_code"), STATUS_CASES, ids=[c.__name__ for c, _, _ in STATUS_CASES])
async def test_api_errors_every_sdk_status_error_class_maps_to_api_error(
    cls: type[anthropic.APIStatusError], status: int, error_code: str | None
) -> None:
    """Each SDK status-error class becomes API_ERROR with status code, error type and request id in context."""
    error: dict[str, Any] = {"type": API_TYPES[status], "message": f"scripted {cls.__name__}"}
    if error_code is not None:
        error["details"] = {"error_code": error_code}

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = {"type": "error", "error": error}
        return httpx2.Response(status, json=body, headers={"request-id": f"req_{cls.__name__}"})

    result = await fail_with(handler)
    assert type(result.error.cause) is cls
    assert result.error.code is AgentErrorCode.API_ERROR
    assert result.error.context == ApiErrorContext(
        status_code=status, error_type=API_TYPES[status], request_id=f"req_{cls.__name__}", attempt=1, iteration=1
    )
    assert result.error.message.startswith(f"The Messages API call failed ({API_TYPES[status]}, HTTP {status}): ")
    assert result.metadata.iterations == 1
    assert result.metadata.tokens == TokenUsage()
    assert [a.outcome for a in result.metadata.attempts] == [AttemptOutcome.API_ERROR]


@pytest.mark.parametrize(
    ("status", "body", "error_type"),
    [
        (502, "<html><body>Bad gateway</body></html>", "api_error"),
        (401, "", "authentication_error"),
        (529, "overloaded", "overloaded_error"),
        (418, "{}", "api_error"),
    ],
)
async def test_api_errors_without_a_json_error_body_use_the_status_type(
    status: int, body: str, error_type: str
) -> None:
    """A proxy's HTML page or an empty body still yields the status, a type for it, and the request id."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, text=body, headers={"request-id": "req_proxy"})

    result = await fail_with(handler)
    assert result.error.context == ApiErrorContext(
        status_code=status, error_type=error_type, request_id="req_proxy", attempt=1, iteration=1
    )


@pytest.mark.parametrize(
    ("raised", "sdk_class", "error_type"),
    [
        (httpx2.ConnectError("connection refused"), anthropic.APIConnectionError, "connection_error"),
        (httpx2.RemoteProtocolError("server disconnected"), anthropic.APIConnectionError, "connection_error"),
        (httpx2.ReadTimeout("read timed out"), anthropic.APITimeoutError, "timeout_error"),
        (httpx2.ConnectTimeout("connect timed out"), anthropic.APITimeoutError, "timeout_error"),
    ],
    ids=["connect", "disconnect", "read-timeout", "connect-timeout"],
)
async def test_api_errors_connection_errors_and_timeouts_have_no_status(
    raised: Exception, sdk_class: type[Exception], error_type: str
) -> None:
    """Connection errors and timeouts become API_ERROR with status_code None and no request id."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        raise raised

    result = await fail_with(handler)
    assert type(result.error.cause) is sdk_class
    assert result.error.context == ApiErrorContext(
        status_code=None, error_type=error_type, request_id=None, attempt=1, iteration=1
    )
    assert "Check network access to the API" in result.error.message


async def test_api_errors_response_validation_error_keeps_status_and_request_id() -> None:
    """With strict response validation, a body that is not a Message is APIResponseValidationError → API_ERROR."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json={"type": "message", "content": "nope"}, headers={"request-id": "req_strict"})

    result = await fail_with(handler, _strict_response_validation=True)
    assert type(result.error.cause) is anthropic.APIResponseValidationError
    assert result.error.context == ApiErrorContext(
        status_code=200, error_type="response_validation_error", request_id="req_strict", attempt=1, iteration=1
    )


MALFORMED = [
    ('{"type": "message", "content": [', "application/json"),
    ("", "application/json"),
    ('{"foo": "bar"}', "application/json"),
    ('{"type": "message", "content": "not a list"}', "application/json"),
    ("[1, 2]", "application/json"),
    ("null", "application/json"),
    ("<html>502 from a proxy, but status 200</html>", "text/html"),
    ('{"content": [{"text": "no type"}], "stop_reason": "end_turn"}', "application/json"),
    ('{"content": [{"type": "tool_use", "name": "lookup"}], "stop_reason": "tool_use"}', "application/json"),
    ('{"content": [], "stop_reason": 7}', "application/json"),
    ('{"content": [], "stop_reason": "end_turn", "usage": {"input_tokens": "ten"}}', "application/json"),
]


@pytest.mark.parametrize(("body", "content_type"), MALFORMED)
async def test_api_errors_malformed_success_bodies_end_as_failures(body: str, content_type: str) -> None:
    """A 200 whose body is not a Messages API response is API_ERROR 'malformed_response', never an exception."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, text=body, headers={"content-type": content_type, "request-id": "req_bad"})

    result = await fail_with(handler)
    assert result.error.code is AgentErrorCode.API_ERROR
    assert result.error.context == ApiErrorContext(
        status_code=None, error_type="malformed_response", request_id=None, attempt=1, iteration=1
    )
    assert result.error.message.endswith(
        "The response body was not a Messages API response: check the client's base URL and any proxy or gateway "
        "in between."
    )
    assert result.metadata.messages == [{"role": "user", "content": "go"}]


async def test_api_errors_unknown_content_block_types_are_accepted() -> None:
    """A block type this SDK does not know (a newer API) is not mistaken for a malformed body."""
    bodies: Iterator[dict[str, Any]] = iter(
        [
            {"content": [{"type": "future_block", "data": 1}], "stop_reason": "end_turn"},
            {"content": [{"type": "tool_use", "id": "toolu_1", "name": "final_output", "input": {"n": 3}}]},
        ]
    )

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
            **next(bodies),
        }
        return httpx2.Response(200, json=body)

    result = await execute_agent(agent(validation=ValidationConfig(max_attempts=2)), "go", client=sdk_client(handler))
    assert result.ok
    assert result.output == Out(n=3)
    assert result.metadata.attempts[0].outcome is AttemptOutcome.INVALID_RESPONSE


class _Raising:
    """A custom client whose call raises ``exc``."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc
        self.messages = self

    async def create(self, **params: Any) -> Any:
        raise self.exc


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise ValueError("no str")


@pytest.mark.parametrize(
    ("exc", "error_type", "shown"),
    [
        (RuntimeError("gateway exploded"), "RuntimeError", "gateway exploded"),
        (OSError("network unreachable"), "OSError", "network unreachable"),
        (json.JSONDecodeError("Expecting value", "", 0), "malformed_response", "Expecting value: line 1 column 1"),
        (_Unprintable(), "_Unprintable", "<exception str() failed>"),
        (anthropic.AnthropicError("Could not resolve authentication method"), "AnthropicError", "Could not resolve"),
    ],
    ids=["runtime", "oserror", "json", "unprintable", "sdk-base"],
)
async def test_api_errors_any_exception_from_a_custom_client_is_api_error(
    exc: Exception, error_type: str, shown: str
) -> None:
    """Whatever a custom client (Bedrock, Vertex, a wrapper) raises becomes API_ERROR named after its class."""
    result = await execute_agent(agent(), "go", client=_Raising(exc))
    assert not result.ok
    assert result.error.code is AgentErrorCode.API_ERROR
    assert result.error.cause is exc
    assert result.error.context == ApiErrorContext(
        status_code=None, error_type=error_type, request_id=None, attempt=1, iteration=1
    )
    assert shown in result.error.message


async def test_api_errors_assertion_error_from_a_client_is_api_error() -> None:
    """An AssertionError raised while the call is awaited (a wrapper's own assert) is API_ERROR like any other."""
    exc = AssertionError("wrapper says no")
    result = await execute_agent(agent(), "go", client=_Raising(exc))
    assert isinstance(result, ExecuteFailure)
    assert result.error.cause is exc
    assert result.error.context == ApiErrorContext(
        status_code=None, error_type="AssertionError", request_id=None, attempt=1, iteration=1
    )


class _Refusing:
    """A client whose ``messages.create`` raises when called, before it returns anything to await."""

    def __init__(self, exc: Exception) -> None:
        self.exc = exc
        self.messages = self

    def create(self, **params: Any) -> Any:
        raise self.exc


@pytest.mark.parametrize("exc", [TypeError("create() got an unexpected keyword argument 'x'"), AssertionError("no")])
async def test_api_errors_raised_when_create_is_called_propagate(exc: Exception) -> None:
    """An exception raised by calling ``messages.create`` (nothing to await, nothing sent) is a programming error."""
    with pytest.raises(type(exc)) as raised:
        await execute_agent(agent(), "go", client=_Refusing(exc))
    assert raised.value is exc


async def test_api_errors_sdk_rejecting_an_unknown_keyword_raises_type_error() -> None:
    """The SDK's TypeError for a keyword ``messages.create`` does not take propagates; nothing is sent."""
    sent: list[httpx2.Request] = []
    sdk = sdk_client(lambda request: sent.append(request) or httpx2.Response(500))

    class Wrapper:
        """Adds a misspelt parameter to every call, as a typo in a client wrapper would."""

        def __init__(self) -> None:
            self.messages = self

        def create(self, **params: Any) -> Any:
            return sdk.messages.create(**params, temprature=0.2)

    with pytest.raises(TypeError, match="temprature"):
        await execute_agent(agent(), "go", client=Wrapper())
    assert sent == []


async def test_api_errors_sdk_refusing_before_sending_is_not_an_api_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's own ValueError before sending is API_ERROR 'request_not_sent', with no iteration counted.

    typedagent streams the requests the SDK would refuse unstreamed; with that rule out of the way (as for an SDK
    whose rule typedagent does not know yet), the SDK's refusal shows.
    """
    monkeypatch.setattr("typedagent._api.model_call.must_stream", lambda resource, params: False)
    sent: list[httpx2.Request] = []
    client = sdk_client(lambda request: sent.append(request) or httpx2.Response(500))
    result = await execute_agent(agent(max_tokens=400_000), "go", client=client)
    assert isinstance(result, ExecuteFailure)
    assert sent == []
    assert type(result.error.cause) is ValueError
    assert result.error.context == ApiErrorContext(
        status_code=None, error_type="request_not_sent", request_id=None, attempt=1, iteration=0
    )
    assert result.error.message.startswith(
        "The request was not sent: the client raised ValueError before sending it (Streaming is required for "
    )
    assert result.metadata.iterations == 0
    assert [(a.iterations, a.outcome) for a in result.metadata.attempts] == [(0, AttemptOutcome.API_ERROR)]


async def test_api_errors_missing_credentials_are_not_an_api_call() -> None:
    """The SDK finding no credentials before sending is 'missing_credentials', with no iteration counted."""
    sent: list[httpx2.Request] = []
    http = httpx2.AsyncClient(
        transport=httpx2.MockTransport(lambda request: sent.append(request) or httpx2.Response(500))
    )
    client = anthropic.AsyncAnthropic(api_key=None, auth_token=None, http_client=http, max_retries=0)
    result = await execute_agent(agent(), "go", client=client)
    assert isinstance(result, ExecuteFailure)
    assert sent == []
    assert result.error.context == ApiErrorContext(
        status_code=None, error_type="missing_credentials", request_id=None, attempt=1, iteration=0
    )
    assert result.metadata.iterations == 0


async def test_api_errors_body_that_is_not_json_still_counts_as_a_call() -> None:
    """A response whose body cannot be read was sent and answered: one iteration, 'malformed_response'."""
    result = await fail_with(
        lambda request: httpx2.Response(200, content=b"\xff\xfe{", headers={"content-type": "application/json"})
    )
    assert result.error.context == ApiErrorContext(
        status_code=None, error_type="malformed_response", request_id=None, attempt=1, iteration=1
    )
    assert result.metadata.iterations == 1


async def test_api_errors_keep_tokens_conversation_and_last_output_from_before() -> None:
    """An API error in a later iteration loses nothing: earlier tokens, turns and the last candidate stay."""

    def reject(out: Out) -> None:
        from typedagent import OutputRejected

        raise OutputRejected("try again")

    client = ScriptedClient([tool_call("lookup", {"query": "vpn"}), output_call(Out(n=7)), api_error(529)])
    result = await execute_agent(agent(helpers=[lookup], validators=[reject]), "go", client=client)
    assert isinstance(result, ExecuteFailure)
    assert result.error.code is AgentErrorCode.API_ERROR
    assert result.error.context == ApiErrorContext(
        status_code=529, error_type="overloaded_error", request_id="req_scripted_529", attempt=2, iteration=1
    )
    assert result.error.last_output == {"n": 7}
    assert result.metadata.iterations == 3
    assert result.metadata.tokens == TokenUsage(input_tokens=20, output_tokens=10)
    assert [(a.outcome, a.iterations) for a in result.metadata.attempts] == [
        (AttemptOutcome.VALIDATION_FAILED, 2),
        (AttemptOutcome.API_ERROR, 1),
    ]
    assert_valid_conversation(result.metadata.messages)
    assert [m["role"] for m in result.metadata.messages] == ["user", "assistant", "user", "assistant", "user"]


BAD_URL = "The base URL (ANTHROPIC_BASE_URL, or the client's base_url) is not a valid URL"


@pytest.mark.parametrize(
    ("environment", "error_type", "said"),
    [
        ({"ANTHROPIC_API_KEY": None}, "missing_credentials", "Set ANTHROPIC_API_KEY"),
        ({"ANTHROPIC_BASE_URL": "http://[::1"}, "invalid_base_url", BAD_URL),
        ({"ANTHROPIC_BASE_URL": "not a url at all"}, "invalid_base_url", BAD_URL),
        (
            {"ANTHROPIC_API_KEY": None, "ANTHROPIC_PROFILE": "nope", "ANTHROPIC_CONFIG_DIR": "/nonexistent-typedagent"},
            "invalid_client_configuration",
            "Config file not found at /nonexistent-typedagent/configs/nope.json",
        ),
    ],
    ids=["no-key", "bad-url", "no-scheme", "no-profile"],
)
async def test_api_errors_default_client_configuration_errors_are_results(
    environment: dict[str, str | None], error_type: str, said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A default client that cannot be used as configured fails the run the same way, before sending anything."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    for name in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE", "ANTHROPIC_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        if value is None:
            monkeypatch.delenv(name)
        else:
            monkeypatch.setenv(name, value)
    result = await execute_agent(agent(), "go")
    assert isinstance(result, ExecuteFailure)
    assert result.error.code is AgentErrorCode.API_ERROR
    assert result.error.context == ApiErrorContext(
        status_code=None, error_type=error_type, request_id=None, attempt=1, iteration=0
    )
    assert said in result.error.message
    assert result.metadata.iterations == 0


async def test_api_errors_unbuilt_default_client_raises_its_error_if_called(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in for a default client that could not be built fails any direct call with the reason."""
    from typedagent._api.client import default_client

    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://[::1")
    client = default_client()
    with pytest.raises(ValueError, match=r"is not a valid URL \(Invalid port: ':1'\)"):
        await client.messages.create(model="m", max_tokens=1, messages=[])


class _Answering:
    """A custom client that answers with ``answer`` as it is."""

    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.messages = self

    async def create(self, **params: Any) -> Any:
        return self.answer


async def test_api_errors_blocks_that_are_not_block_objects_are_malformed() -> None:
    """A custom client whose content blocks are plain objects (not SDK blocks) gets 'malformed_response'."""
    answer = SimpleNamespace(content=[SimpleNamespace(type="text", text="hi")], stop_reason="end_turn", usage=None)
    result = await execute_agent(agent(), "go", client=_Answering(answer))
    assert isinstance(result, ExecuteFailure)
    assert result.error.context == ApiErrorContext(
        status_code=None, error_type="malformed_response", request_id=None, attempt=1, iteration=1
    )
    assert "content block 0 of the response is a SimpleNamespace, not a block." in result.error.message


class _Stubborn(Exception):
    """An exception whose ``request`` cannot be read and whose ``note`` cannot be reassigned."""

    @property
    def request(self) -> Any:
        raise RuntimeError("no request here")

    @property
    def note(self) -> str:
        return str(self.__dict__["note"])


class _OddClient:
    """A client whose key is readable but whose base_url raises, and whose calls raise ``_Stubborn``."""

    api_key = "sk-ant-odd-client-secret-0123456789"

    def __init__(self) -> None:
        self.messages = self

    @property
    def base_url(self) -> Any:
        raise RuntimeError("no base url")

    async def create(self, **params: Any) -> Any:
        error = _Stubborn(f"rejected {self.api_key}")
        error.__dict__["note"] = f"key {self.api_key}"
        raise error


async def test_api_errors_odd_client_and_exception_objects_never_break_the_failure_path() -> None:
    """Attributes that raise or refuse assignment are left alone; the key is still cut from the message."""
    result = await execute_agent(agent(), "go", client=_OddClient())
    assert isinstance(result, ExecuteFailure)
    assert result.error.context == ApiErrorContext(
        status_code=None, error_type="_Stubborn", request_id=None, attempt=1, iteration=1
    )
    assert "rejected [redacted]" in result.error.message
    assert _OddClient.api_key not in result.error.message

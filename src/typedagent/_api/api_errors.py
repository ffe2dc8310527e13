"""Why a model call failed: the client's exceptions and the loop's own findings, mapped to status, type and advice."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, cast

from .._shared.errors import safe_str
from .._shared.results import TokenUsage

if TYPE_CHECKING:
    from anthropic import APIResponseValidationError, APIStatusError

__all__ = [
    "ERROR_TYPE_STATUSES",
    "MID_STREAM",
    "STATUS_TYPES",
    "ApiFailure",
    "RefusedWhenCalled",
    "StreamProtocolError",
    "describe_api_error",
    "malformed_response",
    "not_sent",
]


class RefusedWhenCalled(Exception):
    """Raised by a typedagent client wrapper whose wrapped client raised on being called (nothing was sent).

    ``call_model`` re-raises ``error``, as it does for an exception raised by calling ``messages.create``
    directly: a wrapper that calls the wrapped client only later, once awaited, keeps that rule.
    """

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class StreamProtocolError(Exception):
    """A response stream that broke the Messages API's event protocol: the request was sent and answered.

    An event before ``message_start``, a delta for a block that never started, a delta that is not one, tool
    input that is not JSON, or tool input that never completes although the stream ended normally. ``usage``
    holds the tokens the response reported before it broke, if any: they were spent.
    """

    def __init__(self, problem: str, usage: TokenUsage | None = None) -> None:
        super().__init__(f"the response stream broke the Messages API's stream protocol: {problem}")
        self.usage = usage


@dataclass(frozen=True, slots=True)
class ApiFailure:
    """A model call that failed, mapped to what the API, the network or the client said."""

    cause: BaseException
    status_code: int | None
    error_type: str
    request_id: str | None
    advice: str
    sent: bool = True
    """False when the request never left the machine: it does not count as an iteration."""
    usage: TokenUsage | None = None
    """The tokens of a response that arrived malformed but with readable usage: they were spent, so they count."""


def describe_api_error(exc: Exception, *, sdk_client: bool) -> ApiFailure:
    """Map an exception raised while a model call was awaited to an ``ApiFailure``.

    The one place where SDK exceptions are translated; the SDK is only consulted when it is already imported
    (it must be, if it raised). ``sdk_client`` says the call went through the SDK's own Messages resource.
    The SDK reports everything that happens on the wire as one of its ``APIError``s, and the only other
    exceptions it lets out of a request that was answered come from reading the body (JSON, text encoding,
    nesting); anything else it raises comes from its checks before sending (parameters, credentials), so that
    request was never sent. Another client's exceptions are taken as the call's outcome.
    """
    sdk = sys.modules.get("anthropic")
    status: int | None = None
    request_id: str | None = None
    error_type = type(exc).__name__
    sent = True
    if sdk is not None and isinstance(exc, sdk.APIStatusError):
        status_error = cast("APIStatusError", exc)  # pyright cannot narrow on a class looked up at run time
        status, request_id = status_error.status_code, status_error.request_id or _body_request_id(status_error.body)
        error_type = status_error.type or STATUS_TYPES.get(status, "api_error")
    elif sdk is not None and isinstance(exc, sdk.APITimeoutError):
        error_type = "timeout_error"
    elif sdk is not None and isinstance(exc, sdk.APIConnectionError):
        # An HTTP library refuses a header value (a key read with its newline) before a byte goes out.
        sent = not _refused_header(exc)
        error_type = "connection_error" if sent else "invalid_header_value"
    elif sdk is not None and isinstance(exc, sdk.APIResponseValidationError):
        invalid = cast("APIResponseValidationError", exc)
        status, error_type = invalid.status_code, "response_validation_error"
        request_id = invalid.response.headers.get("request-id")
    elif sdk is not None and isinstance(exc, TypeError | sdk.CredentialsError) and "authentication" in safe_str(exc):
        # The SDK raises this before sending anything when no API key or other credentials are set.
        error_type, sent = "missing_credentials", False
    elif isinstance(exc, StreamProtocolError):
        return ApiFailure(
            exc, None, "stream_protocol_error", None, _advice(None, "stream_protocol_error"), usage=exc.usage
        )
    elif _unreadable_body(exc):
        error_type = "malformed_response"
    elif sdk_client and not (sdk is not None and isinstance(exc, sdk.APIError)):
        error_type, sent = "request_not_sent", False
    advice = _advice(status, error_type, mid_stream=getattr(exc, MID_STREAM, False) is True)
    return ApiFailure(exc, status, error_type, request_id, advice, sent=sent)


def malformed_response(cause: Exception, usage: TokenUsage | None) -> ApiFailure:
    """A response the loop cannot read or send back (the cause says why); its readable usage still counts."""
    error_type = "malformed_response"
    advice = getattr(cause, "advice", None) or _advice(None, error_type)
    return ApiFailure(cause, None, error_type, None, advice, usage=usage)


def not_sent(cause: Exception, error_type: str) -> ApiFailure:
    """A request the client could not send as configured, found before sending it."""
    return ApiFailure(cause, None, error_type, None, _advice(None, error_type), sent=False)


def _body_request_id(body: object) -> str | None:
    """The ``request_id`` of an API error body (``{"type": "error", "error": {...}, "request_id": ...}``).

    The API names the request in its error bodies too, so the id survives a proxy or gateway that drops the
    ``request-id`` header.
    """
    request_id = cast("dict[str, object]", body).get("request_id") if isinstance(body, dict) else None
    return request_id if isinstance(request_id, str) and request_id else None


def _unreadable_body(exc: Exception) -> bool:
    """An answered request whose body could not be read: not JSON, not text, or nested past what Python parses."""
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError):
        return True
    return isinstance(exc, RecursionError) and "decoding" in safe_str(exc)


def _refused_header(exc: BaseException) -> bool:
    cause = exc.__cause__
    while cause is not None:
        if type(cause).__name__ == "LocalProtocolError" and "header" in safe_str(cause).lower():
            return True
        cause = cause.__cause__
    return False


STATUS_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "request_timeout_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
"""The error type the API sends with each status, for a response whose body names none."""

ERROR_TYPE_STATUSES: Final[dict[str, int]] = {
    **{error_type: status for status, error_type in STATUS_TYPES.items()},
    # The memory tool's errors, which share their statuses with others.
    "memory_path_conflict_error": 409,
    "memory_precondition_failed_error": 412,
}
"""The status of each error type the API sends (every one of the SDK's ``ErrorType``), for a Message Batches
result, which names only the type."""

_ADVICE: Final = {
    "missing_credentials": "Set ANTHROPIC_API_KEY, or pass execute_agent(client=...) with a configured client.",
    "invalid_api_key_format": "Fix the key where it is set; typedagent never shows or logs it.",
    "invalid_header_value": "A request header holds a character HTTP forbids (a line break, or whitespace at either "
    "end): strip whitespace from ANTHROPIC_API_KEY and any custom headers.",
    "invalid_base_url": "Set it to the API's address (https://api.anthropic.com by default), or unset it.",
    "invalid_client_configuration": "Fix the client's configuration (its environment variables or profile), or "
    "pass execute_agent(client=...) with a configured client.",
    "request_not_sent": "This is not an API failure: fix the request (define_agent's max_tokens and "
    "model_settings) or the client's configuration.",
    "stream_protocol_error": "The request was sent and answered, but its response stream cannot be trusted, and the "
    "client does not retry a started stream: run again; if it keeps happening, check any proxy or gateway in between "
    "and upgrade anthropic.",
    "malformed_response": "The response body was not a Messages API response: check the client's base URL and any "
    "proxy or gateway in between.",
    "no_model_available": "Every model of the agent's fallback chain was skipped (its circuit breaker open after "
    "repeated failures, or unable to take the conversation): wait for FallbackPolicy.breaker_cooldown_s, or add "
    "alternatives on other platforms.",
    "timeout_error": "Check network access to the API, the client's base URL and timeout; the client already retried.",
    "connection_error": "Check network access to the API, the client's base URL and timeout; the client already "
    "retried.",
}


MID_STREAM: Final = "typedagent_mid_stream"
"""Marks a connection error or timeout of a response stream that had started: the SDK does not retry those."""


def _advice(status: int | None, error_type: str, *, mid_stream: bool = False) -> str:
    if mid_stream:
        return (
            "The connection failed while the response streamed, and the client does not retry a started stream: "
            "check network access to the API and any proxy in between, then run again."
        )
    if status == 200:  # an error event in a response stream that had started: the SDK does not retry those
        return "The API failed the response while it streamed (the client does not retry a started stream); run again."
    if status in (401, 403):
        return "Check ANTHROPIC_API_KEY (or the client's credentials) and the key's permissions."
    if status == 404:
        return "Check the model id and the client's base URL."
    if status in (400, 413, 422):
        return "The API rejected the request: check the model id, tool schemas, model_settings and message_history."
    if status == 429 or (status is not None and status >= 500):
        return "The client already retried (see its max_retries); retry later or raise max_retries."
    return _ADVICE.get(error_type, "The client raised; see the cause for details.")

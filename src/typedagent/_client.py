"""The client protocol (anything with an async ``messages.create``) and the lazily built default."""

from __future__ import annotations

import contextlib
import json
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from collections.abc import Sequence

    from anthropic import APIResponseValidationError, APIStatusError
    from anthropic.types import Message

__all__ = [
    "ApiFailure",
    "MalformedResponse",
    "MessagesClient",
    "MessagesResource",
    "check_response",
    "close_client",
    "default_client",
    "describe_api_error",
]


class MessagesResource(Protocol):
    """The ``client.messages`` part of a client."""

    async def create(self, *args: Any, **kwargs: Any) -> Message:
        """Create a message (the Messages API call)."""
        ...


class MessagesClient(Protocol):
    """Any object with an async ``messages.create(**params)`` returning an ``anthropic.types.Message``.

    ``AsyncAnthropic``, ``AsyncAnthropicBedrock``, ``AsyncAnthropicVertex`` and the clients of
    ``typedagent.testing`` all qualify.
    """

    @property
    def messages(self) -> MessagesResource:
        """The Messages resource."""
        ...


def default_client() -> MessagesClient:
    """``AsyncAnthropic()``, reading ``ANTHROPIC_API_KEY``; the SDK is imported only now."""
    from anthropic import AsyncAnthropic

    return AsyncAnthropic()


async def close_client(client: object) -> None:
    """Close a client typedagent created (``AsyncAnthropic.close()``); a failure to close is ignored."""
    close = getattr(client, "close", None)
    if close is None:
        return
    # The execution's result matters more than a connection that would not close cleanly.
    with contextlib.suppress(Exception):
        await close()


class MalformedResponse(Exception):
    """The client returned something the loop cannot read as an ``anthropic.types.Message``."""


_COUNTERS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
_COUNTER_TYPES = (int, type(None))


def check_response(response: object) -> Message:
    """Return ``response`` if it has the shape of a Message, else raise ``MalformedResponse``.

    The SDK builds responses without validating them, so a body that is JSON but not a Message (a
    proxy's error page, a truncated or foreign payload) arrives as a half-filled object or a plain
    ``str``. Checking the fields the loop reads turns that into an ``API_ERROR`` result instead of
    an ``AttributeError`` deep inside the loop. Unknown block types pass: newer APIs add them.

    Raises:
        MalformedResponse: a field the loop reads is missing or has the wrong type.
    """
    content = getattr(response, "content", None)
    if not isinstance(content, list):
        raise MalformedResponse(
            f"the client returned a {type(response).__name__} without a list of content blocks, "
            "not a Messages API response."
        )
    # Any, not the list[Unknown] isinstance leaves: each block is checked field by field below.
    for index, block in enumerate(cast("Sequence[Any]", content)):
        if not isinstance(getattr(block, "type", None), str):
            raise MalformedResponse(f"content block {index} of the response has no type.")
        if block.type == "tool_use" and not (
            isinstance(getattr(block, "id", None), str)
            and isinstance(getattr(block, "name", None), str)
            and isinstance(getattr(block, "input", None), dict)
        ):
            raise MalformedResponse(f"tool_use block {index} of the response lacks an id, a name or an input object.")
    _check_unique_tool_use_ids(cast("Sequence[Any]", content))
    stop_reason = getattr(response, "stop_reason", None)
    if stop_reason is not None and not isinstance(stop_reason, str):
        raise MalformedResponse(f"the response's stop_reason is a {type(stop_reason).__name__}, not a string.")
    usage = getattr(response, "usage", None)
    if usage is not None and not all(isinstance(getattr(usage, name, None), _COUNTER_TYPES) for name in _COUNTERS):
        raise MalformedResponse("the response's usage counters are not integers.")
    return cast("Message", response)


def _check_unique_tool_use_ids(content: Sequence[Any]) -> None:
    # Each tool_use must be answered by exactly one tool_result, and the API refuses a turn that repeats an
    # id: a response that does cannot be kept or answered, so none of its calls runs.
    seen: set[str] = set()
    for block in content:
        if block.type == "tool_use":
            if block.id in seen:
                raise MalformedResponse(
                    f"two tool_use blocks have the id {block.id!r}; tool_use ids must be unique in a response."
                )
            seen.add(block.id)


@dataclass(frozen=True, slots=True)
class ApiFailure:
    """A model call that raised, mapped to what the API (or the network) said."""

    cause: BaseException
    status_code: int | None
    error_type: str
    request_id: str | None
    advice: str


def describe_api_error(exc: BaseException) -> ApiFailure:
    """Map a client exception to an ``ApiFailure``: HTTP status, error type, request id and advice.

    The one place where SDK exceptions are translated. The SDK is only consulted when it is already
    imported (it must be, if it raised).
    """
    sdk = sys.modules.get("anthropic")
    status: int | None = None
    request_id: str | None = None
    error_type = type(exc).__name__
    if sdk is not None and isinstance(exc, sdk.APIStatusError):
        status_error = cast("APIStatusError", exc)  # pyright cannot narrow on a class looked up at run time
        status, request_id = status_error.status_code, status_error.request_id
        error_type = status_error.type or STATUS_TYPES.get(status, "api_error")
    elif sdk is not None and isinstance(exc, sdk.APITimeoutError):
        error_type = "timeout_error"
    elif sdk is not None and isinstance(exc, sdk.APIConnectionError):
        error_type = "connection_error"
    elif sdk is not None and isinstance(exc, sdk.APIResponseValidationError):
        invalid = cast("APIResponseValidationError", exc)
        status, error_type = invalid.status_code, "response_validation_error"
        request_id = invalid.response.headers.get("request-id")
    elif sdk is not None and isinstance(exc, TypeError | sdk.CredentialsError) and "authentication" in str(exc):
        # The SDK raises this before sending anything when no API key or other credentials are set.
        error_type = "missing_credentials"
    elif isinstance(exc, MalformedResponse | json.JSONDecodeError):
        # The SDK lets a 200 response whose body is not JSON raise json's own error.
        error_type = "malformed_response"
    return ApiFailure(exc, status, error_type, request_id, _advice(status, error_type))


STATUS_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "request_timeout_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def _advice(status: int | None, error_type: str) -> str:
    if error_type == "missing_credentials":
        return "Set ANTHROPIC_API_KEY, or pass execute_agent(client=...) with a configured client."
    if status in (401, 403):
        return "Check ANTHROPIC_API_KEY (or the client's credentials) and the key's permissions."
    if status == 404:
        return "Check the model id and the client's base URL."
    if status in (400, 413, 422):
        return "The API rejected the request: check the model id, tool schemas, model_settings and message_history."
    if status == 429 or (status is not None and status >= 500):
        return "The client already retried (see its max_retries); retry later or raise max_retries."
    if error_type == "malformed_response":
        return (
            "The response body was not a Messages API response: check the client's base URL and any proxy or "
            "gateway in between."
        )
    if error_type in ("timeout_error", "connection_error"):
        return "Check network access to the API, the client's base URL and timeout; the client already retried."
    return "The client raised; see the cause for details."

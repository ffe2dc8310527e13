"""What a script holds, the helpers that build it, and how an item becomes a Messages API response.

Every testing client (``ScriptedClient``, ``FunctionClient``, ``FakeAnthropicServer``) serves the same
items through ``render_message`` (``_render``), so a script means the same thing in process and over HTTP.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, cast

import pydantic
from pydantic_core import to_jsonable_python

from .._agent.output import WRAPPER_KEY
from .._api.api_errors import STATUS_TYPES
from .._shared.numbers import check_non_negative

__all__ = [
    "ApiErrorSpec",
    "Block",
    "Delayed",
    "MalformedBody",
    "ScriptError",
    "ScriptItem",
    "ScriptStep",
    "ScriptedResponse",
    "api_error",
    "delay",
    "dropped_connection",
    "error_body",
    "malformed_body",
    "output_call",
    "redacted_thinking",
    "response",
    "submit_call",
    "text",
    "thinking",
    "tool_call",
    "usage",
]


class ScriptError(AssertionError):
    """The script and the run disagree (script ran out, or a response calls a tool not offered).

    An ``AssertionError``, so it fails the test instead of becoming an ``API_ERROR`` result.
    """

    __module__ = "typedagent.testing"  # shown in tracebacks: the name users import


@dataclass(frozen=True, kw_only=True, slots=True)
class ScriptStep:
    """What every script helper returns: the base of ``Block``, ``ScriptedResponse``, ``ApiErrorSpec``, ….

    The common base of ``Block``, ``ScriptedResponse``, ``ApiErrorSpec``, ``Delayed`` and ``MalformedBody``
    gives a script mixing them one element type, so ``[api_error(529), tool_call(...), output_call(...)]``
    is a ``list[ScriptStep]`` for both type checkers (not ``list[object]``) and fits every parameter that
    takes script items. Build steps with the helpers; other subclasses are not script items.
    """


@dataclass(frozen=True, kw_only=True, slots=True)
class Block(ScriptStep):
    """One content block of a scripted response."""

    type: str
    """The block's ``type``: ``text``, ``tool_use``, ``thinking``, ``server_tool_use``, ``web_search_tool_result``, …"""
    data: Mapping[str, Any]
    output: bool = False
    """A call of the agent's output tool whose name is resolved from the request."""
    unknown: bool = False
    """A call of a tool the request does not offer, on purpose."""


def _default_usage() -> Mapping[str, Any]:
    return {"input_tokens": 10, "output_tokens": 5}


@dataclass(frozen=True, kw_only=True, slots=True)
class ScriptedResponse(ScriptStep):
    """One model response in a script."""

    blocks: tuple[Block, ...]
    stop_reason: str | None = None
    """Defaults to ``tool_use`` when the response calls a tool, else ``end_turn``."""
    usage: Mapping[str, Any] = field(default_factory=_default_usage)
    container: str | None = None
    """The id of the container the response names (code execution), if any."""
    model: str | None = None
    """The model the response names; default: the request's ``model``."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ApiErrorSpec(ScriptStep):
    """An API error instead of an answer.

    In process it raises the SDK's own exception class; ``FakeAnthropicServer`` answers with the HTTP
    status and error body instead (``"connection"`` closes the socket, ``"timeout"`` never answers).
    """

    status: int | Literal["connection", "timeout"]
    message: str
    error_type: str | None = None
    request_id: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict[str, str])

    @property
    def resolved_type(self) -> str:
        """The error body's ``type``: the one given, else the API's type for the status."""
        if self.error_type:
            return self.error_type
        return STATUS_TYPES.get(self.status, "api_error") if isinstance(self.status, int) else "api_error"

    def to_exception(self) -> Exception:
        """Build the exception the real SDK would raise."""
        import anthropic
        import httpx2

        request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
        if self.status == "timeout":
            return anthropic.APITimeoutError(request=request)
        if self.status == "connection":
            return anthropic.APIConnectionError(message=self.message, request=request)
        body = error_body(self.resolved_type, self.message)
        headers = {"request-id": self.request_id or f"req_scripted_{self.status}", **self.headers}
        http_response = httpx2.Response(self.status, json=body, headers=headers, request=request)
        cls = _status_class(anthropic, self.status)
        error: Exception = cls(f"Error code: {self.status} - {body}", response=http_response, body=body)
        return error


@dataclass(frozen=True, kw_only=True, slots=True)
class Delayed(ScriptStep):
    """Another item, served after a pause (a slow response)."""

    seconds: float
    item: ScriptItem

    def __post_init__(self) -> None:
        object.__setattr__(self, "seconds", check_non_negative(self.seconds, "delay(seconds=...)"))


@dataclass(frozen=True, kw_only=True, slots=True)
class MalformedBody(ScriptStep):
    """A response whose body is not a valid Messages API response (sent as ``application/json``)."""

    body: str
    status: int = 200


ScriptItem: TypeAlias = ScriptStep | str
"""What a script holds: a step built by a helper — a response, a single block (a one-block response), an
error, a delayed item or a malformed body — or plain text."""


def _status_class(anthropic: Any, status: int) -> Any:
    classes = {
        400: anthropic.BadRequestError,
        401: anthropic.AuthenticationError,
        402: anthropic.PaymentRequiredError,
        403: anthropic.PermissionDeniedError,
        404: anthropic.NotFoundError,
        408: anthropic.RequestTimeoutError,
        409: anthropic.ConflictError,
        412: anthropic.PreconditionFailedError,
        413: anthropic.ContentTooLargeError,
        422: anthropic.UnprocessableEntityError,
        429: anthropic.RateLimitError,
        431: anthropic.RequestHeaderFieldsTooLargeError,
        499: anthropic.ClientClosedRequestError,
        501: anthropic.HTTPNotImplementedError,
        503: anthropic.ServiceUnavailableError,
        504: anthropic.GatewayTimeoutError,
        529: anthropic.OverloadedError,
    }
    if status in classes:
        return classes[status]
    return anthropic.InternalServerError if status >= 500 else anthropic.APIStatusError


def error_body(error_type: str, message: str) -> dict[str, Any]:
    """The Messages API's error body: ``{"type": "error", "error": {"type": ..., "message": ...}}``."""
    return {"type": "error", "error": {"type": error_type, "message": message}}


def text(content: str) -> Block:
    """A text block."""
    return Block(type="text", data={"text": content})


def thinking(content: str, signature: str = "scripted-signature") -> Block:
    """An extended-thinking block (kept verbatim in the conversation)."""
    return Block(type="thinking", data={"thinking": content, "signature": signature})


def redacted_thinking(data: str = "scripted-redacted") -> Block:
    """A redacted thinking block."""
    return Block(type="redacted_thinking", data={"data": data})


def tool_call(
    name: str, input: Mapping[str, Any] | None = None, *, id: str | None = None, unknown: bool = False
) -> Block:
    """A call of a helper tool (or any tool by name).

    Args:
        name: Tool name.
        input: The model's input (default ``{}``).
        id: ``tool_use`` id; generated when omitted.
        unknown: Set when the script calls a tool the request does not offer on purpose.
    """
    return Block(type="tool_use", data={"name": name, "input": dict(input or {}), "id": id}, unknown=unknown)


def output_call(value: object, *, name: str | None = None, id: str | None = None) -> Block:
    """A call of the output tool with ``value`` as its input: an output, or a raw dict sent as it is.

    An output of any type works: a model, a dataclass or a ``TypedDict`` is its fields; a list, a scalar, an
    enum member or a model of a union is put in ``{"value": ...}`` when the output tool takes it so (its
    type's schema is not an object). To send an exact input, pass the dict (or use ``tool_call``).

    The tool name defaults to the agent's output tool: the last tool of the request that is not
    ``submit``.
    """
    if isinstance(value, pydantic.BaseModel):
        data: Any = value.model_dump(mode="json")
    elif isinstance(value, Mapping):
        data = dict(cast("Mapping[str, Any]", value))
    else:
        data = to_jsonable_python(value)
        if not isinstance(data, dict):
            data = {WRAPPER_KEY: data}
    return Block(type="tool_use", data={"name": name, "input": data, "id": id}, output=name is None)


def submit_call(*, id: str | None = None) -> Block:
    """A call of the ``submit`` tool (reflection mode)."""
    return Block(type="tool_use", data={"name": "submit", "input": {}, "id": id})


def usage(
    input_tokens: int = 10,
    output_tokens: int = 5,
    cache_creation_input_tokens: int = 0,
    cache_read_input_tokens: int = 0,
    *,
    web_search_requests: int | None = None,
    web_fetch_requests: int | None = None,
    iterations: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Custom usage for ``response(..., usage=...)``, as the API reports it.

    Args:
        input_tokens: Uncached input tokens.
        output_tokens: Output tokens.
        cache_creation_input_tokens: Input tokens written to the prompt cache.
        cache_read_input_tokens: Input tokens read from the prompt cache.
        web_search_requests: Web searches run for the response (``usage.server_tool_use``).
        web_fetch_requests: Pages fetched for the response (``usage.server_tool_use``).
        iterations: The per-iteration breakdown (``usage.iterations``), built with ``iteration_usage()``.
    """
    built: dict[str, Any] = {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": cache_creation_input_tokens,
        "cache_read_input_tokens": cache_read_input_tokens,
    }
    if web_search_requests is not None or web_fetch_requests is not None:
        built["server_tool_use"] = {
            "web_search_requests": web_search_requests or 0,
            "web_fetch_requests": web_fetch_requests or 0,
        }
    if iterations is not None:
        built["iterations"] = [dict(entry) for entry in iterations]
    return built


def iteration_usage(
    type: str = "message",
    input_tokens: int = 10,
    output_tokens: int = 5,
    *,
    cache_creation_input_tokens: int = 0,
    cache_read_input_tokens: int = 0,
    model: str | None = None,
) -> dict[str, Any]:
    """One entry of ``usage(iterations=[...])``, the per-iteration breakdown of a response's usage.

    A sampling iteration (``message``) is part of the top-level counters; a ``compaction`` or an
    ``advisor_message`` (with the advisor's ``model``) is not, and the API reports its tokens only here.
    """
    entry: dict[str, Any] = {
        "type": type,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": cache_creation_input_tokens,
        "cache_read_input_tokens": cache_read_input_tokens,
    }
    if model is not None:
        entry["model"] = model
    return entry


def response(
    *blocks: Block | str,
    stop_reason: str | None = None,
    usage: Mapping[str, Any] | None = None,
    container: str | None = None,
    model: str | None = None,
) -> ScriptedResponse:
    """One response made of several blocks (strings become text blocks).

    Args:
        *blocks: Content blocks in order.
        stop_reason: Override the stop reason (``max_tokens``, ``refusal``, ``pause_turn``, …).
        usage: Token usage (see ``usage()``); default 10 input, 5 output.
        container: The id of the container the response names (code execution), e.g. ``"container_011C..."``.
        model: The model the response names (default: the request's ``model``), e.g. a dated id.
    """
    built = tuple(text(b) if isinstance(b, str) else b for b in blocks)
    return ScriptedResponse(
        blocks=built,
        stop_reason=stop_reason,
        usage=dict(usage) if usage is not None else _default_usage(),
        container=container,
        model=model,
    )


def pause_turn(*blocks: Block | str, usage: Mapping[str, Any] | None = None) -> ScriptedResponse:
    """A response the API paused (``stop_reason: "pause_turn"``): the next response continues the same turn.

    A long server tool loop is paused this way; its last block is often a ``server_tool_use`` whose result
    opens the next response.
    """
    return response(*blocks, stop_reason="pause_turn", usage=usage)


def api_error(
    status: int | Literal["connection", "timeout"] = 500,
    message: str = "scripted API error",
    *,
    error_type: str | None = None,
    request_id: str | None = None,
    headers: Mapping[str, str] | None = None,
    retry_after: float | None = None,
) -> ApiErrorSpec:
    """An API error of ``status`` (or a connection error / timeout) instead of an answer.

    Args:
        status: HTTP status (429, 500, 529, …), ``"connection"`` or ``"timeout"``.
        message: The error body's message.
        error_type: The error body's type; default: the API's type for the status (``rate_limit_error``, …).
        request_id: The ``request-id`` header; generated when omitted.
        headers: Extra response headers.
        retry_after: Seconds for the ``retry-after`` header (the SDK waits that long before retrying).
    """
    extra = dict(headers or {})
    if retry_after is not None:
        extra["retry-after"] = f"{check_non_negative(retry_after, 'api_error(retry_after=...)'):g}"
    return ApiErrorSpec(status=status, message=message, error_type=error_type, request_id=request_id, headers=extra)


def delay(seconds: float, item: ScriptItem) -> Delayed:
    """Serve ``item`` after ``seconds`` (a slow response; a client timeout shorter than that fires)."""
    return Delayed(seconds=seconds, item=item)


def malformed_body(body: str = '{"type": "message", "content": [', *, status: int = 200) -> MalformedBody:
    """A response whose body is broken JSON (by default) or any text you pass, as ``application/json``."""
    return MalformedBody(body=body, status=status)


def dropped_connection() -> ApiErrorSpec:
    """The connection closes without a response (in process: the SDK's ``APIConnectionError``)."""
    return api_error("connection", "the server closed the connection without a response")


def as_response(item: ScriptItem) -> ScriptedResponse:
    """The response an answering item stands for.

    Raises:
        ScriptError: ``item`` is a ``ScriptStep`` no helper builds.
    """
    if isinstance(item, ScriptedResponse):
        return item
    if isinstance(item, str):
        return ScriptedResponse(blocks=(text(item),))
    if isinstance(item, Block):
        return ScriptedResponse(blocks=(item,))
    raise ScriptError(
        f"{type(item).__name__} is not a script item: build scripts with the typedagent.testing helpers "
        "(tool_call, output_call, text, response, api_error, delay, malformed_body, ...)"
    )

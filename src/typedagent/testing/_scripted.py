"""``ScriptedClient``: a queue of model responses, built with small typed helpers."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import pydantic

if TYPE_CHECKING:
    from anthropic.types import Message

__all__ = [
    "ApiErrorSpec",
    "Block",
    "ScriptError",
    "ScriptItem",
    "ScriptedClient",
    "ScriptedResponse",
    "api_error",
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


@dataclass(frozen=True, kw_only=True, slots=True)
class Block:
    """One content block of a scripted response."""

    type: Literal["text", "tool_use", "thinking", "redacted_thinking"]
    data: Mapping[str, Any]
    output: bool = False
    """A call of the agent's output tool whose name is resolved from the request."""
    unknown: bool = False
    """A call of a tool the request does not offer, on purpose."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ScriptedResponse:
    """One model response in a script."""

    blocks: tuple[Block, ...]
    stop_reason: str | None = None
    """Defaults to ``tool_use`` when the response calls a tool, else ``end_turn``."""
    usage: Mapping[str, int] = field(default_factory=lambda: {"input_tokens": 10, "output_tokens": 5})


@dataclass(frozen=True, kw_only=True, slots=True)
class ApiErrorSpec:
    """An API error to raise instead of answering (the SDK's own exception classes)."""

    status: int | Literal["connection", "timeout"]
    message: str
    error_type: str | None = None
    request_id: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    def to_exception(self) -> Exception:
        """Build the exception the real SDK would raise."""
        import anthropic
        import httpx2

        request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
        if self.status == "timeout":
            return anthropic.APITimeoutError(request=request)
        if self.status == "connection":
            return anthropic.APIConnectionError(message=self.message, request=request)
        error_type = self.error_type or _ERROR_TYPES.get(self.status, "api_error")
        body = {"type": "error", "error": {"type": error_type, "message": self.message}}
        headers = {"request-id": self.request_id or f"req_scripted_{self.status}", **self.headers}
        http_response = httpx2.Response(self.status, json=body, headers=headers, request=request)
        cls = _status_class(anthropic, self.status)
        error: Exception = cls(f"Error code: {self.status} - {body}", response=http_response, body=body)
        return error


ScriptItem: TypeAlias = ScriptedResponse | Block | ApiErrorSpec | str
"""What a script holds: a response, a single block (a one-block response), an error, or plain text."""

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


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


def output_call(
    value: pydantic.BaseModel | Mapping[str, Any], *, name: str | None = None, id: str | None = None
) -> Block:
    """A call of the output tool with ``value`` (a model instance or a raw dict) as its input.

    The tool name defaults to the agent's output tool: the last tool of the request that is not
    ``submit``.
    """
    data = value.model_dump(mode="json") if isinstance(value, pydantic.BaseModel) else dict(value)
    return Block(type="tool_use", data={"name": name, "input": data, "id": id}, output=name is None)


def submit_call(*, id: str | None = None) -> Block:
    """A call of the ``submit`` tool (reflection mode)."""
    return Block(type="tool_use", data={"name": "submit", "input": {}, "id": id})


def usage(
    input_tokens: int = 10,
    output_tokens: int = 5,
    cache_creation_input_tokens: int = 0,
    cache_read_input_tokens: int = 0,
) -> dict[str, int]:
    """Custom token usage for ``response(..., usage=...)``."""
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": cache_creation_input_tokens,
        "cache_read_input_tokens": cache_read_input_tokens,
    }


def response(
    *blocks: Block | str, stop_reason: str | None = None, usage: Mapping[str, int] | None = None
) -> ScriptedResponse:
    """One response made of several blocks (strings become text blocks).

    Args:
        *blocks: Content blocks in order.
        stop_reason: Override the stop reason (``max_tokens``, ``refusal``, ``pause_turn``, …).
        usage: Token usage (see ``usage()``); default 10 input, 5 output.
    """
    built = tuple(text(b) if isinstance(b, str) else b for b in blocks)
    if usage is None:
        return ScriptedResponse(blocks=built, stop_reason=stop_reason)
    return ScriptedResponse(blocks=built, stop_reason=stop_reason, usage=dict(usage))


def api_error(
    status: int | Literal["connection", "timeout"] = 500,
    message: str = "scripted API error",
    *,
    error_type: str | None = None,
    request_id: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> ApiErrorSpec:
    """Raise the SDK's exception for ``status`` (or a connection error / timeout) instead of answering."""
    return ApiErrorSpec(
        status=status, message=message, error_type=error_type, request_id=request_id, headers=dict(headers or {})
    )


class _Messages:
    def __init__(self, client: ScriptedClient) -> None:
        self._client = client

    async def create(self, **params: Any) -> Message:
        return self._client._serve(params)


class ScriptedClient:
    """A client that answers ``messages.create`` from a script and records every request.

    Example:
        ``ScriptedClient([tool_call("search", {"q": "vpn"}), output_call(Triage(...))])``

    Args:
        script: Responses, blocks (one-block responses), plain strings (text responses) or
            ``api_error(...)`` items, served in order.
    """

    __test__ = False  # not a test class, whatever pytest's name patterns say

    def __init__(self, script: Iterable[ScriptItem] = ()) -> None:
        self.script: list[ScriptItem] = list(script)
        self.requests: list[dict[str, Any]] = []
        """Every request received, as keyword arguments (messages copied at call time)."""
        self.messages = _Messages(self)
        self._served = 0
        self._ids = itertools.count(1)

    def add(self, *items: ScriptItem) -> ScriptedClient:
        """Append items to the script; returns the client."""
        self.script.extend(items)
        return self

    @property
    def remaining(self) -> int:
        """Script items not served yet."""
        return len(self.script) - self._served

    def _serve(self, params: dict[str, Any]) -> Message:
        from anthropic.types import Message

        self.requests.append({**params, "messages": list(params.get("messages", ()))})
        call = len(self.requests)
        if self._served >= len(self.script):
            raise ScriptError(
                f"ScriptedClient: request {call} arrived but the script has only {len(self.script)} item(s). "
                "Add a response for it (the loop asked for more turns than the script provides)."
            )
        item = self.script[self._served]
        self._served += 1
        if isinstance(item, ApiErrorSpec):
            raise item.to_exception()
        scripted = _as_response(item)
        offered = [tool.get("name") for tool in params.get("tools", ())]
        content = []
        for index, block in enumerate(scripted.blocks, start=1):
            data = dict(block.data)
            if block.type == "tool_use":
                if block.output:
                    candidates = [name for name in offered if name != "submit"]
                    if not candidates:
                        raise ScriptError(f"ScriptedClient: request {call} offers no tools, so output_call has none.")
                    data["name"] = candidates[-1]
                if data["name"] not in offered and not block.unknown:
                    raise ScriptError(
                        f"ScriptedClient: response {call}, block {index} calls tool {data['name']!r}, but the request "
                        f"offered only {offered}. Fix the name, or pass unknown=True to call a missing tool on purpose."
                    )
                data["id"] = data["id"] or f"toolu_{call:02d}_{next(self._ids):03d}"
            content.append({"type": block.type, **data})
        has_tool = any(block.type == "tool_use" for block in scripted.blocks)
        stop_reason = scripted.stop_reason or ("tool_use" if has_tool else "end_turn")
        return Message.model_validate(
            {
                "id": f"msg_scripted_{call:03d}",
                "type": "message",
                "role": "assistant",
                "model": params.get("model", "scripted"),
                "content": content,
                "stop_reason": stop_reason,
                "stop_sequence": None,
                "usage": dict(scripted.usage),
            }
        )


def _as_response(item: ScriptedResponse | Block | str) -> ScriptedResponse:
    if isinstance(item, ScriptedResponse):
        return item
    if isinstance(item, str):
        return ScriptedResponse(blocks=(text(item),))
    return ScriptedResponse(blocks=(item,))

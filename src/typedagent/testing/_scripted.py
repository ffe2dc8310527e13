"""In-process test clients: ``ScriptedClient`` (a queue of responses) and ``FunctionClient`` (a callable)."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import itertools
import json
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import pydantic

from ._items import ApiErrorSpec, Delayed, MalformedBody, ScriptError, ScriptItem, ScriptStep
from ._render import render_message
from ._stream_script import ScriptedStream, StreamFault, message_events, recorded_message

if TYPE_CHECKING:
    from anthropic.types import Message

__all__ = ["FunctionClient", "FunctionReturn", "MessagesRequest", "ScriptedClient"]

MessagesRequest: TypeAlias = dict[str, Any]
"""One ``messages.create`` call as the testing clients see it: its keyword arguments (``model``, ``system``,
``tools``, ``tool_choice``, ``messages``, …) as JSON-like data. What a ``FunctionClient`` function receives
and what ``requests`` holds; type a function ``def model(request: MessagesRequest) -> FunctionReturn``."""

FunctionReturn: TypeAlias = "Message | ScriptItem | Mapping[str, Any]"
"""What a ``FunctionClient`` function may return: a ``Message``, a script item, or a response's JSON."""


class _Messages:
    def __init__(self, client: _InProcessClient, *, beta: bool = False) -> None:
        self._client = client
        self._beta = beta

    def create(self, **params: Any) -> Coroutine[Any, Any, Any]:
        """Record the request and check it against the script now; the answer comes when the call is awaited.

        A script that cannot answer raises ``ScriptError`` here, as the call is made: ``execute_agent`` lets
        exceptions raised by calling ``create`` through (nothing can have been sent), so the test fails. With
        ``stream=True`` the answer is a ``ScriptedStream`` of the response's events, as the API streams them.
        """
        request, call = self._client._record(params, beta=self._beta)
        return self._client._respond(request, call)


class _Beta:
    """``client.beta``: its ``messages.create`` answers from the same script, with a ``BetaMessage``."""

    def __init__(self, client: _InProcessClient) -> None:
        self.messages = _Messages(client, beta=True)


class _InProcessClient:
    """Records requests and turns script items into what the SDK would return or raise."""

    __test__ = False  # not a test class, whatever pytest's name patterns say
    _source = "client"
    _message_prefix = "msg"

    def __init__(self) -> None:
        # The SDK builds the responses: import it now, not inside the first execution's deadline.
        importlib.import_module("anthropic")
        self.requests: list[MessagesRequest] = []
        """Every request received, as keyword arguments (messages copied at call time)."""
        self.messages = _Messages(self)
        self.beta = _Beta(self)
        """``client.beta.messages.create``, where requests with beta parameters go: the same script answers."""
        self._ids = itertools.count(1)
        self._beta_calls: set[int] = set()
        """The calls that came through ``beta.messages``: answered with a ``BetaMessage``, as the SDK's are."""

    def _record(self, params: Mapping[str, Any], *, beta: bool = False) -> tuple[dict[str, Any], int]:
        request = {**params, "messages": list(params.get("messages", ()))}
        self.requests.append(request)
        if beta:
            self._beta_calls.add(len(self.requests))
        return request, len(self.requests)

    def _respond(self, request: dict[str, Any], call: int) -> Coroutine[Any, Any, Message]:
        """Check the request now (raising ``ScriptError`` or ``CassetteError``); answer when awaited."""
        raise NotImplementedError

    def _serve_item(
        self, item: ScriptItem | Mapping[str, Any], request: dict[str, Any], call: int
    ) -> Coroutine[Any, Any, Message]:
        """Render ``item`` now, so a script that cannot answer fails as the call is made; deliver it when awaited."""
        pause = 0.0
        fault: StreamFault | None = None
        while isinstance(item, Delayed | StreamFault):
            if isinstance(item, StreamFault):
                fault = item
            else:
                pause += item.seconds
            item = item.item
        streamed = bool(request.get("stream"))
        if fault is not None and not streamed:
            raise ScriptError(f"{self._source}: request {call} is not streamed, but its script item is a stream fault.")
        if streamed and isinstance(item, MalformedBody):
            recorded = recorded_message(item.body) if item.status == 200 else None
            if recorded is None:
                raise ScriptError(
                    f"{self._source}: request {call} is streamed, and a malformed body that is not a message's JSON "
                    "cannot be streamed: script it for a request that is not streamed."
                )
            item = recorded
        if isinstance(item, ScriptStep | str) and not isinstance(item, ApiErrorSpec | MalformedBody):
            item = render_message(
                item,
                request,
                call=call,
                message_id=f"{self._message_prefix}_{call:03d}",
                new_id=lambda: f"toolu_{call:02d}_{next(self._ids):03d}",
                source=self._source,
            )
        if streamed and not isinstance(item, MalformedBody):
            return _deliver_stream(pause, item, fault, beta=call in self._beta_calls)
        return _deliver(pause, item, beta=call in self._beta_calls)


async def _deliver(
    pause: float, item: Message | ApiErrorSpec | MalformedBody | Mapping[str, Any], *, beta: bool = False
) -> Message:
    """What the SDK returns or raises for a rendered item, after ``pause`` seconds (a slow response).

    ``beta``: the call came through ``beta.messages``, whose responses the SDK builds as ``BetaMessage``.
    """
    from anthropic.types import Message

    if pause:
        await asyncio.sleep(pause)
    if isinstance(item, Message):
        return item
    if isinstance(item, ApiErrorSpec):
        raise item.to_exception()
    if isinstance(item, MalformedBody):
        return _parse_malformed(item, beta=beta)
    return build_message(item, beta=beta)


async def _deliver_stream(
    pause: float,
    item: Message | ApiErrorSpec | Mapping[str, Any],
    fault: StreamFault | None,
    *,
    beta: bool = False,
) -> Any:
    """A streamed answer: the SDK raises an API error before the stream starts, else the events stream."""
    from anthropic import BaseModel

    if pause:
        await asyncio.sleep(pause)
    if isinstance(item, ApiErrorSpec):
        raise item.to_exception()
    data = item.to_dict() if isinstance(item, BaseModel) else item
    return ScriptedStream(message_events(data), fault, beta=beta)


def build_message(data: Mapping[str, Any], *, beta: bool = False) -> Message:
    """A response body as the SDK's client builds it: unvalidated, nested models constructed, nothing dropped.

    The SDK does not validate response bodies (unless the client is made with
    ``_strict_response_validation=True``): it constructs the model recursively from whatever came, so a
    block type or field newer than the installed SDK is kept, not rejected. Replayed and scripted
    responses are built the same way, so they behave exactly like live ones.
    """
    from anthropic.types import Message
    from anthropic.types.beta import BetaMessage

    model = BetaMessage if beta else Message
    try:
        # Strict validation builds the same objects five times faster for a body the installed SDK fully knows
        # (no coercion: a string where a count belongs is not turned into a number).
        return cast("Message", model.model_validate(data, strict=True))
    except pydantic.ValidationError:
        return cast("Message", model.construct(**data))


def _parse_malformed(item: MalformedBody, *, beta: bool) -> Message:
    """What the SDK makes of a body that is not a Message: a status error, a JSON error, or an unvalidated model."""
    if item.status >= 400:
        raise ApiErrorSpec(status=item.status, message=item.body).to_exception()
    data: object = json.loads(item.body)  # the SDK lets this JSONDecodeError through, so do we
    return build_message(cast("dict[str, Any]", data) if isinstance(data, dict) else {}, beta=beta)


class ScriptedClient(_InProcessClient):
    """A client that answers ``messages.create`` from a script and records every request.

    Example:
        ``ScriptedClient([tool_call("search", {"q": "vpn"}), output_call(Triage(...))])``

    Args:
        script: Responses, blocks (one-block responses), plain strings (text responses),
            ``api_error(...)``, ``delay(...)`` or ``malformed_body(...)`` items, served in order.
    """

    _source = "ScriptedClient"
    _message_prefix = "msg_scripted"

    def __init__(self, script: Iterable[ScriptItem] = ()) -> None:
        super().__init__()
        self.script: list[ScriptItem] = list(script)
        self._served = 0

    def add(self, *items: ScriptItem) -> ScriptedClient:
        """Append items to the script; returns the client."""
        self.script.extend(items)
        return self

    @property
    def remaining(self) -> int:
        """Script items not served yet."""
        return len(self.script) - self._served

    def skip(self, count: int) -> ScriptedClient:
        """Pass over the next ``count`` script items as if they had been served; returns the client.

        For a paused execution resumed in another process (``typedagent resume --scripted``): a new client's script
        starts over, and the replies the first process used must not be served again.
        """
        self._served = min(len(self.script), self._served + max(0, count))
        return self

    def _respond(self, request: dict[str, Any], call: int) -> Coroutine[Any, Any, Message]:
        return self._serve_item(self._next_item(call), request, call)

    def _next_item(self, call: int) -> ScriptItem:
        if self._served >= len(self.script):
            raise ScriptError(
                f"ScriptedClient: request {call} arrived but the script has only {len(self.script)} item(s). "
                "Add a response for it (the loop asked for more turns than the script provides)."
            )
        item = self.script[self._served]
        self._served += 1
        return item


class FunctionClient(_InProcessClient):
    """A client whose answers come from a function of the request; records every request.

    ``fn`` receives the request's keyword arguments as a ``MessagesRequest`` dict (``model``, ``system``,
    ``tools``, ``messages``, …) and returns — directly or as an awaitable — an ``anthropic.types.Message``,
    any script item (``output_call(...)``, ``response(...)``, ``api_error(...)``, …) or a response's JSON,
    which is built into a ``Message`` the way the SDK builds responses (without validation).

    Example:
        ``FunctionClient(lambda request: output_call(Triage(...)) if len(request["messages"]) > 1
        else tool_call("search", {"q": "vpn"}))``
    """

    _source = "FunctionClient"
    _message_prefix = "msg_function"

    def __init__(self, fn: Callable[[MessagesRequest], FunctionReturn | Awaitable[FunctionReturn]]) -> None:
        super().__init__()
        self.fn = fn

    def _respond(self, request: dict[str, Any], call: int) -> Coroutine[Any, Any, Message]:
        answer = self.fn(request)  # a sync function runs now: its failed assert fails the test
        if inspect.isawaitable(answer):
            return _answer_later(self, answer, request, call)
        return _answer(self, answer, request, call)


async def _answer_later(
    client: FunctionClient, answer: Awaitable[FunctionReturn], request: dict[str, Any], call: int
) -> Message:
    return await _answer(client, await answer, request, call)


def _answer(
    client: FunctionClient, answer: FunctionReturn, request: dict[str, Any], call: int
) -> Coroutine[Any, Any, Message]:
    from anthropic.types import Message

    if isinstance(answer, Message):
        if request.get("stream"):
            return _deliver_stream(0.0, answer, None, beta=call in client._beta_calls)
        return _deliver(0.0, answer)
    return client._serve_item(answer, request, call)

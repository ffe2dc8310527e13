"""Streamed model calls: when a request must stream, and reading a stream into the ``Message`` a plain call returns."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import sys
import weakref
from collections.abc import AsyncIterable, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

from .._shared.results import TokenUsage
from .api_errors import MID_STREAM, StreamProtocolError
from .response import readable_usage

if TYPE_CHECKING:
    from anthropic.types import Message, RawMessageStreamEvent

__all__ = ["StreamObserver", "accumulator", "must_stream", "read_stream"]


class StreamObserver(Protocol):
    """Sees each event of a streamed response as it arrives, with the response accumulated so far."""

    def stream_event(self, event: RawMessageStreamEvent, snapshot: Message) -> None:
        """Called once per server-sent event, in order (``ping`` events are not passed on by the SDK)."""
        ...


def must_stream(resource: object, params: Mapping[str, Any]) -> bool:
    """Whether the SDK would refuse ``params`` as a plain request (it could take more than 10 minutes).

    The SDK itself is asked, with the rule it applies before sending: only a resource of the SDK has it, and the
    SDK applies it only when neither the call nor the client sets its own timeout. Its answer is remembered per
    client (while its timeout stays the same object), model and ``max_tokens``: asked once, not before every call.
    """
    max_tokens = params.get("max_tokens")
    if "timeout" in params or not isinstance(max_tokens, int):
        return False
    sdk_client = _sdk_client(resource)
    timeout = getattr(sdk_client, "timeout", None)
    key = (id(sdk_client), params.get("model"), max_tokens)
    known = _ANSWERS.get(key)
    if known is not None and known[0]() is sdk_client and known[1] is timeout:
        return known[2]
    refused = _refused(sdk_client, timeout, params.get("model"), max_tokens)
    with contextlib.suppress(TypeError):  # a client that cannot be weakly referenced is asked every time
        if len(_ANSWERS) >= _MAX_ANSWERS:
            _ANSWERS.clear()
        _ANSWERS[key] = (weakref.ref(sdk_client), timeout, refused)
    return refused


def _sdk_client(resource: object) -> object:
    """The SDK client behind ``resource`` (execute_many's rate-limited client forwards each call to its own)."""
    sdk_client = getattr(resource, "_client", None)
    if not hasattr(sdk_client, "_calculate_nonstreaming_timeout"):
        return getattr(sdk_client, "forwards_to", None)
    return sdk_client


def _refused(sdk_client: object, timeout: object, model: object, max_tokens: int) -> bool:
    calculate: Callable[[int, int | None], object] | None = getattr(sdk_client, "_calculate_nonstreaming_timeout", None)
    constants = sys.modules.get("anthropic._constants")
    if calculate is None or constants is None:
        return False
    default = getattr(constants, "DEFAULT_TIMEOUT", None)
    if timeout is not default and timeout != default:
        return False
    limits: Mapping[str, int] = getattr(constants, "MODEL_NONSTREAMING_TOKENS", {})
    try:
        calculate(max_tokens, limits.get(str(model), None))
    except ValueError:
        return True
    return False


_ANSWERS: dict[tuple[int, object, int], tuple[weakref.ref[object], object, bool]] = {}
"""The SDK's answer for each client (by ``id``, its weak reference kept to tell a new client from a dead one's),
model and ``max_tokens``, with the client's timeout it was given under."""
_MAX_ANSWERS: Final = 1024


async def read_stream(call: Awaitable[object], observer: StreamObserver | None, *, beta: bool) -> Message:
    """Await a ``create(..., stream=True)`` call and read its events into the response they describe.

    The SDK's own accumulator builds the response, so blocks, thinking signatures and usage are those of the
    same response sent unstreamed. The stream is closed however reading ends: an abort or the deadline cancels
    the read and closes the connection at once. A connection that breaks mid-stream (the SDK lets the HTTP
    library's error through as it is) is reported as the SDK's ``APIConnectionError`` (``APITimeoutError`` for
    a read that timed out), as it is for a plain request; an ``error`` event the API sends mid-stream arrives
    as the SDK's ``APIStatusError`` carrying the error's type (``overloaded_error``, say).
    """
    stream = cast("AsyncIterable[RawMessageStreamEvent]", await call)
    accumulate = accumulator(stream, beta=beta)
    snapshot: Any = None
    json_bufs: dict[int, bytes] = {}
    stopped = False
    try:
        async for event in stream:
            try:
                snapshot = accumulate(event=event, current_snapshot=snapshot, json_bufs=json_bufs)
            except Exception as exc:  # the SDK's accumulator found events that cannot be put together
                raise StreamProtocolError(f"{type(exc).__name__}: {exc}", _usage(snapshot)) from exc
            stopped = event.type == "message_stop"
            if observer is not None:
                observer.stream_event(event, snapshot)
                # Events that arrived together are read without a pause: let the watcher see each one now,
                # not once the whole response has been read.
                await asyncio.sleep(0)
    except Exception as exc:
        error = _wire_error(exc, stream)
        if error is exc:
            raise
        raise error from exc
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            await close()
    if snapshot is None or not stopped:
        raise _wire_error(None, stream)
    _check_tool_inputs(snapshot, json_bufs)
    return _plain_message(snapshot, beta=beta)


_CUT_OFF: Final = frozenset({"max_tokens", "model_context_window_exceeded", "refusal"})
"""Stop reasons that may end a response in the middle of a block: a tool input cut there is expected (and not run)."""


def _check_tool_inputs(snapshot: Any, json_bufs: Mapping[int, bytes]) -> None:
    """Refuse a stream that ended normally with a tool input that is not complete JSON.

    The SDK's accumulator reads tool input as partial JSON, so an input whose JSON never completes would
    otherwise arrive cut short (a list missing its last items) as if it were the model's whole input.
    """
    if snapshot.stop_reason in _CUT_OFF:
        return
    for index, buffer in json_bufs.items():
        if not buffer.strip():
            continue
        try:
            json.loads(buffer)
        except ValueError:
            block = snapshot.content[index]
            ending = buffer[-40:].decode(errors="replace")
            raise StreamProtocolError(
                f"the input of tool call {getattr(block, 'name', '?')!r} ({getattr(block, 'id', '?')}) never "
                f"completed although the stream ended normally (its JSON ends with {ending!r})",
                _usage(snapshot),
            ) from None


def _usage(snapshot: object) -> TokenUsage | None:
    return None if snapshot is None else readable_usage(snapshot)


def accumulator(stream: object, *, beta: bool) -> Any:
    """The SDK's accumulator for the stream (the beta one reads the request's beta headers)."""
    if beta:
        import httpx2
        from anthropic.lib.streaming._beta_messages import accumulate_event as beta_accumulate

        headers = getattr(getattr(getattr(stream, "response", None), "request", None), "headers", None)
        return functools.partial(beta_accumulate, request_headers=headers or httpx2.Headers())
    from anthropic.lib.streaming._messages import accumulate_event

    return accumulate_event


def _plain_message(snapshot: Any, *, beta: bool) -> Message:
    """The accumulated snapshot as the ``Message`` (``BetaMessage``) a plain call builds, not the SDK's subclass."""
    from anthropic.types import Message
    from anthropic.types.beta import BetaMessage

    model = BetaMessage if beta else Message
    return cast("Message", model.construct(**snapshot.to_dict(warnings=False)))


def _wire_error(exc: Exception | None, stream: object) -> Exception:
    """What a stream that broke (``exc``) or ended early (None) raises: the SDK's error for it, as for a plain call."""
    import anthropic
    import httpx2

    if isinstance(exc, anthropic.APIError):
        return exc
    response = getattr(stream, "response", None)
    request = getattr(response, "request", None)
    if not isinstance(request, httpx2.Request):
        request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    error: anthropic.APIConnectionError
    if isinstance(exc, httpx2.TimeoutException):
        error = anthropic.APITimeoutError(request=request)
    elif exc is None or isinstance(exc, httpx2.TransportError):
        what = "ended before message_stop" if exc is None else f"broke ({type(exc).__name__}: {exc})"
        error = anthropic.APIConnectionError(message=f"The response stream {what}.", request=request)
    else:
        return exc
    setattr(error, MID_STREAM, True)
    return error

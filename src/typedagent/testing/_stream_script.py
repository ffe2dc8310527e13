"""Scripted responses as the API streams them: the events of a response, mid-stream faults, in-process streams."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from ._items import ScriptItem, ScriptStep, error_body

if TYPE_CHECKING:
    from anthropic.types import RawMessageStreamEvent

__all__ = [
    "RecordedStream",
    "ScriptedStream",
    "StreamFault",
    "message_events",
    "stream_dropped",
    "stream_error",
    "stream_stalled",
]

CHUNK = 16
"""Characters per text, thinking or tool-input delta: a few tokens, as the API sends them."""

_TOOL_CALLS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
_USAGE_TOTALS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "server_tool_use")


@dataclass(frozen=True, kw_only=True, slots=True)
class StreamFault(ScriptStep):
    """A response whose stream breaks after ``after`` events: an ``error`` event, or a dropped connection."""

    item: ScriptItem
    after: int
    """Events sent before the fault (``message_start`` is the first, a ``ping`` the third)."""
    fault: Literal["error", "drop", "stall"]
    """An ``error`` event (then the stream ends), a dropped connection, or silence with the connection open."""
    error_type: str = "overloaded_error"
    """The ``error`` event's type."""


def stream_error(item: ScriptItem, *, after: int = 3, error_type: str = "overloaded_error") -> StreamFault:
    """``item`` streamed, until the API sends an ``error`` event after ``after`` events (it answers streams only).

    The SDK raises its ``APIStatusError`` with the error's type; the run fails with ``API_ERROR``.
    """
    return StreamFault(item=item, after=after, fault="error", error_type=error_type)


def stream_dropped(item: ScriptItem, *, after: int = 3) -> StreamFault:
    """``item`` streamed, until the connection drops after ``after`` events (it answers streams only).

    The run fails with ``API_ERROR`` (``connection_error``).
    """
    return StreamFault(item=item, after=after, fault="drop")


def stream_stalled(item: ScriptItem, *, after: int = 3) -> StreamFault:
    """``item`` streamed, until the server goes silent after ``after`` events, keeping the connection open.

    The client waits until its read timeout, the execution's deadline or its abort event ends the wait.
    """
    return StreamFault(item=item, after=after, fault="stall")


def message_events(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The server-sent events the API streams for ``message`` (a response's JSON), ``ping`` included.

    Their accumulation (the SDK's) is ``message`` again: text and thinking arrive in deltas of a few characters,
    a tool call's input as ``input_json_delta`` chunks of its JSON (the first one empty, as the API sends it), a
    thinking block's signature in a ``signature_delta``; other blocks arrive whole in their ``content_block_start``.
    """
    usage: dict[str, Any] = dict(message.get("usage") or {})
    start: dict[str, Any] = {
        **message,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage, "output_tokens": 1},
    }
    start.pop("stop_details", None)
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(message.get("content") or ()):
        events.extend(_block_events(index, block))
        if index == 0:
            events.insert(2, {"type": "ping"})
    delta = {"stop_reason": message.get("stop_reason"), "stop_sequence": message.get("stop_sequence")}
    if message.get("stop_details") is not None:
        delta["stop_details"] = message["stop_details"]
    totals = {key: usage[key] for key in _USAGE_TOTALS if usage.get(key) is not None}
    events.append(
        {"type": "message_delta", "delta": delta, "usage": {**totals, "output_tokens": usage.get("output_tokens", 0)}}
    )
    events.append({"type": "message_stop"})
    return events


def _block_events(index: int, block: Mapping[str, Any]) -> list[dict[str, Any]]:
    kind = block.get("type")
    opening: dict[str, Any]
    if kind == "text" and not block.get("citations"):
        opening, deltas = {**block, "text": ""}, _deltas("text_delta", "text", block.get("text", ""))
    elif kind == "thinking":
        opening = {**block, "thinking": "", "signature": ""}
        deltas = _deltas("thinking_delta", "thinking", block.get("thinking", ""))
        deltas.append({"type": "signature_delta", "signature": block.get("signature", "")})
    elif kind in _TOOL_CALLS:
        source = json.dumps(block.get("input", {}), ensure_ascii=False)
        opening, deltas = {**block, "input": dict[str, Any]()}, [{"type": "input_json_delta", "partial_json": ""}]
        deltas += _deltas("input_json_delta", "partial_json", "" if source == "{}" else source)
    else:
        opening, deltas = dict(block), []
    return [
        {"type": "content_block_start", "index": index, "content_block": opening},
        *({"type": "content_block_delta", "index": index, "delta": delta} for delta in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def _deltas(kind: str, field: str, value: str) -> list[dict[str, Any]]:
    return [{"type": kind, field: value[i : i + CHUNK]} for i in range(0, len(value), CHUNK)]


def error_event(error_type: str, request_id: str) -> dict[str, Any]:
    """The ``error`` event the API sends when a streamed response fails after it started."""
    message = "Overloaded" if error_type == "overloaded_error" else f"The response failed ({error_type})."
    return {**error_body(error_type, message), "request_id": request_id}


class ScriptedStream:
    """What ``create(stream=True)`` of the in-process clients returns: the SDK's ``AsyncStream`` in miniature.

    It yields the SDK's event models and raises what the SDK raises when the stream breaks: ``APIStatusError``
    for an ``error`` event, ``httpx2.RemoteProtocolError`` when the connection drops (read by typedagent as the
    SDK's ``APIConnectionError``).
    """

    def __init__(self, events: list[dict[str, Any]], fault: StreamFault | None = None, *, beta: bool = False) -> None:
        self.events = events
        self.fault = fault
        self.beta = beta
        self.closed = False

    def __aiter__(self) -> AsyncIterator[RawMessageStreamEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[RawMessageStreamEvent]:
        import anthropic
        import httpx2
        from anthropic._models import construct_type

        event_type = _event_type(beta=self.beta)
        for number, data in enumerate(self.events):
            if self.fault is not None and number == self.fault.after:
                if self.fault.fault == "stall":
                    await asyncio.Event().wait()
                if self.fault.fault == "drop":
                    raise httpx2.RemoteProtocolError("peer closed connection without sending complete message body")
                body = error_event(self.fault.error_type, "req_scripted_stream")
                response = httpx2.Response(200, request=httpx2.Request("POST", "https://api.anthropic.com/v1/messages"))
                raise anthropic.APIStatusError(f"{body}", response=response, body=body)
            if data["type"] == "ping":
                continue  # the SDK drops pings
            # Built as the SDK builds each event it reads, unvalidated: a block type newer than the SDK is kept.
            yield cast("RawMessageStreamEvent", construct_type(type_=event_type, value=data))
            await asyncio.sleep(0)

    async def close(self) -> None:
        """Stop the stream (the SDK's ``AsyncStream.close``)."""
        self.closed = True


def _event_type(*, beta: bool) -> Any:
    if beta:
        from anthropic.types.beta import BetaRawMessageStreamEvent

        return BetaRawMessageStreamEvent
    from anthropic.types import RawMessageStreamEvent

    return RawMessageStreamEvent


class RecordedStream:
    """A stream passed through a ``RecordingClient``: the events go on unchanged, the whole response is recorded."""

    def __init__(
        self, stream: Any, done: Callable[[dict[str, Any] | None, Exception | None], None], *, beta: bool = False
    ) -> None:
        self.stream = stream
        self.beta = beta
        self.response = getattr(stream, "response", None)
        self.done = done

    def __aiter__(self) -> AsyncIterator[RawMessageStreamEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[RawMessageStreamEvent]:
        from .._api.stream_call import accumulator

        accumulate = accumulator(self.stream, beta=self.beta)
        snapshot: Any = None
        buffers: dict[int, bytes] = {}
        try:
            async for event in self.stream:
                snapshot = accumulate(event=event, current_snapshot=snapshot, json_bufs=buffers)
                yield event
        except Exception as exc:
            self.done(None, exc)
            raise
        self.done(None if snapshot is None else snapshot.to_dict(mode="json", warnings=False), None)

    async def close(self) -> None:
        """Close the recorded stream."""
        close = getattr(self.stream, "close", None)
        if close is not None:
            await close()


def recorded_message(body: str) -> dict[str, Any] | None:
    """The message a ``malformed_body`` holds when its body is a message's JSON (a response recorded verbatim).

    A streamed request gets that message's events, so a recorded response can be served streamed too.
    """
    try:
        data: object = json.loads(body)
    except ValueError:
        return None
    if isinstance(data, dict) and cast("dict[str, Any]", data).get("type") == "message":
        return cast("dict[str, Any]", data)
    return None

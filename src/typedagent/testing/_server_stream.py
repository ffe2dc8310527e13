"""The fake server's streamed answers: server-sent events as the API writes them, faults mid-stream included."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._stream_script import StreamFault, error_event, message_events

__all__ = ["SseReply", "sse_reply"]


@dataclass(frozen=True, slots=True)
class SseReply:
    """A ``text/event-stream`` answer: its events as written, and whether the connection drops after them."""

    frames: list[bytes]
    request_id: str
    fault: str | None = None
    """``drop``: the connection drops after the frames; ``stall``: nothing more is sent, the connection stays open."""

    async def write(self, writer: asyncio.StreamWriter, keep_alive: bool, headers: Mapping[str, str]) -> bool:
        """Send the answer in chunks, one per event, as the API does; False when the connection cannot be reused.

        ``headers``: more response headers (the rate-limit headers of a server enforcing limits).
        """
        head = [
            "HTTP/1.1 200 OK",
            "content-type: text/event-stream; charset=utf-8",
            "cache-control: no-cache",
            "transfer-encoding: chunked",
            f"connection: {'keep-alive' if keep_alive and self.fault is None else 'close'}",
            f"request-id: {self.request_id}",
            *(f"{name}: {value}" for name, value in headers.items()),
        ]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        for frame in self.frames:
            writer.write(b"%x\r\n%b\r\n" % (len(frame), frame))
        if self.fault == "drop":
            await writer.drain()
            writer.transport.abort()
            return False
        if self.fault == "stall":
            await writer.drain()
            return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True


def sse_reply(message: Mapping[str, Any], fault: StreamFault | None, request_id: str) -> SseReply:
    """The streamed answer for ``message`` (a response's JSON), broken as ``fault`` says."""
    events = message_events(message)
    if fault is None:
        return SseReply([_frame(event) for event in events], request_id)
    events = events[: fault.after]
    if fault.fault == "error":
        events.append(error_event(fault.error_type, request_id))
    return SseReply([_frame(event) for event in events], request_id, None if fault.fault == "error" else fault.fault)


def _frame(event: Mapping[str, Any]) -> bytes:
    kind = event["type"]
    return f"event: {kind}\ndata: {json.dumps(event, separators=(',', ':'), ensure_ascii=False)}\n\n".encode()

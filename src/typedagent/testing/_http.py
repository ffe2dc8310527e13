"""The fake server HTTP answer: a status, a JSON body and headers, or an action (drop the connection, hang)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Literal

from ._server_stream import SseReply

if TYPE_CHECKING:
    pass

__all__ = ["HttpReply", "json_reply"]


_REASONS = {529: "Overloaded"}


@dataclass(slots=True)
class HttpReply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    action: Literal["send", "drop", "hang"] = "send"
    stream: SseReply | None = None
    """A streamed answer, sent instead of ``body``."""

    def encode(self, keep_alive: bool) -> bytes:
        reason = _REASONS.get(self.status) or (HTTPStatus(self.status).phrase if self.status in _KNOWN else "Unknown")
        head = [
            f"HTTP/1.1 {self.status} {reason}",
            "content-type: application/json",
            f"content-length: {len(self.body)}",
            f"connection: {'keep-alive' if keep_alive else 'close'}",
            *(f"{name}: {value}" for name, value in self.headers.items()),
        ]
        return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + self.body


_KNOWN = frozenset(status.value for status in HTTPStatus)


def json_reply(status: int, data: Any, headers: Mapping[str, str] | None = None) -> HttpReply:
    return HttpReply(status=status, body=json.dumps(data).encode(), headers=dict(headers or {}))

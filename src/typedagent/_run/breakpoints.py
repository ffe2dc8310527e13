"""The cache breakpoints a request already holds besides typedagent's: where they are, and their TTLs.

``caching`` places typedagent's own breakpoints around them (the API takes at most four); an execution's
``MarkerMemo`` remembers what its conversation holds, so each message is looked through once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

__all__ = ["MarkerMemo", "block_markers", "ttl_of", "user_markers"]


class MarkerMemo:
    """The user breakpoints found so far in one execution's conversation, so each message is looked through once.

    A conversation's messages are replaced, never changed, once appended, and only the last one is ever replaced:
    the messages before it are *settled*, and their breakpoints are kept here as they are found. The last message
    is looked through again only when it is another object. A different list of messages (or of tools) starts the
    memo afresh.
    """

    __slots__ = ("found", "last", "last_ttls", "messages", "settled", "tool_ttls", "tools")

    def __init__(self) -> None:
        self.messages: object = None
        self.settled = 0
        """How many messages (from the first) are looked through: all but the last, at most."""
        self.found: list[tuple[str, str | None]] = []
        """The breakpoints of the settled messages, in order."""
        self.tools: object = None
        self.tool_ttls: tuple[str | None, ...] = ()
        self.last: object = None
        """The last message looked through, and its breakpoints: it is settled by the next call, unchanged."""
        self.last_ttls: list[str | None] = []

    def markers(self, tools: object, messages: Sequence[Mapping[str, Any]]) -> list[tuple[str, str | None]]:
        """``user_markers(tools, messages)``, looking through only what is new since the last call."""
        if self.tools is not tools:
            self.tools, self.tool_ttls = tools, tuple(_tool_markers(tools))
        if self.messages is not messages or self.settled > len(messages):
            self.messages, self.settled, self.found, self.last = messages, 0, [], None
        settled = len(messages) - 1
        if settled > self.settled:
            for message in messages[self.settled : settled]:
                ttls = self.last_ttls if message is self.last else block_markers(message.get("content"))
                if ttls:
                    self.found.extend(("messages", ttl) for ttl in ttls)
            self.settled = settled
        last = None
        if messages:
            if messages[-1] is not self.last:
                self.last, self.last_ttls = messages[-1], block_markers(messages[-1].get("content"))
            last = self.last_ttls
        if not (self.tool_ttls or self.found or last):
            return []  # no breakpoint but typedagent's: the usual case
        markers = [("tools", ttl) for ttl in self.tool_ttls]
        markers += self.found
        if last:
            markers.extend(("messages", ttl) for ttl in last)
        return markers


def ttl_of(marker: Mapping[str, Any] | None) -> str | None:
    return "1h" if marker is not None and marker.get("ttl") == "1h" else None


def user_markers(tools: object, messages: Sequence[Mapping[str, Any]]) -> list[tuple[str, str | None]]:
    """The breakpoints the request holds besides ours, in prompt order: where (``tools`` or ``messages``), TTL."""
    found: list[tuple[str, str | None]] = [("tools", ttl) for ttl in _tool_markers(tools)]
    for message in messages:
        found.extend(("messages", ttl) for ttl in block_markers(message.get("content")))
    return found


def _tool_markers(tools: object) -> list[str | None]:
    found: list[str | None] = []
    for tool in cast("Iterable[object]", tools or ()):
        marker = cast("Mapping[str, Any]", tool).get("cache_control") if isinstance(tool, Mapping) else None
        if marker is not None and isinstance(marker, Mapping):
            found.append(ttl_of(cast("Mapping[str, Any]", marker)))
    return found


def block_markers(content: object) -> list[str | None]:
    """The TTLs of the breakpoints in a message's content (a list of blocks, or a tuple of them), in order."""
    if not isinstance(content, list | tuple):
        return []
    ttls: list[str | None] = []
    for block in cast("Sequence[object]", content):
        if type(block) is dict or isinstance(block, Mapping):
            fields = cast("Mapping[str, Any]", block)
            marker = fields.get("cache_control")
            if marker is not None and isinstance(marker, Mapping):
                ttls.append(ttl_of(cast("Mapping[str, Any]", marker)))
            inner = fields.get("content")
            if inner is not None and type(inner) is not str:
                ttls.extend(block_markers(inner))  # blocks inside a tool_result
    return ttls

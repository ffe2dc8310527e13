"""The events a stream's consumer has not read yet, kept in order, with stale partial outputs dropped.

A ``PartialOutput`` is a snapshot of the whole output so far, so each one is as large as the output: a
consumer that falls behind while the model writes a long output would otherwise hold one snapshot per
streamed piece, and memory would grow with the square of the output. While the consumer lags, a new
snapshot of a tool call replaces the unread one (the newest holds everything the older ones did); every
other event — the text and tool input deltas included — is kept, in order.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from typing import Any, Generic, cast

from typing_extensions import TypeVar

from .events import PartialOutput

__all__ = ["AsyncBacklog", "Backlog", "ThreadBacklog"]

ItemT = TypeVar("ItemT")


class _Box:
    """Where an unread ``PartialOutput`` waits; emptied when a newer one of the same call replaces it."""

    __slots__ = ("partial",)

    def __init__(self, partial: PartialOutput[Any]) -> None:
        self.partial: PartialOutput[Any] | None = partial


class Backlog(Generic[ItemT]):
    """Unread items in order; a ``PartialOutput`` replaces the unread ``PartialOutput`` of the same call."""

    __slots__ = ("_items", "_partials")

    def __init__(self) -> None:
        self._items: deque[ItemT | _Box] = deque()
        self._partials: dict[str, _Box] = {}

    def put(self, item: ItemT) -> None:
        """Add ``item`` at the end (emptying the unread snapshot it supersedes)."""
        if not isinstance(item, PartialOutput):
            self._items.append(item)
            return
        partial = cast("PartialOutput[Any]", item)  # pyright leaves the narrowed type partly Unknown
        stale = self._partials.get(partial.id)
        if stale is not None:
            stale.partial = None  # its place stays, empty: the newest goes last, after the deltas it includes
        box = _Box(partial)
        self._partials[partial.id] = box
        self._items.append(box)

    def pop(self) -> ItemT | None:
        """The oldest unread item, or None when there is none."""
        while self._items:
            item = self._items.popleft()
            if not isinstance(item, _Box):
                return item
            partial = item.partial
            if partial is None:
                continue
            if self._partials.get(partial.id) is item:
                del self._partials[partial.id]
            return cast("ItemT", partial)
        return None


class AsyncBacklog(Generic[ItemT]):
    """A ``Backlog`` for a consumer on the event loop: ``put`` never blocks, ``await get()`` waits for an item."""

    __slots__ = ("_backlog", "_ready")

    def __init__(self) -> None:
        self._backlog: Backlog[ItemT] = Backlog()
        self._ready = asyncio.Event()

    def put(self, item: ItemT) -> None:
        """Add ``item``; wakes the consumer."""
        self._backlog.put(item)
        self._ready.set()

    async def get(self) -> ItemT:
        """The oldest unread item, once there is one."""
        while True:
            item = self._backlog.pop()
            if item is not None:
                return item
            self._ready.clear()
            await self._ready.wait()


class ThreadBacklog(Generic[ItemT]):
    """A ``Backlog`` shared by two threads: ``put`` never blocks, ``get()`` blocks until there is an item."""

    __slots__ = ("_backlog", "_ready")

    def __init__(self) -> None:
        self._backlog: Backlog[ItemT] = Backlog()
        self._ready = threading.Condition()

    def put(self, item: ItemT) -> None:
        """Add ``item``; wakes the consumer."""
        with self._ready:
            self._backlog.put(item)
            self._ready.notify()

    def get(self) -> ItemT:
        """The oldest unread item, waiting for one if needed."""
        with self._ready:
            while True:
                item = self._backlog.pop()
                if item is not None:
                    return item
                self._ready.wait()

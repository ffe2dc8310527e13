"""How a tool's return value becomes tool-result text: as JSON, capped, and off the loop when it is large."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sized
from typing import Final, cast

import pydantic
import pydantic_core

from .._shared.threads import run_in_thread

__all__ = ["render_off_loop", "render_result", "truncate"]


def render_result(value: object) -> str:
    """Turn a handler's return value into tool-result text: ``str`` as is, everything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    return pydantic_core.to_json(value, fallback=str).decode()


async def render_off_loop(value: object, limit: int) -> str:
    """Render ``value`` as ``render_result`` does, on a worker thread unless it is small.

    A large result never blocks the loop, and is rendered only as far as the model will read it: a list,
    a dict or an iterator (an endless generator included) item by item until ``limit`` characters, so
    the worker gives up the GIL between items and stops early.
    """
    if _small(value):
        return render_result(value)
    return await run_in_thread(_render_large, value, limit)


def _render_large(value: object, limit: int) -> str:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, Mapping):
        pairs = cast("Mapping[object, object]", value)
        return _render_parts("{", "}", ({key: item} for key, item in pairs.items()), limit, sized=True)
    if isinstance(value, Iterable) and not isinstance(value, str | bytes | bytearray | pydantic.BaseModel):
        items = cast("Iterable[object]", value)
        return _render_parts("[", "]", ([item] for item in items), limit, sized=isinstance(value, Sized))
    return render_result(value)


def _render_parts(open_: str, close: str, parts: Iterator[object], limit: int, *, sized: bool) -> str:
    """JSON of a container, one element at a time (each rendered as a one-element container, brackets cut)."""
    pieces: list[str] = []
    size = 1
    for part in parts:
        piece = pydantic_core.to_json(part, fallback=str).decode()[1:-1]
        pieces.append(piece)
        size += len(piece) + 1
        if size > limit:
            rest = "the rest was not rendered" if sized else "the iterator was not read further"
            marker = f"\n[... truncated at {limit} characters: {rest} ...]"
            return (open_ + ",".join(pieces))[: max(0, limit - len(marker))] + marker
    return open_ + ",".join(pieces) + close


_SMALL_NODES: Final = 2_000


def _small(value: object) -> bool:
    """Whether ``value`` is plain data that renders in a few microseconds (a bounded walk; no deep copies)."""
    if type(value) is list and _flat(cast("list[object]", value)):
        return True
    budget = _SMALL_NODES
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        budget -= 1
        if budget < 0:
            return False
        if isinstance(item, str):  # the most common first
            budget -= len(item) >> 8
        elif item is None or isinstance(item, bool | int | float):
            continue
        elif isinstance(item, list | tuple):
            items = cast("list[object] | tuple[object, ...]", item)
            if len(items) > budget:
                return False
            stack.extend(items)
        elif isinstance(item, dict):
            mapping = cast("dict[object, object]", item)
            if 2 * len(mapping) > budget:
                return False
            stack.extend(mapping.keys())
            stack.extend(mapping.values())
        else:
            return False  # models, dataclasses, iterators and other objects: render them off the loop
    return True


def _flat(items: list[object]) -> bool:
    """Whether ``items`` is a short list of short strings and numbers (a usual result): small, seen without the walk."""
    if len(items) > _FLAT_ITEMS:
        return False
    for item in items:
        if isinstance(item, str):
            if len(item) > _FLAT_TEXT:
                return False
        elif not (item is None or type(item) is int or type(item) is float or type(item) is bool):
            return False
    return True


_FLAT_ITEMS: Final = 64
_FLAT_TEXT: Final = 1_000


def truncate(text: str, limit: int) -> str:
    """Cap ``text`` at ``limit`` characters with a visible marker saying how much was cut."""
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    return f"{text[:limit]}\n[... truncated: {cut} of {len(text)} characters cut ...]"

"""How a response's usage becomes counts: its counters, its server tool requests, and the iterations it leaves out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

__all__ = ["COUNTERS", "ITERATIONS_IN_TOP_LEVEL", "REQUEST_COUNTERS", "read_usage", "split_usage"]

COUNTERS: Final = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
"""The token counters of a usage object, and of each entry of its ``iterations``."""

REQUEST_COUNTERS: Final = ("web_search_requests", "web_fetch_requests")
"""The server tool requests of ``usage.server_tool_use`` (billed per request)."""

ITERATIONS_IN_TOP_LEVEL: Final[dict[str, bool]] = {
    "message": True,
    "fallback_message": True,
    "compaction": False,
    "advisor_message": False,
}
"""Every kind of ``usage.iterations`` entry the installed SDK knows, and whether the response's top-level counters
already include its tokens.

The sampling iterations of the model that answered (``message``, and ``fallback_message`` in its place when a
fallback model served the turn) make up the top-level counters. A compaction and an advisor consultation are
separate inferences whose tokens the API reports only here: they are added to the totals. A kind newer than
this table is taken as a separate inference too, since nothing in the top level accounts for it.
"""


def read_usage(usage: object) -> dict[str, int]:
    """The counts of a response's usage (an SDK model, or a dict): missing, None and negative values count as 0.

    A negative count is malformed usage; counting it would make totals (and the token budget) go down.
    """
    counts = {name: _count(usage, name) for name in COUNTERS}
    for entry in _iterations(usage):
        kind = _field(entry, "type")
        if ITERATIONS_IN_TOP_LEVEL.get(kind if isinstance(kind, str) else "", False):
            continue
        for name in COUNTERS:
            counts[name] += _count(entry, name)
    server = _field(usage, "server_tool_use")
    for name in REQUEST_COUNTERS:
        counts[name] = _count(server, name)
    return counts


def split_usage(usage: object) -> tuple[dict[str, int], list[tuple[str | None, dict[str, int]]]]:
    """``read_usage`` in parts, to price each part at the rates of its model.

    The response's own counts (its top-level counters and server tool requests), then each separate inference
    of its ``iterations`` with the model that ran it (None when the entry names none).
    """
    top = {name: _count(usage, name) for name in COUNTERS}
    server = _field(usage, "server_tool_use")
    for name in REQUEST_COUNTERS:
        top[name] = _count(server, name)
    separate: list[tuple[str | None, dict[str, int]]] = []
    for entry in _iterations(usage):
        kind = _field(entry, "type")
        if ITERATIONS_IN_TOP_LEVEL.get(kind if isinstance(kind, str) else "", False):
            continue
        model = _field(entry, "model")
        counts = {name: _count(entry, name) for name in COUNTERS}
        separate.append((model if isinstance(model, str) and model else None, counts))
    return top, separate


def _iterations(usage: object) -> Sequence[object]:
    # The standard Usage model has no such field: the SDK keeps it as the raw list of dicts the API sent.
    iterations = _field(usage, "iterations")
    if not isinstance(iterations, list | tuple):
        return ()
    return cast("Sequence[object]", iterations)


def _field(value: object, name: str) -> object:
    if isinstance(value, Mapping):
        return cast("Mapping[str, Any]", value).get(name)
    found = getattr(value, name, None)
    if found is None:
        extra = getattr(value, "__pydantic_extra__", None)
        if isinstance(extra, dict):
            found = cast("dict[str, Any]", extra).get(name)
    return found


def _count(value: object, name: str) -> int:
    number = _field(value, name)
    if isinstance(number, bool) or not isinstance(number, int):
        return 0
    return max(number, 0)

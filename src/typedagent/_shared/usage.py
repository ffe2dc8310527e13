"""How a response's usage becomes counts: its counters, its server tool requests, and the iterations it leaves out."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final, cast

__all__ = ["COUNTERS", "ITERATIONS_IN_TOP_LEVEL", "ONE_HOUR_WRITES", "REQUEST_COUNTERS", "read_usage", "split_usage"]

COUNTERS: Final = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
"""The token counters of a usage object, and of each entry of its ``iterations``."""

ONE_HOUR_WRITES: Final = "cache_creation_1h_input_tokens"
"""The count, among ``cache_creation_input_tokens``, of the tokens written to the 1-hour cache: the API reports it
as ``usage.cache_creation.ephemeral_1h_input_tokens`` (the rest, ``ephemeral_5m_input_tokens``, went to the
5-minute cache)."""

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
    counts, separate = split_usage(usage)
    for _model, part in separate:
        for name in (*COUNTERS, ONE_HOUR_WRITES):
            counts[name] += part[name]
    return counts


def split_usage(usage: object) -> tuple[dict[str, int], list[tuple[str | None, dict[str, int]]]]:
    """``read_usage`` in parts, to price each part at the rates of its model.

    The response's own counts (its top-level counters and server tool requests), then each separate inference
    of its ``iterations`` with the model that ran it (None when the entry names none).
    """
    field = _reader(usage)
    top = _counts(field)
    server = field("server_tool_use")
    server_field = _reader(server)
    for name in REQUEST_COUNTERS:
        top[name] = 0 if server is None else _count(server_field(name))
    separate: list[tuple[str | None, dict[str, int]]] = []
    iterations = field("iterations")
    # The standard Usage model has no such field: the SDK keeps it as the raw list of dicts the API sent.
    if isinstance(iterations, list | tuple):
        for entry in cast("Sequence[object]", iterations):
            entry_field = _reader(entry)
            kind = entry_field("type")
            if ITERATIONS_IN_TOP_LEVEL.get(kind if isinstance(kind, str) else "", False):
                continue
            model = entry_field("model")
            counts = _counts(entry_field)
            separate.append((model if isinstance(model, str) and model else None, counts))
    return top, separate


def _counts(field: Callable[[str], object]) -> dict[str, int]:
    """The token counters read through ``field``, with the 1-hour cache writes among the cache writes.

    ``cache_creation`` splits the writes by TTL; when ``cache_creation_input_tokens`` is missing, the split's sum
    stands for it. A 1-hour count above the writes (malformed) is cut to them.
    """
    counts = {name: _count(field(name)) for name in COUNTERS}
    split = field("cache_creation")
    if split is None:
        counts[ONE_HOUR_WRITES] = 0
        return counts
    split_field = _reader(split)
    one_hour = _count(split_field("ephemeral_1h_input_tokens"))
    if field("cache_creation_input_tokens") is None:
        counts["cache_creation_input_tokens"] = one_hour + _count(split_field("ephemeral_5m_input_tokens"))
    counts[ONE_HOUR_WRITES] = min(one_hour, counts["cache_creation_input_tokens"])
    return counts


def _reader(value: object) -> Callable[[str], object]:
    """How to read a field of ``value``: a dict's key, a pydantic model's field or extra field, else an attribute."""
    if type(value) is dict:
        return cast("dict[str, object]", value).get
    if value is not None and isinstance(value, Mapping):
        return cast("Mapping[str, object]", value).get
    extra = getattr(value, "__pydantic_extra__", None)
    fields = getattr(value, "__dict__", None)
    if type(fields) is dict and getattr(value, "__pydantic_fields_set__", None) is not None:
        # A pydantic model (the SDK's Usage): its fields are in __dict__, what the SDK does not know in its extra.
        # Read there, never through getattr, whose miss goes through pydantic's slow __getattr__.
        known = cast("dict[str, object]", fields)
        if type(extra) is not dict or not extra:
            return known.get
        unknown = cast("dict[str, object]", extra)
        return lambda name: known.get(name, unknown.get(name))

    def field(name: str) -> object:
        found = getattr(value, name, None)
        if found is None and type(extra) is dict:
            found = cast("dict[str, object]", extra).get(name)
        return found

    return field


def _count(number: object) -> int:
    if type(number) is int:
        return number if number > 0 else 0
    if isinstance(number, bool) or not isinstance(number, int):
        return 0
    return max(number, 0)

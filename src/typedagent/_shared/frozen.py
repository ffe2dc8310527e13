"""Deep read-only copies of JSON-like settings, and fresh plain copies of them to send."""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, cast

__all__ = ["freeze", "freeze_sequence", "fresh_copy", "thaw"]


def freeze(value: object) -> Any:
    """A deep copy of ``value`` that cannot be changed: mappings become read-only views, lists become tuples."""
    if isinstance(value, Mapping):
        items = cast("Mapping[object, object]", value).items()
        return MappingProxyType({key: freeze(item) for key, item in items})
    if isinstance(value, list | tuple):
        return tuple(freeze(item) for item in cast("list[object] | tuple[object, ...]", value))
    return copy.deepcopy(value)


def thaw(value: object) -> Any:
    """A fresh plain copy of a frozen value (dicts and lists again), safe to hand to a client that may change it."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in cast("Mapping[object, object]", value).items()}
    if isinstance(value, tuple):
        return [thaw(item) for item in cast("tuple[object, ...]", value)]
    return copy.deepcopy(value)


class _FrozenSequence(tuple[Any, ...]):
    """A frozen sequence that keeps its JSON text, taken when it was frozen: a fresh copy is one ``json.loads``."""

    json_text: str | None = None


def freeze_sequence(values: Iterable[object]) -> tuple[Any, ...]:
    """``freeze`` of each value, as a tuple that also holds its JSON text (when it is JSON) for fast copies."""
    frozen = _FrozenSequence(freeze(value) for value in values)
    # Not JSON (a test double's odd value, say): copies are thawed instead.
    with contextlib.suppress(TypeError, ValueError):
        frozen.json_text = json.dumps(thaw(frozen))
    return frozen


def fresh_copy(frozen: object) -> Any:
    """A fresh plain copy of ``frozen``: parsed from its JSON text when it has one (much faster), else thawed."""
    text = getattr(frozen, "json_text", None)
    return json.loads(text) if text is not None else thaw(frozen)

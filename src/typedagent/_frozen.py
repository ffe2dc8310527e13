"""Deep read-only copies of JSON-like settings, and fresh plain copies of them to send."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, cast

__all__ = ["as_json", "freeze", "fresh_copy", "thaw"]


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


def as_json(frozen: object) -> str | None:
    """JSON text of a frozen value, or None when it holds something JSON cannot carry."""
    try:
        return json.dumps(thaw(frozen))
    except (TypeError, ValueError):
        return None


def fresh_copy(frozen: object, text: str | None) -> Any:
    """A fresh plain copy of ``frozen``: parsed from its JSON ``text`` when there is one (much faster), else thawed."""
    return json.loads(text) if text is not None else thaw(frozen)

"""The limits ``anthropic.transform_schema`` moved into a schema's description, read back for made-up values.

A strict schema (a strict tool's, a native output's) keeps ``minimum: 0`` or a ``pattern`` only as
``"{minimum: 0, pattern: ^a+$}"`` at the end of its description: values made up without them would fail pydantic's
check of the output.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["restored"]

_MOVED_KEY: Final = re.compile(r"(?:^|, )([A-Za-z]+): ")
_NUMERIC: Final = frozenset(
    {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
    | {"minLength", "maxLength", "minItems", "maxItems", "minProperties"}
)


def restored(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """``schema`` with the limits ``anthropic.transform_schema`` moved into its description put back."""
    moved = _moved(schema.get("description"))
    limits: dict[str, Any] = {}
    for key, text in moved.items():
        if key in schema:
            continue
        if key == "pattern":
            limits[key] = text
        elif key in _NUMERIC:
            try:
                limit = int(text) if text.lstrip("-").isdigit() else float(text)
            except ValueError:
                continue
            if math.isfinite(limit):
                limits[key] = limit
    return {**schema, **limits} if limits else schema


def _moved(description: object) -> dict[str, str]:
    """The ``{key: value, ...}`` block ``transform_schema`` ends a description with, as text by key."""
    if not isinstance(description, str) or not description.endswith("}"):
        return {}
    start = description.rfind("\n\n{")
    block = description[start + 2 :] if start >= 0 else description if description.startswith("{") else ""
    inner = block[1:-1]
    keys = list(_MOVED_KEY.finditer(inner))
    if not keys:
        return {}
    ends = [match.start() for match in keys[1:]] + [len(inner)]
    return {match.group(1): inner[match.end() : end] for match, end in zip(keys, ends, strict=True)}

"""Comparing outputs field by field, with tolerances for numbers: the differences as ``path: expected …, got …``."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import cast

import pydantic

__all__ = ["differences", "leaf_count", "lookup", "plain"]


def plain(value: object) -> object:
    """``value`` as dicts, lists and scalars, numbers kept as numbers (a ``Decimal`` stays exact)."""
    if isinstance(value, pydantic.BaseModel):
        return plain(value.model_dump())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return plain({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in cast("Mapping[object, object]", value).items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in cast("Sequence[object]", value)]
    return value


def _is_number(value: object) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def _close(expected: object, actual: object, tolerance: float, relative: float) -> bool:
    gap = abs(float(cast("float", actual)) - float(cast("float", expected)))
    return gap <= tolerance or gap <= relative * abs(float(cast("float", expected)))


def differences(
    expected: object, actual: object, *, tolerance: float = 0.0, relative: float = 0.0, path: str = ""
) -> list[str]:
    """Every leaf where ``actual`` differs from ``expected``; numbers within the tolerances are equal.

    Args:
        expected: The expected value (already ``plain``).
        actual: The actual value (already ``plain``).
        tolerance: Largest absolute difference of two numbers that still counts as equal.
        relative: Largest difference relative to the expected number (0.01 is 1%).
        path: Where these values sit (dotted, ``line_items.0.amount``).
    """
    where = path or "(output)"
    leaf: tuple[object, object] = (expected, actual)  # before isinstance() narrows the two apart
    if isinstance(expected, dict) and isinstance(actual, dict):
        left, right = cast("dict[str, object]", expected), cast("dict[str, object]", actual)
        found: list[str] = []
        for key in left:
            inner = f"{path}.{key}" if path else key
            if key not in right:
                found.append(f"{inner}: expected {_show(left[key])}, got nothing")
            else:
                found += differences(left[key], right[key], tolerance=tolerance, relative=relative, path=inner)
        return found
    if isinstance(expected, list) and isinstance(actual, list):
        before, after = cast("list[object]", expected), cast("list[object]", actual)
        found = []
        for index, (old, new) in enumerate(zip(before, after, strict=False)):
            inner = f"{path}.{index}" if path else str(index)
            found += differences(old, new, tolerance=tolerance, relative=relative, path=inner)
        if len(before) != len(after):
            found.append(f"{where}: expected {len(before)} item(s), got {len(after)}")
        return found
    return _leaf_difference(where, *leaf, tolerance, relative)


def _as_number(value: object) -> object:
    """A numeric string as a ``Decimal`` (JSON writes decimals as strings), anything else as it is."""
    if isinstance(value, str):
        try:
            return Decimal(value)
        except ArithmeticError:
            return value
    return value


def _leaf_difference(where: str, expected: object, actual: object, tolerance: float, relative: float) -> list[str]:
    if _is_number(expected) != _is_number(actual):
        expected, actual = _as_number(expected), _as_number(actual)
    elif isinstance(expected, str) != isinstance(actual, str) and not isinstance(expected, bool | None):
        # a date or a UUID read back from JSON is its ISO string: compare the texts
        return [] if str(expected) == str(actual) else [_line(where, expected, actual)]
    if _is_number(expected) and _is_number(actual):
        return [] if _close(expected, actual, tolerance, relative) else [_line(where, expected, actual)]
    return [] if expected == actual else [_line(where, expected, actual)]


def leaf_count(value: object) -> int:
    """How many leaves (scalars) ``value`` has: the denominator of a per-field score."""
    if isinstance(value, dict):
        return sum(leaf_count(item) for item in cast("dict[str, object]", value).values()) or 1
    if isinstance(value, list):
        return sum(leaf_count(item) for item in cast("list[object]", value)) or 1
    return 1


def lookup(value: object, path: str) -> tuple[bool, object]:
    """The value at a dotted path (``line_items.0.amount``): ``(found, value)``."""
    current = value
    for part in path.split(".") if path else []:
        if isinstance(current, dict) and part in current:
            current = cast("dict[str, object]", current)[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(cast("list[object]", current)):
            current = cast("list[object]", current)[int(part)]
        else:
            return False, None
    return True, current


def _line(where: str, expected: object, actual: object) -> str:
    return f"{where}: expected {_show(expected)}, got {_show(actual)}"


def _show(value: object, width: int = 80) -> str:
    shown = repr(value) if isinstance(value, str) or value is None else str(value)
    return shown if len(shown) <= width else f"{shown[: width - 1]}…"

"""Checks on the numbers a user configures: finite, and of a usable sign."""

from __future__ import annotations

import math
from typing import TypeGuard

__all__ = ["check_non_negative", "is_finite_number"]


def is_finite_number(value: object) -> TypeGuard[int | float]:
    """Whether ``value`` is an ``int`` or ``float`` (not a ``bool``) other than NaN and the infinities."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def check_non_negative(value: object, what: str) -> float:
    """Return ``value`` as a float if it is a finite number >= 0.

    Raises:
        ValueError: it is not (NaN and the infinities included), naming ``what``.
    """
    if not is_finite_number(value) or value < 0:
        raise ValueError(f"{what} must be a finite number >= 0, got {value!r}.")
    return float(value)

"""Frozen slots dataclasses that can be built through their subscripted name (``RunInput[int](...)``)."""

from __future__ import annotations

import sys
from dataclasses import FrozenInstanceError
from typing import TypeVar

__all__ = ["subscriptable"]

ClassT = TypeVar("ClassT", bound=type)


def _refuse_assignment(self: object, name: str, value: object) -> None:
    """Refuse every assignment, as a frozen dataclass does."""
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def subscriptable(cls: ClassT) -> ClassT:
    """Let a generic frozen slots dataclass be called as ``Cls[X](...)`` on Python 3.11.

    Calling a subscripted generic sets ``__orig_class__`` on the new object and ignores the ``AttributeError`` a
    frozen class answers. On Python 3.11 the ``__setattr__`` that ``dataclass(frozen=True, slots=True)`` writes
    names the class as it was before slots were added, and so raises ``TypeError`` instead (fixed in 3.12).
    """
    if sys.version_info < (3, 12):  # pragma: no branch - the suite runs on 3.11
        setattr(cls, "__setattr__", _refuse_assignment)  # noqa: B010 - assigning the method directly is refused by mypy
    return cls

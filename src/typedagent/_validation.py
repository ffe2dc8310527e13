"""Validating an output candidate: pydantic schema first, then every custom validator."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pydantic

from ._context import RunContext
from ._errors import OutputRejected, safe_str
from ._tools import call_maybe_async, validation_error_lines

__all__ = [
    "ValidatorCrash",
    "Verdict",
    "judge_returned",
    "parse_candidate",
    "rejection_text",
    "validate_candidate",
]


@dataclass(frozen=True, slots=True)
class ValidatorCrash:
    """A validator raised something other than ``OutputRejected``, or returned something other than None."""

    validator: str
    error: Exception
    returned: bool = False
    """True when the validator returned a value (``error`` then describes it) rather than raised."""

    def what_happened(self) -> str:
        """``raised KeyError: oops`` or ``returned False instead of None``."""
        if self.returned:
            return safe_str(self.error)
        return f"raised {type(self.error).__name__}: {safe_str(self.error) or type(self.error).__name__}"


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of validating one candidate."""

    output: pydantic.BaseModel | None
    problems: tuple[str, ...]
    crash: ValidatorCrash | None = None


def parse_candidate(schema: type[pydantic.BaseModel], raw: dict[str, Any]) -> Verdict:
    """Schema validation only: ``model_validate`` of the tool input.

    pydantic turns ``ValueError``/``AssertionError`` from the model's own validators into validation
    errors and lets anything else through: that is a bug in the model's code, reported as a crash.
    """
    try:
        return Verdict(schema.model_validate(raw), ())
    except pydantic.ValidationError as exc:
        return Verdict(None, tuple(validation_error_lines(exc)))
    except Exception as exc:
        return Verdict(None, (), ValidatorCrash(f"{schema.__qualname__}.model_validate", exc))


async def validate_candidate(
    schema: type[pydantic.BaseModel],
    validators: Sequence[Any],
    takes_ctx: Sequence[bool],
    raw: dict[str, Any],
    ctx: RunContext[Any],
) -> Verdict:
    """Validate ``raw`` with the schema, then run every validator and collect every rejection.

    Sync validators run in a worker thread, async ones on the loop.
    """
    parsed = parse_candidate(schema, raw)
    if parsed.output is None:  # schema problems, or a crash inside the model's own validators
        return parsed
    problems: list[str] = []
    for validator, with_ctx in zip(validators, takes_ctx, strict=True):
        name = getattr(validator, "__qualname__", repr(validator))
        try:
            args = (parsed.output, ctx) if with_ctx else (parsed.output,)
            returned = await call_maybe_async(validator, *args)
        except OutputRejected as rejection:
            problems.append(rejection_text(rejection))
            continue
        except Exception as exc:
            return Verdict(parsed.output, tuple(problems), ValidatorCrash(name, exc))
        crash = judge_returned(name, returned)
        if crash is not None:
            return Verdict(parsed.output, tuple(problems), crash)
    return Verdict(parsed.output if not problems else None, tuple(problems))


def judge_returned(validator: str, returned: object) -> ValidatorCrash | None:
    """What a validator's return value means: None keeps the candidate; anything else is a bug in the validator.

    The one place that reads a validator's return value: validators reject by raising ``OutputRejected``,
    so a ``False`` (or any value) they return would otherwise pass unnoticed.
    """
    if returned is None:
        return None
    shown = safe_repr(returned)
    return ValidatorCrash(validator, TypeError(f"returned {shown} instead of None"), returned=True)


def rejection_text(rejection: OutputRejected) -> str:
    """The feedback an ``OutputRejected`` carries, as text, whatever the subclass did with its message."""
    message = getattr(rejection, "message", None)
    if isinstance(message, str):
        return message
    return safe_str(rejection) or type(rejection).__name__


def safe_repr(value: object) -> str:
    """``repr(value)``, shortened, never raising."""
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__} object>"
    return text if len(text) <= 200 else f"{text[:200]}..."

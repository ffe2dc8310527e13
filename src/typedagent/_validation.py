"""Validating an output candidate: pydantic schema first, then every custom validator."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pydantic

from ._context import RunContext
from ._errors import OutputRejected
from ._tools import call_maybe_async, validation_error_lines

__all__ = ["ValidatorCrash", "Verdict", "parse_candidate", "validate_candidate"]


@dataclass(frozen=True, slots=True)
class ValidatorCrash:
    """A validator raised something other than ``OutputRejected``."""

    validator: str
    error: Exception


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
        try:
            if with_ctx:
                await call_maybe_async(validator, parsed.output, ctx)
            else:
                await call_maybe_async(validator, parsed.output)
        except OutputRejected as rejection:
            problems.append(rejection.message)
        except Exception as exc:
            name = getattr(validator, "__qualname__", repr(validator))
            return Verdict(parsed.output, tuple(problems), ValidatorCrash(name, exc))
    return Verdict(parsed.output if not problems else None, tuple(problems))

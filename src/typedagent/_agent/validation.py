"""Validating an output candidate: pydantic schema first, then every custom validator."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pydantic

from .._shared.errors import AgentDefinitionError, OutputRejected, safe_str
from .._shared.threads import call_maybe_async
from .calling import validation_error_lines
from .context import RunContext

if TYPE_CHECKING:
    from .output import OutputTool

__all__ = [
    "Replacement",
    "ValidatorCrash",
    "Verdict",
    "judge_returned",
    "parse_candidate",
    "rejection_text",
    "validate_candidate",
    "validator_takes_ctx",
]


@dataclass(frozen=True, slots=True)
class ValidatorCrash:
    """A validator raised something other than ``OutputRejected``, or returned something that is not an output."""

    validator: str
    error: Exception
    returned: bool = False
    """True when the validator returned a value (``error`` then describes it) rather than raised."""

    def what_happened(self) -> str:
        """``raised KeyError: oops`` or ``returned False, which is not a Triage``."""
        if self.returned:
            return safe_str(self.error)
        return f"raised {type(self.error).__name__}: {safe_str(self.error) or type(self.error).__name__}"


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of validating one candidate: valid when it has neither problems nor a crash."""

    output: Any
    """The typed candidate, when it parsed (after any repairs); ``None`` otherwise (or when it is ``None``)."""
    problems: tuple[str, ...]
    crash: ValidatorCrash | None = None

    @property
    def valid(self) -> bool:
        """Whether ``output`` passed every check."""
        return not self.problems and self.crash is None


@dataclass(frozen=True, slots=True)
class Replacement:
    """A validator returned a value of the output type: it replaces the output."""

    value: Any


def parse_candidate(output: OutputTool[Any], raw: dict[str, Any]) -> Verdict:
    """Schema validation only: the output type's pydantic validation of the tool input.

    pydantic turns ``ValueError``/``AssertionError`` from the model's own validators into validation
    errors and lets anything else through: that is a bug in the model's code, reported as a crash.
    """
    try:
        return Verdict(output.parse(raw), ())
    except pydantic.ValidationError as exc:
        return Verdict(None, tuple(validation_error_lines(exc)))
    except Exception as exc:
        schema = output.schema
        is_model = isinstance(schema, type) and issubclass(schema, pydantic.BaseModel)
        name = f"{output.type_name}.model_validate" if is_model else f"validation of {output.type_name}"
        return Verdict(None, (), ValidatorCrash(name, exc))


async def validate_candidate(
    output: OutputTool[Any],
    validators: Sequence[Any],
    takes_ctx: Sequence[bool],
    raw: dict[str, Any],
    ctx: RunContext[Any],
) -> Verdict:
    """Validate ``raw`` with the schema, then run every validator and collect every rejection.

    A validator that returns a value of the output type replaces the output for the validators after it
    and for the result. Sync validators run in a worker thread, async ones on the loop.
    """
    parsed = parse_candidate(output, raw)
    if not parsed.valid:  # schema problems, or a crash inside the model's own validators
        return parsed
    current = parsed.output
    problems: list[str] = []
    for validator, with_ctx in zip(validators, takes_ctx, strict=True):
        name = getattr(validator, "__qualname__", repr(validator))
        try:
            args = (current, ctx) if with_ctx else (current,)
            returned = await call_maybe_async(validator, *args)
        except OutputRejected as rejection:
            problems.append(rejection_text(rejection))
            continue
        except Exception as exc:
            return Verdict(current, tuple(problems), ValidatorCrash(name, exc))
        judged = judge_returned(name, returned, output)
        if isinstance(judged, ValidatorCrash):
            return Verdict(current, tuple(problems), judged)
        if judged is not None:
            current = judged.value
    return Verdict(current, tuple(problems))


def judge_returned(validator: str, returned: object, output: OutputTool[Any]) -> Replacement | ValidatorCrash | None:
    """What a validator's return value means: None keeps the output, a value of the output type replaces it.

    The one place that reads a validator's return value. Anything else is a bug in the validator:
    validators reject by raising ``OutputRejected``, so a ``False`` they return would otherwise pass
    unnoticed. "Of the output type" is pydantic's strict mode: no coercion, so ``"3"`` is not an ``int``.
    """
    if returned is None:
        return None
    try:
        return Replacement(output.checked(returned))
    except Exception:
        shown = safe_repr(returned)
        what = f"returned {shown}, which is not a value of the output type {output.type_name}"
        return ValidatorCrash(validator, TypeError(what), returned=True)


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


def validator_takes_ctx(validator: object) -> bool:
    """Whether a validator takes the run context second; ``AgentDefinitionError`` if it can take neither form."""
    if not callable(validator):
        raise AgentDefinitionError(f"validators must be callables, got {validator!r}.")
    takes_ctx = _positional_arity(validator) >= 2
    try:
        signature = inspect.signature(validator)
    except (TypeError, ValueError):
        return takes_ctx  # a builtin without a signature: a wrong call shows up as VALIDATOR_ERROR
    try:
        signature.bind(*(("output", "ctx") if takes_ctx else ("output",)))
    except TypeError:
        raise AgentDefinitionError(
            f"validators take (output) or (output, ctx); "
            f"{getattr(validator, '__qualname__', validator)!r}{signature} cannot be called either way."
        ) from None
    return takes_ctx


def _positional_arity(fn: Callable[..., Any]) -> int:
    """How many positional arguments ``fn`` accepts (a large number for ``*args``)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 1
    count = 0
    for param in parameters:
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            return 2
        if param.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            count += 1
    return count

"""The built-in evaluators of outputs and outcomes: expected output, field values, containment, predicates, budgets."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, cast

from typing_extensions import TypeVar

from .._shared.errors import AgentErrorCode
from .._shared.generics import subscriptable
from ._compare import differences, leaf_count, lookup, plain
from ._score import EvalContext, Score

__all__ = ["Budget", "Contains", "ExpectedOutput", "FieldEquals", "Outcome", "Predicate"]

OutputT = TypeVar("OutputT", default=Any)


def _no_output(name: str, context: EvalContext[Any]) -> Score:
    return Score.check(name, False, f"no output: the execution failed with {context.error_code}")


@dataclass(frozen=True, kw_only=True, slots=True)
class ExpectedOutput:
    """The output equals the case's ``expected``, compared field by field.

    The score is the fraction of fields that match; the run passes only when all do. Numbers within
    ``tolerance`` (absolute) or ``relative`` (a fraction of the expected number) count as equal.
    """

    tolerance: float = 0.0
    """Largest absolute difference of two numbers that still counts as equal."""
    relative: float = 0.0
    """Largest difference relative to the expected number (0.01 is 1%)."""
    ignore: tuple[str, ...] = ()
    """Dotted field paths left out of the comparison (``summary``, ``line_items.0.description``)."""

    @property
    def name(self) -> str:
        """``ExpectedOutput``."""
        return "ExpectedOutput"

    def evaluate(self, context: EvalContext[Any], /) -> Score:
        """Compare the output with the case's expected output."""
        if context.expected is None:
            return Score.check(self.name, False, f"case {context.case!r} has no expected output to compare with")
        if context.output is None:
            return _no_output(self.name, context)
        expected, actual = plain(context.expected), plain(context.output)
        found = [
            line
            for line in differences(expected, actual, tolerance=self.tolerance, relative=self.relative)
            if not any(line.startswith((f"{path}:", f"{path}.")) for path in self.ignore)
        ]
        total = leaf_count(expected)
        value = max(0.0, 1.0 - len(found) / total)
        return Score(evaluator=self.name, passed=not found, value=value, reason="; ".join(found) or "matches")


@dataclass(frozen=True, kw_only=True, slots=True)
class FieldEquals:
    """The output's field at ``path`` equals ``value`` (numbers within ``tolerance``)."""

    path: str
    """Dotted path into the output (``total``, ``line_items.0.amount``)."""
    value: Any
    """The expected value."""
    tolerance: float = 0.0
    """Largest absolute difference of two numbers that still counts as equal."""

    @property
    def name(self) -> str:
        """``FieldEquals(path)``."""
        return f"FieldEquals({self.path})"

    def evaluate(self, context: EvalContext[Any], /) -> Score:
        """Compare one field."""
        if context.output is None:
            return _no_output(self.name, context)
        found, actual = lookup(plain(context.output), self.path)
        if not found:
            return Score.check(self.name, False, f"the output has no field {self.path!r}")
        problems = differences(plain(self.value), actual, tolerance=self.tolerance, path=self.path)
        return Score.check(self.name, not problems, "; ".join(problems) or f"{self.path} matches")


@dataclass(frozen=True, kw_only=True, slots=True)
class Contains:
    """The output (or its field at ``path``) contains ``value``: a substring of a string, an item of a list."""

    value: Any
    """What must be contained."""
    path: str = ""
    """Dotted path into the output; empty for the whole output (as JSON text)."""
    case_sensitive: bool = True
    """Compare strings exactly (False: ignoring case)."""

    @property
    def name(self) -> str:
        """``Contains(path)``."""
        return f"Contains({self.path or 'output'})"

    def evaluate(self, context: EvalContext[Any], /) -> Score:
        """Look for the value."""
        if context.output is None:
            return _no_output(self.name, context)
        found, where = lookup(plain(context.output), self.path)
        if not found:
            return Score.check(self.name, False, f"the output has no field {self.path!r}")
        if not self.path:
            where = json.dumps(where, default=str, ensure_ascii=False)
        if isinstance(where, list):
            items = [plain(item) for item in cast("list[object]", where)]
            hit = plain(self.value) in items
        else:
            haystack, needle = str(where), str(self.value)
            if not self.case_sensitive:
                haystack, needle = haystack.lower(), needle.lower()
            hit = needle in haystack
        label = self.path or "the output"
        return Score.check(self.name, hit, f"{label} {'contains' if hit else 'does not contain'} {self.value!r}")


@subscriptable
@dataclass(frozen=True, kw_only=True, slots=True)
class Predicate(Generic[OutputT]):
    """Your own check of the typed output: a function returning a bool, or a float from 0 to 1.

    A float passes at ``pass_at`` or above. The function never sees a failed execution (that run fails).
    """

    function: Callable[[OutputT], bool | float]
    """The check."""
    label: str = ""
    """The name reports show; default the function's name."""
    pass_at: float = 1.0
    """The least float that passes."""

    @property
    def name(self) -> str:
        """The label, or the function's name."""
        return self.label or getattr(self.function, "__name__", "Predicate")

    def evaluate(self, context: EvalContext[OutputT], /) -> Score:
        """Call the function on the output."""
        if context.output is None:
            return _no_output(self.name, context)
        verdict = self.function(context.output)
        if isinstance(verdict, bool):
            return Score.check(self.name, verdict, f"{self.name} returned {verdict}")
        value = min(1.0, max(0.0, float(verdict)))
        return Score(evaluator=self.name, passed=value >= self.pass_at, value=value, reason=f"{self.name}: {value:g}")


@dataclass(frozen=True, kw_only=True, slots=True)
class Outcome:
    """The execution ended as ``expect``: ``"success"`` (default) or a failure code such as ``"MAX_ITERATIONS"``."""

    expect: str = "success"
    """``"success"``, or the ``AgentErrorCode`` value a failure case must end with (``"MAX_ITERATIONS"``)."""

    def __post_init__(self) -> None:
        if self.expect not in {code.value for code in AgentErrorCode}:
            codes = ", ".join(sorted(code.value for code in AgentErrorCode))
            raise ValueError(f"Outcome(expect={self.expect!r}): expect one of {codes}.")

    @property
    def name(self) -> str:
        """``Outcome(expect)``."""
        return f"Outcome({self.expect})"

    def evaluate(self, context: EvalContext[Any], /) -> Score:
        """Compare the execution's outcome with the expected one."""
        actual = "success" if context.error_code is None else context.error_code.value
        detail = "" if context.error_code is None else f": {context.error_message}"
        return Score.check(self.name, actual == self.expect, f"ended with {actual}{detail}")


@dataclass(frozen=True, kw_only=True, slots=True)
class Budget:
    """The run stayed within limits: iterations, attempts, tokens, cost and latency (None: no limit)."""

    max_iterations: int | None = None
    """Most API calls."""
    max_attempts: int | None = None
    """Most attempts (1: accepted on the first try)."""
    max_tokens: int | None = None
    """Most tokens in total (input, output and cache)."""
    max_cost_usd: float | None = None
    """Most estimated cost; a run whose cost is unknown fails this limit."""
    max_latency_ms: float | None = None
    """Longest wall-clock duration."""

    @property
    def name(self) -> str:
        """``Budget``."""
        return "Budget"

    def evaluate(self, context: EvalContext[Any], /) -> Score:
        """Check every limit that is set."""
        over: list[str] = []
        checks: list[tuple[str, float | None, float | None]] = [
            ("iterations", context.iterations, self.max_iterations),
            ("attempts", context.attempts, self.max_attempts),
            ("tokens", context.tokens.total, self.max_tokens),
            ("cost_usd", context.cost_usd, self.max_cost_usd),
            ("latency_ms", context.latency_ms, self.max_latency_ms),
        ]
        for label, actual, limit in checks:
            if limit is None:
                continue
            if actual is None:
                over.append(f"{label}: unknown, limit {limit:g}")
            elif actual > limit:
                over.append(f"{label}: {actual:g} > {limit:g}")
        return Score.check(self.name, not over, "; ".join(over) or "within budget")

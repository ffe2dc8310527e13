"""One attempt (validation cycle): its own state, and the three ways it ends."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from .._shared.errors import AgentError, AgentErrorCode
from .._shared.results import AttemptRecord, TokenUsage

if TYPE_CHECKING:
    from .reply import Reply

__all__ = ["Accepted", "Attempt", "AttemptEnd", "Failed", "Paused", "Rejected"]


@dataclass(slots=True)
class Attempt:
    """The mutable state of one attempt; a new one is made for each attempt, so nothing is reset by hand."""

    number: int
    """1-based."""
    iteration: int = 0
    """API calls made in this attempt so far."""
    start: TokenUsage = field(default_factory=TokenUsage)
    """The execution's tokens when the attempt started: its own are what the execution counted since
    (``Execution.attempt_tokens``), its sub-runs' included."""
    candidate: dict[str, Any] | None = None
    """The output-tool input (or a JSON answer's object) to validate: the last one handed over (reflection: the last
    schema-valid one)."""
    schema_problems: tuple[str, ...] = ()
    """Reflection mode: why the latest output call did not parse (reported if submit finds no candidate)."""
    output_forced: bool = False
    """The current (last) iteration's request forced the output (``force_output_on_last_iteration``)."""

    def record(self, end: AttemptEnd, tokens: TokenUsage) -> AttemptRecord:
        """The attempt's public record, once it has ended (``tokens``: the attempt's)."""
        return AttemptRecord(
            number=self.number,
            iterations=self.iteration,
            tokens=tokens,
            outcome=end.outcome,
            candidate=self.candidate,
            validation_errors=end.problems,
            output_forced=self.output_forced,
        )


@dataclass(frozen=True, slots=True)
class Accepted:
    """The candidate passed validation: the execution succeeds with ``output``."""

    output: Any
    outcome: AgentErrorCode = AgentErrorCode.SUCCESS
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Rejected:
    """The attempt ended without a valid output; ``problems`` went back to the model and the next attempt starts."""

    outcome: AgentErrorCode
    problems: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Failed:
    """The execution cannot go on: it fails with ``error``."""

    error: AgentError
    problems: tuple[str, ...] = ()

    @property
    def outcome(self) -> AgentErrorCode:
        """The failure's code."""
        return self.error.code


AttemptEnd: TypeAlias = Accepted | Rejected | Failed
"""How an attempt ended."""


@dataclass(frozen=True, slots=True)
class Paused:
    """Not an end: the attempt waits for decisions on calls of its last response, so the execution pauses.

    ``replies`` are that response's calls: settled, waiting (``hold``), or output and submit calls handled on resume.
    """

    replies: list[Reply]

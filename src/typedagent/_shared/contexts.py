"""The typed context of each failure code: what ``AgentError.context`` holds (see ERROR_HANDLING.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from .alternatives import AlternativeFailure

__all__ = [
    "ApiErrorContext",
    "AttemptErrorsContext",
    "CancelledContext",
    "ContextWindowContext",
    "CostLimitContext",
    "ErrorContext",
    "HistoryProcessorErrorContext",
    "MaxIterationsContext",
    "Phase",
    "RefusalContext",
    "RequestLimitContext",
    "TimeoutContext",
    "TokenBudgetContext",
    "ToolCallLimitContext",
    "ToolsetErrorContext",
    "ValidatorErrorContext",
]


Phase: TypeAlias = Literal["attempt", "iteration", "tool"]
"""Where an execution was when it was cancelled or timed out."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ApiErrorContext:
    """Context of ``API_ERROR``."""

    status_code: int | None
    """HTTP status, or None for connection errors and timeouts."""
    error_type: str
    """The API's ``error.type`` (``overloaded_error``, …) or the exception class name."""
    request_id: str | None
    """The ``request-id`` response header, for Anthropic support."""
    attempt: int
    """Attempt during which the call failed."""
    iteration: int
    """Iteration (1-based, within the attempt) whose API call failed."""
    alternatives: tuple[AlternativeFailure, ...] = ()
    """With a fallback chain: each model tried for the call, in order, with its error (the last is this one's)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CancelledContext:
    """Context of ``EXECUTION_CANCELLED``."""

    phase: Phase
    """``attempt`` (before an attempt), ``iteration`` (before or during an API call) or ``tool``."""
    attempt: int
    """Attempt that was running (or about to start)."""
    iteration: int
    """Iteration within the attempt (0 before the first API call of the attempt)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TimeoutContext:
    """Context of ``TIMEOUT``."""

    timeout_s: float
    """The configured deadline."""
    phase: Phase
    """Where the execution was when the deadline passed."""
    attempt: int
    """Attempt that was running."""
    iteration: int
    """Iteration within the attempt."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TokenBudgetContext:
    """Context of ``TOKEN_BUDGET_EXCEEDED``."""

    max_total_tokens: int
    """The configured budget."""
    total_tokens: int
    """Tokens used when the budget check failed (at most one response over the budget)."""
    attempt: int
    """Attempt that was running."""
    iteration: int
    """Iterations completed in that attempt."""


@dataclass(frozen=True, kw_only=True, slots=True)
class MaxIterationsContext:
    """Context of ``MAX_ITERATIONS``."""

    attempt: int
    """Attempt that ran out of iterations."""
    iteration_count: int
    """API calls made in that attempt."""
    max_iterations: int
    """The configured ``max_iterations_per_attempt``."""


@dataclass(frozen=True, kw_only=True, slots=True)
class AttemptErrorsContext:
    """Context of the attempt-outcome codes (``VALIDATION_FAILED``, ``INVALID_RESPONSE``, …).

    Also used for ``SUBMIT_BEFORE_OUTPUT`` and ``MAX_TOKENS``.
    """

    attempt_errors: tuple[tuple[str, ...], ...]
    """One tuple of problems per attempt, in attempt order."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ValidatorErrorContext:
    """Context of ``VALIDATOR_ERROR``."""

    validator: str
    """Name of the validator that crashed."""
    error_type: str
    """Class name of the exception it raised."""
    attempt: int
    """Attempt whose candidate was being validated."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RefusalContext:
    """Context of ``REFUSAL``."""

    attempt: int
    """Attempt during which the model refused."""
    iteration: int
    """Iteration of the refusing response."""
    text: str
    """Any text the model returned with the refusal."""
    alternatives: tuple[AlternativeFailure, ...] = ()
    """With a fallback chain: each model tried for the call, in order, with its refusal or error."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ContextWindowContext:
    """Context of ``CONTEXT_WINDOW_EXCEEDED``."""

    attempt: int
    """Attempt during which the window was exceeded."""
    iteration: int
    """Iteration of that response."""
    input_tokens: int
    """Input tokens of the last response."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RequestLimitContext:
    """Context of ``REQUEST_LIMIT_EXCEEDED``."""

    max_requests: int
    """The configured limit."""
    attempt: int
    """Attempt that needed another API call."""
    iteration: int
    """Iterations completed in that attempt."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallLimitContext:
    """Context of ``TOOL_CALL_LIMIT_EXCEEDED``."""

    max_tool_calls: int
    """The configured limit."""
    tool_calls: int
    """Helper calls run before the response that would have passed the limit."""
    requested: int
    """Helper calls that response asked for (none of them ran)."""
    attempt: int
    """Attempt of that response."""
    iteration: int
    """Iteration of that response."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CostLimitContext:
    """Context of ``COST_LIMIT_EXCEEDED``."""

    max_cost_usd: float
    """The configured limit, in US dollars."""
    cost_usd: float
    """The estimated cost when the check failed (at most one response over the limit)."""
    attempt: int
    """Attempt that was running."""
    iteration: int
    """Iterations completed in that attempt."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolsetErrorContext:
    """Context of ``TOOLSET_ERROR``."""

    toolset: str
    """The toolset's name: its ``name=``, else its server's own (its command or URL before it could say)."""
    attempt: int
    """Attempt that was running (0 when connecting, before the first)."""
    iteration: int
    """Iterations completed in that attempt."""


@dataclass(frozen=True, kw_only=True, slots=True)
class HistoryProcessorErrorContext:
    """Context of ``HISTORY_PROCESSOR_ERROR``."""

    processor: str
    """Name of the history processor that failed."""
    error_type: str | None
    """Class name of the exception it raised; None when it returned a history that breaks the protocol."""
    attempt: int
    """Attempt whose model call the history was for."""
    iteration: int
    """Iteration (within the attempt) whose model call was not made."""


ErrorContext: TypeAlias = (
    ApiErrorContext
    | CancelledContext
    | TimeoutContext
    | TokenBudgetContext
    | MaxIterationsContext
    | AttemptErrorsContext
    | ValidatorErrorContext
    | RefusalContext
    | ContextWindowContext
    | RequestLimitContext
    | ToolCallLimitContext
    | CostLimitContext
    | ToolsetErrorContext
    | HistoryProcessorErrorContext
)
"""The context attached to an ``AgentError``; which class depends on the code."""

"""Every exception and error type typedagent defines.

Three families, never mixed::

    Exception
    ├── OutputRejected              signal raised by *your validators*; becomes model feedback,
    │                               never escapes an execution
    ├── ValueError
    │   ├── AgentDefinitionError    usage error at definition time (bad names, bad config)
    │   └── JournalError            an ``execute_many`` journal file that cannot be used as it is
    └── AgentExecutionError         raised only by ``ExecuteFailure.unwrap()``; carries the AgentError

Run failures themselves are *returned*, not raised: ``ExecuteFailure.error`` is an ``AgentError``
with an ``AgentErrorCode`` and a typed ``context`` (one class per code, in ``contexts``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, overload

from .alternatives import AlternativeFailure
from .contexts import (
    ApiErrorContext,
    AttemptErrorsContext,
    CancelledContext,
    ContextWindowContext,
    CostLimitContext,
    ErrorContext,
    HistoryProcessorErrorContext,
    MaxIterationsContext,
    Phase,
    RefusalContext,
    RequestLimitContext,
    TimeoutContext,
    TokenBudgetContext,
    ToolCallLimitContext,
    ToolsetErrorContext,
    ValidatorErrorContext,
)

__all__ = [
    "AgentDefinitionError",
    "AgentError",
    "AgentErrorCode",
    "AgentExecutionError",
    "AlternativeFailure",
    "ApiErrorContext",
    "AttemptErrorsContext",
    "CancelledContext",
    "ContextWindowContext",
    "CostLimitContext",
    "ErrorContext",
    "HistoryProcessorErrorContext",
    "JournalError",
    "MaxIterationsContext",
    "OutputRejected",
    "Phase",
    "RefusalContext",
    "RequestLimitContext",
    "TimeoutContext",
    "TokenBudgetContext",
    "ToolCallLimitContext",
    "ToolsetErrorContext",
    "ValidatorErrorContext",
]


class OutputRejected(Exception):
    """Raised by a validator to reject a candidate output.

    The message goes back to the model as feedback and the next attempt starts. It never escapes
    an execution.

    Args:
        message: What is wrong with the output, phrased for the model ("cite at least one article").
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class AgentDefinitionError(ValueError):
    """An agent definition (or one of its parts) is invalid; the message says how to fix it."""


class JournalError(ValueError):
    """An ``execute_many`` journal file cannot be used as it is; the message says why and what to do."""


class AgentErrorCode(StrEnum):
    """Why an execution failed, and how each attempt ended. See ERROR_HANDLING.md for what to do.

    One enum serves both: ``AgentError.code`` is always one of the failure codes, and an attempt's
    outcome (``AttemptRecord.outcome``, also spelled ``AttemptOutcome``) is a failure code or
    ``SUCCESS`` — the only member that is never the code of an error (as gRPC's status codes hold
    ``OK``).
    """

    SUCCESS = "success"
    """Not a failure: the attempt's output was accepted. Only ever an attempt's outcome."""
    VALIDATION_FAILED = "VALIDATION_FAILED"
    """The last attempt's candidate failed the schema or a custom validator."""
    INVALID_RESPONSE = "INVALID_RESPONSE"
    """The last attempt ended with a text-only response (no tool call)."""
    SUBMIT_BEFORE_OUTPUT = "SUBMIT_BEFORE_OUTPUT"
    """The last attempt called ``submit`` before any valid output-tool call (reflection mode)."""
    MAX_TOKENS = "MAX_TOKENS"
    """The last attempt's response was cut off at ``max_tokens``."""
    MAX_ITERATIONS = "MAX_ITERATIONS"
    """An attempt used ``max_iterations_per_attempt`` API calls without handing over an output."""
    EXECUTION_CANCELLED = "EXECUTION_CANCELLED"
    """The abort event was set."""
    API_ERROR = "API_ERROR"
    """The client raised (after its own retries)."""
    TOKEN_BUDGET_EXCEEDED = "TOKEN_BUDGET_EXCEEDED"
    """``ExecutionLimits.max_total_tokens`` was reached before an API call."""
    TIMEOUT = "TIMEOUT"
    """``ExecutionLimits.timeout_s`` passed."""
    REFUSAL = "REFUSAL"
    """The model refused (``stop_reason == "refusal"``)."""
    CONTEXT_WINDOW_EXCEEDED = "CONTEXT_WINDOW_EXCEEDED"
    """The conversation no longer fits the model's context window."""
    VALIDATOR_ERROR = "VALIDATOR_ERROR"
    """A custom validator raised something other than ``OutputRejected`` (a bug in the validator)."""
    REQUEST_LIMIT_EXCEEDED = "REQUEST_LIMIT_EXCEEDED"
    """``ExecutionLimits.max_requests`` API calls were made before another one was needed."""
    TOOL_CALL_LIMIT_EXCEEDED = "TOOL_CALL_LIMIT_EXCEEDED"
    """A response asked for more helper calls than ``ExecutionLimits.max_tool_calls`` leaves."""
    COST_LIMIT_EXCEEDED = "COST_LIMIT_EXCEEDED"
    """The estimated cost reached ``ExecutionLimits.max_cost_usd`` before an API call."""
    TOOLSET_ERROR = "TOOLSET_ERROR"
    """A toolset (MCP server) could not be connected, lost its connection, or has a tool named like another."""
    HISTORY_PROCESSOR_ERROR = "HISTORY_PROCESSOR_ERROR"
    """A history processor (``define_agent(history_processors=...)``) raised, or returned a history the API would
    refuse; nothing was sent."""


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentError:
    """Why an execution failed, with everything needed to act on it."""

    code: AgentErrorCode
    """Machine-readable reason."""
    message: str
    """Human-readable: what happened and what to do."""
    context: ErrorContext
    """Typed details for this code (see ERROR_HANDLING.md)."""
    last_output: dict[str, Any] | None = None
    """The raw input of the last output-tool call, if the model made one: nothing it produced is lost."""
    cause: BaseException | None = field(default=None, repr=False, compare=False)
    """The exception behind the failure, if any (API errors, validator crashes)."""

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    @overload
    def context_for(self, code: Literal[AgentErrorCode.API_ERROR]) -> ApiErrorContext | None: ...
    @overload
    def context_for(self, code: Literal[AgentErrorCode.EXECUTION_CANCELLED]) -> CancelledContext | None: ...
    @overload
    def context_for(self, code: Literal[AgentErrorCode.TIMEOUT]) -> TimeoutContext | None: ...
    @overload
    def context_for(self, code: Literal[AgentErrorCode.TOKEN_BUDGET_EXCEEDED]) -> TokenBudgetContext | None: ...
    @overload
    def context_for(self, code: Literal[AgentErrorCode.MAX_ITERATIONS]) -> MaxIterationsContext | None: ...
    @overload
    def context_for(
        self,
        code: Literal[
            AgentErrorCode.VALIDATION_FAILED,
            AgentErrorCode.INVALID_RESPONSE,
            AgentErrorCode.SUBMIT_BEFORE_OUTPUT,
            AgentErrorCode.MAX_TOKENS,
        ],
    ) -> AttemptErrorsContext | None: ...
    @overload
    def context_for(self, code: Literal[AgentErrorCode.VALIDATOR_ERROR]) -> ValidatorErrorContext | None: ...
    @overload
    def context_for(self, code: Literal[AgentErrorCode.REFUSAL]) -> RefusalContext | None: ...
    @overload
    def context_for(self, code: Literal[AgentErrorCode.CONTEXT_WINDOW_EXCEEDED]) -> ContextWindowContext | None: ...
    @overload
    def context_for(self, code: Literal[AgentErrorCode.REQUEST_LIMIT_EXCEEDED]) -> RequestLimitContext | None: ...
    @overload
    def context_for(self, code: Literal[AgentErrorCode.TOOL_CALL_LIMIT_EXCEEDED]) -> ToolCallLimitContext | None: ...
    @overload
    def context_for(self, code: Literal[AgentErrorCode.COST_LIMIT_EXCEEDED]) -> CostLimitContext | None: ...
    @overload
    def context_for(self, code: Literal[AgentErrorCode.TOOLSET_ERROR]) -> ToolsetErrorContext | None: ...
    @overload
    def context_for(
        self, code: Literal[AgentErrorCode.HISTORY_PROCESSOR_ERROR]
    ) -> HistoryProcessorErrorContext | None: ...
    @overload
    def context_for(self, code: AgentErrorCode) -> ErrorContext | None: ...
    def context_for(self, code: AgentErrorCode) -> ErrorContext | None:
        """This error's ``context``, typed for ``code``, when the error has that code; else None.

        ``context`` is a union of every code's context class; asking for one code narrows it in both
        mypy and pyright: ``if (api := error.context_for(AgentErrorCode.API_ERROR)) is not None:
        api.status_code``.

        Args:
            code: The code whose context you want.
        """
        return self.context if self.code == code else None


def safe_str(exc: BaseException) -> str:
    """``str(exc)``, but never raising: user code can raise exceptions whose ``__str__`` itself fails.

    Describing such an exception must not turn a contained failure into a crash of the execution;
    the placeholder is the one the ``traceback`` module prints.
    """
    try:
        return str(exc)
    except Exception:
        return "<exception str() failed>"


class AgentExecutionError(Exception):
    """Raised by ``ExecuteFailure.unwrap()``; carries the failure's ``AgentError``.

    Args:
        error: The failure's error.
    """

    def __init__(self, error: AgentError) -> None:
        super().__init__(str(error))
        self.error = error

    @property
    def code(self) -> AgentErrorCode:
        """Shortcut for ``error.code``."""
        return self.error.code

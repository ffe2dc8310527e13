"""Every way an execution fails: one builder per ``AgentError``, with its message and advice."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from .._agent.validation import ValidatorCrash
from .._api.api_errors import ApiFailure
from .._shared.errors import (
    AgentError,
    AgentErrorCode,
    AlternativeFailure,
    ApiErrorContext,
    AttemptErrorsContext,
    CancelledContext,
    ContextWindowContext,
    CostLimitContext,
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
    safe_str,
)
from .._shared.limits import Interrupted

__all__ = [
    "Where",
    "api_error",
    "cancelled",
    "context_window",
    "cost_limit",
    "describe",
    "history_processor",
    "interrupted",
    "max_iterations",
    "no_valid_output",
    "refusal",
    "request_limit",
    "sentences",
    "timed_out",
    "token_budget",
    "tool_call_limit",
    "toolset_error",
    "unknown_stop_reason",
    "validator_crash",
]


@dataclass(frozen=True, slots=True)
class Where:
    """Where the execution was when it failed, and what the model last handed over."""

    attempt: int
    iteration: int
    last_output: dict[str, Any] | None


def describe(exc: BaseException) -> str:
    """An exception's message, or its class name when it has none (never raises)."""
    return safe_str(exc) or type(exc).__name__


def cancelled(where: Where, phase: Phase) -> AgentError:
    """``EXECUTION_CANCELLED``: the abort event was set."""
    return _error(
        where,
        AgentErrorCode.EXECUTION_CANCELLED,
        f"The execution was cancelled by its abort event (during phase {phase!r}).",
        CancelledContext(phase=phase, attempt=where.attempt, iteration=where.iteration),
    )


def timed_out(where: Where, phase: Phase, timeout_s: float) -> AgentError:
    """``TIMEOUT``: the execution's deadline passed."""
    return _error(
        where,
        AgentErrorCode.TIMEOUT,
        f"The execution passed its {timeout_s} s deadline (during phase {phase!r}). Raise "
        "ExecutionLimits.timeout_s or lower max_iterations_per_attempt / max_attempts.",
        TimeoutContext(timeout_s=timeout_s, phase=phase, attempt=where.attempt, iteration=where.iteration),
    )


def interrupted(where: Where, phase: Phase, interruption: Interrupted, timeout_s: float | None) -> AgentError:
    """Work in flight was interrupted: by the abort event, or by the deadline."""
    if interruption.reason == "abort" or timeout_s is None:
        return cancelled(where, phase)
    return timed_out(where, phase, timeout_s)


def token_budget(where: Where, budget: int, used: int) -> AgentError:
    """``TOKEN_BUDGET_EXCEEDED``: the total reached ``max_total_tokens`` before an API call."""
    return _error(
        where,
        AgentErrorCode.TOKEN_BUDGET_EXCEEDED,
        f"The token budget of {budget} was reached ({used} tokens used). Raise "
        "ExecutionLimits.max_total_tokens or shorten the prompt, tool results or attempts.",
        TokenBudgetContext(
            max_total_tokens=budget, total_tokens=used, attempt=where.attempt, iteration=where.iteration
        ),
    )


def request_limit(where: Where, limit: int) -> AgentError:
    """``REQUEST_LIMIT_EXCEEDED``: another API call was needed after ``max_requests`` of them."""
    return _error(
        where,
        AgentErrorCode.REQUEST_LIMIT_EXCEEDED,
        f"The execution made its {limit} API call(s) (ExecutionLimits.max_requests) without a valid output. Raise "
        "max_requests, or lower ValidationConfig.max_attempts / max_iterations_per_attempt so runs end sooner.",
        RequestLimitContext(max_requests=limit, attempt=where.attempt, iteration=where.iteration),
    )


def tool_call_limit(where: Where, limit: int, used: int, requested: int) -> AgentError:
    """``TOOL_CALL_LIMIT_EXCEEDED``: a response asked for more helper calls than ``max_tool_calls`` leaves."""
    return _error(
        where,
        AgentErrorCode.TOOL_CALL_LIMIT_EXCEEDED,
        f"The model asked for {requested} helper call(s) with {used} of ExecutionLimits.max_tool_calls={limit} "
        "already used; none of them ran. Raise max_tool_calls, or say in the instructions how many lookups "
        "the task needs.",
        ToolCallLimitContext(
            max_tool_calls=limit, tool_calls=used, requested=requested, attempt=where.attempt, iteration=where.iteration
        ),
    )


def cost_limit(where: Where, limit: float, cost: float) -> AgentError:
    """``COST_LIMIT_EXCEEDED``: the estimated cost reached ``max_cost_usd`` before an API call."""
    return _error(
        where,
        AgentErrorCode.COST_LIMIT_EXCEEDED,
        f"The estimated cost reached the limit of ${limit:g} (${cost:.4f} spent). Raise ExecutionLimits.max_cost_usd, "
        "use a cheaper model, or shorten the prompt, tool results or attempts.",
        CostLimitContext(max_cost_usd=limit, cost_usd=cost, attempt=where.attempt, iteration=where.iteration),
    )


def toolset_error(where: Where, toolset: str, message: str, cause: BaseException | None = None) -> AgentError:
    """``TOOLSET_ERROR``: a toolset could not be connected, its connection was lost, or its tools clash.

    ``message`` says what happened and what to do (the toolset's own words).
    """
    return _error(
        where,
        AgentErrorCode.TOOLSET_ERROR,
        message,
        ToolsetErrorContext(toolset=toolset, attempt=where.attempt, iteration=where.iteration),
        cause,
    )


def max_iterations(where: Where, limit: int, output_name: str) -> AgentError:
    """``MAX_ITERATIONS``: an attempt used all its API calls without handing over an output."""
    return _error(
        where,
        AgentErrorCode.MAX_ITERATIONS,
        f"Attempt {where.attempt} used all {limit} iterations without handing over an output. "
        "Raise ValidationConfig.max_iterations_per_attempt, or tell the model in the instructions to call "
        f"{output_name!r} sooner.",
        MaxIterationsContext(attempt=where.attempt, iteration_count=where.iteration, max_iterations=limit),
    )


def api_error(where: Where, failure: ApiFailure, alternatives: tuple[AlternativeFailure, ...] = ()) -> AgentError:
    """``API_ERROR``: the client raised (after its own retries), answered something unreadable, or could not send.

    ``alternatives``: the models of the fallback chain tried for the call, the failing one last.
    """
    status, cause = failure.status_code, failure.cause
    if failure.error_type == "request_not_sent":
        what = f"The request was not sent: the client raised {type(cause).__name__} before sending it "
        what += f"({describe(cause)})"
    elif not failure.sent:
        what = f"The request was not sent ({failure.error_type}): {describe(cause)}"
    else:
        what = f"The Messages API call failed ({failure.error_type}{f', HTTP {status}' if status else ''}): "
        what += describe(cause)
    return _error(
        where,
        AgentErrorCode.API_ERROR,
        sentences(_chain_account(alternatives, what), failure.advice),
        ApiErrorContext(
            status_code=status,
            error_type=failure.error_type,
            request_id=failure.request_id,
            attempt=where.attempt,
            iteration=where.iteration,
            alternatives=alternatives,
        ),
        cause=cause,
    )


def _chain_account(alternatives: tuple[AlternativeFailure, ...], last: str) -> str:
    """``last`` (what happened to the call), after what every model of the fallback chain did when several were."""
    if len(alternatives) < 2:
        return last
    tried = ", ".join(
        f"{entry.model!r} {entry.error_type}{f' (HTTP {entry.status_code})' if entry.status_code else ''}"
        for entry in alternatives
    )
    return f"No model of the fallback chain answered: {tried} (each in error.context.alternatives). The last: {last}"


def unknown_stop_reason(where: Where, stop_reason: str | None) -> AgentError:
    """``API_ERROR``: the response ended with a stop reason this version does not know, and called no tool."""
    return _error(
        where,
        AgentErrorCode.API_ERROR,
        f"The model's response ended with stop_reason {stop_reason!r}, which this version of typedagent does "
        "not know, and called no tool, so the loop cannot tell whether to continue. Upgrade typedagent (and "
        "anthropic); the response is kept in metadata.messages.",
        ApiErrorContext(
            status_code=None,
            error_type="unknown_stop_reason",
            request_id=None,
            attempt=where.attempt,
            iteration=where.iteration,
        ),
    )


def refusal(where: Where, text: str, alternatives: tuple[AlternativeFailure, ...] = ()) -> AgentError:
    """``REFUSAL``: the model refused (``stop_reason == "refusal"``), and so did every model it moved on to."""
    said = f" Model said: {text!r}" if text else ""
    return _error(
        where,
        AgentErrorCode.REFUSAL,
        _chain_account(
            alternatives,
            "The model refused to answer. Rephrase the prompt or instructions; retrying the same input is unlikely to "
            f"help.{said}",
        ),
        RefusalContext(attempt=where.attempt, iteration=where.iteration, text=text, alternatives=alternatives),
    )


def context_window(where: Where, input_tokens: int) -> AgentError:
    """``CONTEXT_WINDOW_EXCEEDED``: the conversation no longer fits the model's context window."""
    return _error(
        where,
        AgentErrorCode.CONTEXT_WINDOW_EXCEEDED,
        "The conversation no longer fits the model's context window. Shorten the prompt or history, "
        "lower max_tool_result_chars, or use a model with a larger window.",
        ContextWindowContext(attempt=where.attempt, iteration=where.iteration, input_tokens=input_tokens),
    )


def validator_crash(where: Where, crash: ValidatorCrash) -> AgentError:
    """``VALIDATOR_ERROR``: a validator (or the output model's own validation code) raised."""
    return _error(
        where,
        AgentErrorCode.VALIDATOR_ERROR,
        sentences(
            f"Validator {crash.validator!r} {crash.what_happened()}",
            "Validators reject an output by raising OutputRejected (or, inside a pydantic model, ValueError), keep "
            "it by returning None, or replace it by returning a value of the output type; anything else is a bug "
            "in the validator. Fix it and run again.",
        ),
        ValidatorErrorContext(validator=crash.validator, error_type=type(crash.error).__name__, attempt=where.attempt),
        cause=crash.error,
    )


def history_processor(where: Where, processor: str, problem: str, error: BaseException | None) -> AgentError:
    """``HISTORY_PROCESSOR_ERROR``: a history processor raised, or returned a history the API would refuse."""
    if error is not None:
        what = f"History processor {processor!r} raised {type(error).__name__}: {describe(error)}"
        advice = "Fix the processor (a bug in it ends the execution); nothing was sent."
    else:
        what = f"History processor {processor!r} returned a history the Messages API would refuse: {problem}"
        advice = (
            "Nothing was sent. A processor may drop or shorten earlier turns, but must keep the first turn the "
            "user's, each tool_use with its tool_result in the next turn, and the current turn (the last message) "
            "as it is."
        )
    return _error(
        where,
        AgentErrorCode.HISTORY_PROCESSOR_ERROR,
        sentences(what, advice),
        HistoryProcessorErrorContext(
            processor=processor,
            error_type=None if error is None else type(error).__name__,
            attempt=where.attempt,
            iteration=where.iteration,
        ),
        cause=error,
    )


def no_valid_output(
    where: Where, code: AgentErrorCode, last_problems: Sequence[str], attempt_errors: Sequence[tuple[str, ...]]
) -> AgentError:
    """The last attempt ended without a valid output: its outcome is the failure's code."""
    return _error(
        where,
        code,
        sentences(
            f"No valid output after {len(attempt_errors)} attempt(s); the last ended with {code}: "
            + "; ".join(_clause(problem) for problem in last_problems),
            _ADVICE[code],
        ),
        AttemptErrorsContext(attempt_errors=tuple(attempt_errors)),
    )


_ADVICE: Final = {
    AgentErrorCode.VALIDATION_FAILED: "Check the validators' messages; make the instructions state those rules, "
    "or raise ValidationConfig.max_attempts.",
    AgentErrorCode.INVALID_RESPONSE: "The model answered in text instead of calling the output tool; make the "
    "instructions ask for the tool call.",
    AgentErrorCode.SUBMIT_BEFORE_OUTPUT: "The model called submit before a schema-valid output call; describe the "
    "output tool and the submit flow in the instructions.",
    AgentErrorCode.MAX_TOKENS: "Raise define_agent(max_tokens=...) or ask for a shorter output.",
}


_ENDS: Final = (".", "!", "?")
_CLOSERS: Final = "'\")]"


def sentences(*parts: str) -> str:
    """Join message parts as sentences: each ends with one full stop (unless it ends another way), then one space.

    Parts often end with text from elsewhere, an exception's message or a validator's, which may or may not
    end with a period; this keeps ``...expression The client raised`` and ``...plain text.. The model`` out.
    """
    joined: list[str] = []
    for part in parts:
        text = part.strip()
        if text:
            joined.append(text if _ended(text) else f"{text}.")
    return " ".join(joined)


def _ended(text: str) -> bool:
    """Whether ``text`` already ends a sentence (a closing quote or bracket after the end counts)."""
    return text.endswith(_ENDS) or (text[-1] in _CLOSERS and text[:-1].endswith(_ENDS))


def _clause(problem: str) -> str:
    """A problem quoted within a sentence, among others: without its own final period."""
    text = problem.strip()
    return text[:-1] if text.endswith(".") and not text.endswith("..") else text


def _error(
    where: Where,
    code: AgentErrorCode,
    message: str,
    context: Any,
    cause: BaseException | None = None,
) -> AgentError:
    return AgentError(code=code, message=message, context=context, last_output=where.last_output, cause=cause)

"""The ``typedagent`` logger's lines: one INFO line per finished execution, DEBUG lines per iteration and tool call."""

from __future__ import annotations

import logging
from typing import Any

from .._shared.pausing import PausableResult
from .._shared.results import ExecuteFailure

__all__ = ["correlation", "log_execution", "log_iteration", "log_tool_call", "logger"]

logger = logging.getLogger("typedagent")


def correlation(span: Any) -> dict[str, str]:
    """The trace and span ids of ``span`` (hex, as backends show them), or none when it records nothing."""
    if span is None:
        return {}
    context = span.get_span_context()
    if not context.is_valid:
        return {}
    return {"trace_id": format(context.trace_id, "032x"), "span_id": format(context.span_id, "016x")}


def _suffix(ids: dict[str, str]) -> str:
    return f" trace_id={ids['trace_id']} span_id={ids['span_id']}" if ids else ""


def log_execution(agent: str, result: PausableResult[Any], span: Any = None) -> None:
    """The INFO line of a finished (or paused) execution: agent, outcome, attempts, iterations, tokens and latency."""
    if not logger.isEnabledFor(logging.INFO):
        return
    meta = result.metadata
    outcome = result.error.code.value if isinstance(result, ExecuteFailure) else result.status
    ids = correlation(span)
    tokens = meta.tokens
    logger.info(
        "agent %r %s: %s after %d attempt(s), %d iteration(s), %d tokens (%d in, %d out) in %.1f ms%s",
        agent,
        "paused" if result.status == "paused" else "finished",
        outcome,
        len(meta.attempts),
        meta.iterations,
        tokens.total,
        tokens.input_tokens,
        tokens.output_tokens,
        meta.latency_ms,
        _suffix(ids),
        extra={
            "typedagent_agent": agent,
            "typedagent_outcome": outcome,
            "typedagent_attempts": len(meta.attempts),
            "typedagent_iterations": meta.iterations,
            "typedagent_tokens": tokens.total,
            "typedagent_latency_ms": meta.latency_ms,
            **ids,
        },
    )


def log_iteration(agent: str, attempt: int, iteration: int, outcome: str, elapsed_ms: float, span: Any) -> None:
    """The DEBUG line of one model call: which attempt and iteration, how it ended, how long it took."""
    ids = correlation(span)
    logger.debug(
        "agent %r attempt %d iteration %d: %s in %.1f ms%s",
        agent,
        attempt,
        iteration,
        outcome,
        elapsed_ms,
        _suffix(ids),
        extra={"typedagent_agent": agent, "typedagent_attempt": attempt, "typedagent_iteration": iteration, **ids},
    )


def log_tool_call(agent: str, name: str, kind: str, is_error: bool, elapsed_ms: float, span: Any) -> None:
    """The DEBUG line of one tool call: the tool, its kind, whether it answered with an error, how long it took."""
    ids = correlation(span)
    logger.debug(
        "agent %r tool %r (%s): %s in %.1f ms%s",
        agent,
        name,
        kind,
        "error" if is_error else "ok",
        elapsed_ms,
        _suffix(ids),
        extra={"typedagent_agent": agent, "typedagent_tool": name, **ids},
    )

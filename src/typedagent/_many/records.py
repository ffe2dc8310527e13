"""A journal line: a finished (or paused) execution written as one JSON record, and the result read back from it.

A success keeps its output (as JSON), a failure its error with its typed context; both keep tokens, cost,
attempts and timings, not the conversation. A paused execution keeps its whole state, conversation included.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any, Final, Literal, cast, get_args, overload

import pydantic
import pydantic_core

from .._agent.definition import AgentDefinition
from .._shared.errors import AgentError, AgentErrorCode, AlternativeFailure, ErrorContext, JournalError
from .._shared.pausing import ExecutePaused, PausableResult, PausedState
from .._shared.results import (
    AttemptOutcome,
    AttemptRecord,
    CallbackError,
    ExecuteFailure,
    ExecuteResult,
    ExecuteSuccess,
    ExecutionMetadata,
    TokenUsage,
)

__all__ = ["VERSION", "record_line", "result_of"]

VERSION: Final = 2
"""The newest format version read back; a journal line of a higher one (``"v"``) is refused.

A line is written in the oldest format that holds it: 1 for a finished execution, 2 for a paused one (its
``"state"``), so a typedagent that knows only format 1 refuses a journal with paused runs, saying to upgrade,
instead of misreading them, and still reads every other journal."""
PAUSED_VERSION: Final = 2
_CONTEXTS: Final[dict[str, type[Any]]] = {cls.__name__: cls for cls in get_args(ErrorContext)}


def record_line(
    *, key: str, index: int, fingerprint: str, agent: AgentDefinition[Any, Any], result: PausableResult[Any]
) -> bytes:
    """One journal line (JSON, newline-terminated) for a finished (or paused) execution."""
    meta = result.metadata
    state = None
    if isinstance(result, ExecuteSuccess):
        outcome, output, error = "success", agent.output.to_json(result.output), None
    elif isinstance(result, ExecutePaused):
        outcome, output, error, state = "paused", None, None, json.loads(result.state.to_json())
    else:
        outcome, output, error = str(result.error.code), None, _error_json(result.error)
    record: dict[str, Any] = {
        "key": key,
        "index": index,
        "outcome": outcome,
        "output": output,
        "error": error,
        "tokens": dataclasses.asdict(meta.tokens),
        "cost_usd": meta.cost_usd,
        "cache_savings_usd": meta.cache_savings_usd,
        "tool_calls": meta.tool_calls,
        "models_used": meta.models_used,
        "agent": agent.name,
        "model": meta.model,
        "iterations": meta.iterations,
        "latency_ms": round(meta.latency_ms, 3),
        "attempts": [_attempt_json(attempt) for attempt in meta.attempts],
        "callback_errors": [dataclasses.asdict(error) for error in meta.callback_errors],
        "pauses": meta.pauses,
        "input_sha256": fingerprint,
        "v": 1,
    }
    if state is not None:
        record["state"] = state
        record["v"] = PAUSED_VERSION
    return pydantic_core.to_json(record, fallback=str) + b"\n"


def _error_json(error: AgentError) -> dict[str, Any]:
    context = {"type": type(error.context).__name__, **dataclasses.asdict(error.context)}
    return {"code": str(error.code), "message": error.message, "context": context, "last_output": error.last_output}


def _attempt_json(attempt: AttemptRecord) -> dict[str, Any]:
    data = dataclasses.asdict(attempt)
    data["outcome"] = str(attempt.outcome)
    return data


@overload
def result_of(
    record: Mapping[str, Any], agent: AgentDefinition[Any, Any], *, pausable: Literal[False] = False
) -> ExecuteResult[Any]: ...
@overload
def result_of(
    record: Mapping[str, Any], agent: AgentDefinition[Any, Any], *, pausable: bool
) -> PausableResult[Any]: ...
def result_of(
    record: Mapping[str, Any], agent: AgentDefinition[Any, Any], *, pausable: bool = False
) -> PausableResult[Any]:
    """Rebuild the ``ExecuteResult`` (or, in a ``pausable`` run, the ``ExecutePaused``) a journal line stands for.

    Raises:
        JournalError: the line does not fit (an output the agent's output type no longer accepts, an
            unknown error code, a damaged state), or it is a paused execution and the run is not ``pausable``.
    """
    key = record.get("key")
    if record.get("outcome") == "paused":
        return _paused_of(record, agent, pausable=pausable)
    try:
        metadata = _metadata_of(record, [])
        error = record["error"]
        if error is None:
            return ExecuteSuccess(output=agent.output.from_json(record["output"]), metadata=metadata)
        data = dict(error["context"])
        context_type = _CONTEXTS[data.pop("type")]
        context = context_type(**{name: _tuples(value) for name, value in data.items()})
        failure = AgentError(
            code=AgentErrorCode(error["code"]),
            message=error["message"],
            context=cast("ErrorContext", context),
            last_output=error["last_output"],
        )
        return ExecuteFailure(error=failure, metadata=metadata)
    except pydantic.ValidationError as exc:
        raise JournalError(
            f"the journaled output of key {key!r} no longer fits {agent.output.type_name} ({exc.error_count()} "
            "problem(s)): the output type changed since it was written. Use a new journal file."
        ) from None
    except (KeyError, TypeError, ValueError) as exc:
        raise JournalError(f"the journal line of key {key!r} is not one typedagent can read back: {exc!r}.") from None


def _metadata_of(record: Mapping[str, Any], messages: list[Any]) -> ExecutionMetadata:
    return ExecutionMetadata(
        model=record["model"],
        tokens=TokenUsage(**record["tokens"]),
        attempts=tuple(_attempt_of(attempt) for attempt in record["attempts"]),
        iterations=record["iterations"],
        latency_ms=record["latency_ms"],
        callback_errors=tuple(CallbackError(**error) for error in record["callback_errors"]),
        messages=messages,
        cost_usd=record.get("cost_usd"),
        cache_savings_usd=record.get("cache_savings_usd"),
        tool_calls=record.get("tool_calls", 0),
        pauses=record.get("pauses", 0),
        models_used=tuple(record.get("models_used", ())),
    )


def _paused_of(record: Mapping[str, Any], agent: AgentDefinition[Any, Any], *, pausable: bool) -> ExecutePaused:
    key = record.get("key")
    if not pausable:
        raise JournalError(
            f"the journal holds key {key!r} as a paused execution: run with execute_many(..., pausable=True) to read "
            "it back as paused (then resume it with execute_agent(agent, resume=..., decisions=...)), or use a new "
            "journal."
        )
    try:
        state = PausedState.from_json(json.dumps(record["state"]))
        metadata = _metadata_of(record, state.messages)
    except (KeyError, TypeError, ValueError) as exc:
        raise JournalError(f"the paused state journaled under key {key!r} cannot be read back: {exc}") from None
    return ExecutePaused(pending=state.pending, state=state, metadata=metadata)


def _attempt_of(data: Mapping[str, Any]) -> AttemptRecord:
    return AttemptRecord(
        number=data["number"],
        iterations=data["iterations"],
        tokens=TokenUsage(**data["tokens"]),
        outcome=AttemptOutcome(data["outcome"]),
        candidate=data["candidate"],
        validation_errors=tuple(data["validation_errors"]),
    )


_ALTERNATIVE_FIELDS: Final = frozenset(field.name for field in dataclasses.fields(AlternativeFailure))


def _tuples(value: Any) -> Any:
    """JSON lists back to the tuples the context classes hold (a fallback chain's failures as their class)."""
    if isinstance(value, dict):
        entry = cast("dict[str, Any]", value)  # pyright leaves it partly Unknown
        if {"model", "error_type"} <= entry.keys() <= _ALTERNATIVE_FIELDS:
            return AlternativeFailure(**entry)
        return entry
    if isinstance(value, list):
        items = cast("list[Any]", value)  # type: ignore[redundant-cast]  # pyright leaves it partly Unknown
        return tuple(_tuples(item) for item in items)
    return value

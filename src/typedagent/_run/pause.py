"""Pausing an execution: its state written down as plain JSON data, and the ``ExecutePaused`` result handing it over."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import TYPE_CHECKING, Any, cast

from .._agent.output import SUBMIT_TOOL_NAME
from .._shared.determinism import runtime
from .._shared.frozen import fresh_copy
from .._shared.paused_json import FORMAT, VERSION, Call, Fingerprint, StateData, Usage
from .._shared.pausing import ExecutePaused, PausedState
from .approval import pending_call
from .fallback_state import fallback_json
from .observe import observers

if TYPE_CHECKING:
    from .._agent.definition import AgentDefinition
    from .._shared.results import AttemptRecord, TokenUsage
    from .execution import Execution
    from .reply import Reply

__all__ = ["as_json", "fingerprint", "pause"]


async def pause(execution: Execution, replies: list[Reply]) -> ExecutePaused:
    """End this segment of the execution: the state to resume from, handed over as the result (``on_pause`` too)."""
    execution.pauses += 1
    state = PausedState(_state_data(execution, replies))
    result = ExecutePaused(
        pending=tuple(pending_call(reply) for reply in replies if reply.hold is not None),
        state=state,
        metadata=execution.metadata(),
    )
    observers.paused(execution, result)
    await execution.hooks.pause(result)
    return result


def _state_data(execution: Execution, replies: list[Reply]) -> StateData:
    attempt = execution.attempt
    params = execution.params
    data: StateData = {
        "version": VERSION,
        "format": FORMAT,
        "id": execution.id,
        "agent": execution.agent.name,
        "fingerprint": fingerprint(execution.agent),
        "limits": cast("Any", dataclasses.asdict(execution.limits)),
        "elapsed_s": runtime().clock() - execution.started,
        "pauses": execution.pauses,
        "request": {
            "system": execution.system,  # as written, without the cache's marker and padding (added again on resume)
            "can_force": execution.can_force,
            "container": as_json(params.get("container")),
        },
        "conversation": as_json(execution.conversation.messages),
        "attempt": {
            "number": attempt.number,
            "iteration": attempt.iteration,
            "tokens": _usage(execution.attempt_tokens()),
            "candidate": as_json(attempt.candidate),
            "schema_problems": list(attempt.schema_problems),
            "output_forced": attempt.output_forced,
        },
        "totals": {
            "tokens": _usage(execution.tokens),
            "cost_usd": execution.cost_usd,
            "cache_savings_usd": execution.cache_savings_usd,
            "cost_complete": execution.cost_complete,
            "iterations": execution.iterations,
            "tool_calls": execution.tool_calls,
            "response_model": execution.response_model,
            "last_output": as_json(execution.last_output),
            "models_used": list(execution.models_used),
        },
        "records": [_record(record) for record in execution.records],
        "warnings": list(execution.warnings),
        "callback_errors": [cast("Any", dataclasses.asdict(error)) for error in execution.hooks.errors],
        "batch": [_call(reply) for reply in replies],
        "trace": execution.trace,
    }
    moved = fallback_json(execution.fallback)
    if moved is not None:
        data["totals"]["fallback"] = moved
    return data


def _call(reply: Reply) -> Call:
    block = reply.block
    settled = reply.done and reply.hold is None
    return {
        "id": block.id,
        "name": block.name,
        "input": as_json(block.input),
        "kind": cast("Any", reply.kind),
        "hold": reply.hold,
        "result": (
            {
                "content": as_json(reply.blocks) if reply.blocks is not None else reply.content,
                "is_error": reply.is_error,
                "duration_ms": reply.duration_ms,
            }
            if settled
            else None
        ),
    }


def _record(record: AttemptRecord) -> Any:
    data = dataclasses.asdict(record)
    data["outcome"] = str(record.outcome)
    data["validation_errors"] = list(record.validation_errors)
    return as_json(data)


def _usage(usage: TokenUsage) -> Usage:
    return cast("Usage", {field.name: getattr(usage, field.name) for field in dataclasses.fields(usage)})


def as_json(value: Any) -> Any:
    """A deep copy of ``value`` as JSON data (the state is a value: the running execution must not change it).

    Raises:
        TypeError: ``value`` holds something that is not JSON data (a prompt block or history message holding
            bytes, say): such a conversation cannot be paused.
    """
    try:
        return json.loads(json.dumps(value, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"the execution cannot pause: its conversation holds something that is not JSON data ({exc}); pass "
            "prompts and message_history as JSON data (base64 text for images and documents)."
        ) from None


def fingerprint(agent: AgentDefinition[Any, Any]) -> Fingerprint:
    """What a paused conversation assumes of the agent: its model, each tool's schema, the output tool."""
    output = agent.output.name
    theirs = (output, SUBMIT_TOOL_NAME) if agent.reflection_enabled else (output,)
    tools: dict[str, str] = {}
    schema: object = None
    for param in fresh_copy(agent._tool_params):
        name = str(param.get("name"))
        if name == output:
            schema = param.get("input_schema")
        elif name not in theirs:
            tools[name] = _digest(param.get("input_schema", param))
    digest = _digest({"name": output, "schema": schema, "reflection": agent.reflection_enabled})
    return {"model": agent.model, "tools": tools, "output": digest}


def _digest(value: object) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]

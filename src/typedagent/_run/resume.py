"""Resuming a paused execution: the state checked against the agent and the decisions, then the execution rebuilt."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from .._shared.decisions import Approve, Decision, Deny, ExternalResult
from .._shared.determinism import runtime
from .._shared.errors import AgentErrorCode
from .._shared.paused_json import Call, StateData
from .._shared.pausing import PausedState
from .._shared.results import AttemptRecord, CallbackError, TokenUsage, used_since
from .attempt import Attempt
from .fallback_state import restore_fallback
from .pause import fingerprint
from .reply import CallBlock, Reply
from .request import request_params

if TYPE_CHECKING:
    from .._agent.definition import AgentDefinition
    from .execution import Execution

__all__ = ["Resumed", "check_decisions", "check_fingerprint", "restore"]


@dataclass(frozen=True, slots=True)
class Resumed:
    """What a resumed execution starts with: the state it resumes, the paused batch, and the decisions on it."""

    state: PausedState
    replies: list[Reply]
    decisions: Mapping[str, Decision]


def check_fingerprint(agent: AgentDefinition[Any, Any], state: PausedState) -> None:
    """Raise ``ValueError`` naming what changed when ``state`` was paused with another model, tools or output."""
    saved, now = state._data["fingerprint"], fingerprint(agent)
    changes: list[str] = []
    if saved["model"] != now["model"]:
        changes.append(f"the model changed from {saved['model']!r} to {now['model']!r}")
    removed = sorted(saved["tools"].keys() - now["tools"].keys())
    added = sorted(now["tools"].keys() - saved["tools"].keys())
    changed = sorted(
        name for name in saved["tools"].keys() & now["tools"].keys() if saved["tools"][name] != now["tools"][name]
    )
    if removed:
        changes.append(f"tool(s) {', '.join(map(repr, removed))} are gone")
    if added:
        changes.append(f"tool(s) {', '.join(map(repr, added))} are new")
    if changed:
        changes.append(f"the schema of tool(s) {', '.join(map(repr, changed))} changed")
    if saved["output"] != now["output"]:
        changes.append("the output tool changed (its name, schema or reflection mode)")
    if changes:
        raise ValueError(
            f"the paused state does not fit agent {agent.name!r}: {'; '.join(changes)} since it was paused. Resume it "
            "with the agent it was paused with (same model, tools and output), or start a new execution."
        )
    asking_toolsets = any(toolset.requires_approval for toolset in agent.toolsets)
    for call in state.pending:
        helper = agent.helper(call.name)
        if helper is None and call.kind == "approval" and asking_toolsets:
            continue  # a toolset's tool: known only once the toolset is connected, when the call runs
        if helper is None or helper.external != (call.kind == "external"):
            raise ValueError(
                f"the paused state is damaged: call {call.id!r} of {call.name!r} waits for "
                f"{'its result' if call.kind == 'external' else 'approval'}, which agent {agent.name!r}'s tool "
                "never does."
            )


def check_decisions(state: PausedState, decisions: object) -> dict[str, Decision]:
    """The decisions, one per pending call and of its kind; else ``ValueError`` (``TypeError`` for a wrong type)."""
    if not isinstance(decisions, Mapping):
        raise TypeError(
            f"decisions must be a dict of call id to Approve() / Deny(reason) / ExternalResult(...), "
            f"got {type(decisions).__name__}."
        )
    given = dict(cast("Mapping[str, object]", decisions))
    pending = {call.id: call for call in state.pending}
    waiting = ", ".join(f"{call.id!r} ({call.name}, {call.kind})" for call in pending.values())
    unknown = [key for key in given if key not in pending]
    if unknown:
        raise ValueError(
            f"decisions name {', '.join(map(repr, unknown))}, which the paused execution does not wait on; "
            f"it waits on {waiting}."
        )
    missing = [call for key, call in pending.items() if key not in given]
    if missing:
        raise ValueError(
            f"no decision for {', '.join(f'{c.id!r} ({c.name}, {c.kind})' for c in missing)}: every pending call "
            "needs one (Approve() or Deny(reason) for approval, ExternalResult(...) for an external tool)."
        )
    for key, decision in given.items():
        if not isinstance(decision, Approve | Deny | ExternalResult):
            raise TypeError(
                f"decisions[{key!r}] must be Approve(), Deny(reason) or ExternalResult(...), got {decision!r:.100}."
            )
        call = pending[key]
        if call.kind == "approval" and isinstance(decision, ExternalResult):
            raise ValueError(
                f"call {key!r} ({call.name}) waits for approval: decide it with Approve() or Deny(reason), "
                "not ExternalResult."
            )
        if call.kind == "external" and not isinstance(decision, ExternalResult):
            raise ValueError(
                f"call {key!r} ({call.name}) is an external tool's: hand over its result with ExternalResult(value) "
                "or ExternalResult(error=...), not Approve or Deny."
            )
    return cast("dict[str, Decision]", given)


def restore(execution: Execution, state: PausedState) -> list[Reply]:
    """Make ``execution`` the paused one again (counters, usage, records, request); return the paused batch."""
    data = state._data
    totals, attempt = data["totals"], data["attempt"]
    execution.id, execution.pauses, execution.trace = data["id"], data["pauses"], data["trace"]
    execution.started = runtime().clock() - data["elapsed_s"]
    execution.tokens = TokenUsage(**totals["tokens"])
    execution.cost_usd = totals["cost_usd"]
    execution.cache_savings_usd = totals.get("cache_savings_usd", 0.0)
    execution.cost_complete = totals.get("cost_complete", True)
    execution.iterations = totals["iterations"]
    execution.tool_calls = totals["tool_calls"]
    execution.response_model = totals["response_model"]
    execution.last_output = copy.deepcopy(totals["last_output"])
    execution.models_used = list(totals.get("models_used", ()))
    restore_fallback(execution.fallback, totals.get("fallback"), len(execution.agent.fallback))
    execution.attempt = Attempt(
        attempt["number"],
        iteration=attempt["iteration"],
        start=used_since(execution.tokens, TokenUsage(**attempt["tokens"])),
        candidate=copy.deepcopy(attempt["candidate"]),
        schema_problems=tuple(attempt["schema_problems"]),
        output_forced=attempt["output_forced"],
    )
    execution.records = [_record(record) for record in data["records"]]
    execution.warnings = list(data["warnings"])
    execution.hooks.errors.extend(CallbackError(**error) for error in data["callback_errors"])
    execution.can_force = data["request"]["can_force"]
    execution.params = _params(execution, data)
    return [_reply(call) for call in data["batch"]]


def _params(execution: Execution, data: StateData) -> dict[str, Any]:
    request = data["request"]
    execution.system = request["system"]
    params = request_params(execution.agent, request["system"], execution.conversation.messages)
    if not execution.can_force:
        params["tool_choice"] = {"type": "auto"}
    if request["container"] is not None:
        params["container"] = copy.deepcopy(request["container"])
    return params


def _record(data: Any) -> AttemptRecord:
    return AttemptRecord(
        number=data["number"],
        iterations=data["iterations"],
        tokens=TokenUsage(**data["tokens"]),
        outcome=AgentErrorCode(data["outcome"]),
        candidate=copy.deepcopy(data["candidate"]),
        validation_errors=tuple(data["validation_errors"]),
        output_forced=data["output_forced"],
    )


def _reply(call: Call) -> Reply:
    block = CallBlock(call["id"], call["name"], copy.deepcopy(call["input"]))
    reply = Reply(block, call["kind"], hold=call["hold"])
    result = call["result"]
    if result is not None:
        reply.answer(copy.deepcopy(result["content"]), is_error=result["is_error"])
        reply.started, reply.duration_ms = True, result["duration_ms"]
    return reply

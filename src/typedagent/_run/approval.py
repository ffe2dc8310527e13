"""Calls that wait for a decision: which helper calls need approval or an external result, and the decisions applied.

A call that needs approval is decided at once by ``execute_agent(approve=...)`` when there is one, else it waits
(``reply.hold``) and the execution pauses; an external tool's call always waits. On resume, the same
``apply_decision`` settles each waiting call, so a paused run goes on exactly as if its decisions had been known.
"""

from __future__ import annotations

import copy
from functools import partial
from typing import TYPE_CHECKING, Any

from .._agent.calling import InvalidToolInput, call_maybe_async
from .._agent.tools import HelperTool, Tool
from .._shared.decisions import DEFAULT_DENIAL, Approve, Decision, Deny, ExternalResult
from .._shared.errors import safe_str
from .._shared.pausing import PendingCall, PendingKind
from .._shared.results import CallbackError
from .failures import describe
from .tool_call import call_tool, deliver_external
from .toolbox import may_wait

if TYPE_CHECKING:
    from .._agent.tools import Helper
    from .execution import Execution
    from .reply import Reply

__all__ = ["apply_decision", "external", "hold_calls", "pending_call"]


def external(execution: Execution, reply: Reply) -> bool:
    """Whether ``reply`` calls an external tool (whose result comes from outside; it never runs here)."""
    helper = execution.toolbox.helper(reply.block.name) if reply.kind == "helper" else None
    return isinstance(helper, HelperTool | Tool) and helper.external


async def hold_calls(execution: Execution, replies: list[Reply]) -> None:
    """Mark the helper calls that wait for a decision (``hold``); calls ``approve=`` decides are settled or edited.

    A call whose input does not fit its tool's signature never waits: it runs, and the model reads why it failed.
    """
    for reply in replies:
        helper = execution.toolbox.helper(reply.block.name) if reply.kind == "helper" else None
        if helper is None:
            continue
        if not may_wait(helper):
            continue
        if isinstance(helper, HelperTool | Tool):
            reply.hold = await _waits_for(execution, helper, reply)
        else:  # a toolset's tool (an MCP server's): its server checks the input when the call runs
            reply.hold = "approval"
        if reply.hold == "approval" and execution.approve is not None:
            await apply_decision(execution, reply, await _ask(execution, reply))


async def _waits_for(execution: Execution, helper: Helper[Any], reply: Reply) -> PendingKind | None:
    needs = helper.requires_approval
    try:
        args = helper.approval_args(dict(reply.block.input))
    except InvalidToolInput:
        return None
    if helper.external:
        return "external"
    if isinstance(needs, bool):
        return "approval"
    try:
        asked = bool(await call_maybe_async(needs, execution.context(), args))
    except Exception as exc:
        execution.warn(
            f"the requires_approval predicate of tool {reply.block.name!r} raised {type(exc).__name__}: "
            f"{describe(exc)}; the call waits for approval, as if it had said so."
        )
        return "approval"
    return "approval" if asked else None


def pending_call(reply: Reply) -> PendingCall:
    """The ``PendingCall`` a waiting reply stands for."""
    block = reply.block
    kind = reply.hold
    assert kind is not None, "only a waiting call is pending"
    return PendingCall(id=block.id, name=block.name, input=copy.deepcopy(dict(block.input)), kind=kind)


async def _ask(execution: Execution, reply: Reply) -> Decision:
    """``approve=``'s decision on one call; a callback that raises, or answers something else, denies it."""
    approve = execution.approve
    assert approve is not None
    name = getattr(approve, "__qualname__", type(approve).__qualname__)
    try:
        decision: object = await call_maybe_async(approve, pending_call(reply))
    except Exception as exc:
        _record(execution, name, type(exc).__name__, safe_str(exc))
        return Deny(f"The approval check failed ({describe(exc)}), so this call did not run.")
    if not isinstance(decision, Approve | Deny):
        message = f"returned {decision!r:.100}, not Approve() or Deny(reason)"
        _record(execution, name, "TypeError", message)
        return Deny("The approval check gave no decision, so this call did not run.")
    return decision


def _record(execution: Execution, name: str, error_type: str, message: str) -> None:
    execution.hooks.errors.append(CallbackError(callback=f"approve ({name})", error_type=error_type, message=message))


async def apply_decision(execution: Execution, reply: Reply, decision: Decision) -> None:
    """Settle a waiting call: approved (it runs with the helpers), denied, or answered with its external result."""
    reply.hold = None
    match decision:
        case Approve(input=edited):
            reply.edited = None if edited is None else copy.deepcopy(dict(edited))
        case Deny(reason=reason):
            reply.answer(f"Error: {reason if reason.strip() else DEFAULT_DENIAL}", is_error=True)
        case ExternalResult(error=str() as error):
            reply.answer(f"Error: {error}", is_error=True)
        case ExternalResult(value=value):
            limit = execution.agent.max_tool_result_chars
            await call_tool(reply, partial(deliver_external, reply, value, limit))

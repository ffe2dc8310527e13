"""Deciding a paused execution's calls in a test: approve them all or deny them all, external results by tool name."""

from __future__ import annotations

from collections.abc import Mapping

from .._shared.decisions import DEFAULT_DENIAL, Approve, Decision, Deny, ExternalResult
from .._shared.pausing import ExecutePaused, PausedState, PendingCall

__all__ = ["approve_all", "deny_all"]


def approve_all(
    paused: ExecutePaused | PausedState, *, results: Mapping[str, object] | None = None
) -> dict[str, Decision]:
    """``Approve()`` for every call that waits for approval, ready for ``execute_agent(..., decisions=...)``.

    Example:
        ``await execute_agent(agent, resume=paused.state, decisions=approve_all(paused), client=client)``

    Args:
        paused: The paused result (or its state).
        results: The result of each external tool, by tool name (``ExternalResult(value)`` for its calls).

    Raises:
        ValueError: an external call waits and ``results`` has nothing for its tool.
    """
    return _decide(paused, Approve(), results)


def deny_all(
    paused: ExecutePaused | PausedState,
    reason: str = DEFAULT_DENIAL,
    *,
    results: Mapping[str, object] | None = None,
) -> dict[str, Decision]:
    """``Deny(reason)`` for every call that waits for approval; external calls as for ``approve_all``.

    Raises:
        ValueError: an external call waits and ``results`` has nothing for its tool.
    """
    return _decide(paused, Deny(reason), results)


def _decide(
    paused: ExecutePaused | PausedState, decision: Approve | Deny, results: Mapping[str, object] | None
) -> dict[str, Decision]:
    pending: tuple[PendingCall, ...] = paused.pending
    decisions: dict[str, Decision] = {}
    for call in pending:
        if call.kind == "approval":
            decisions[call.id] = decision
        elif results is not None and call.name in results:
            decisions[call.id] = ExternalResult(results[call.name])
        else:
            raise ValueError(
                f"call {call.id!r} of external tool {call.name!r} waits for its result: pass "
                f"results={{{call.name!r}: ...}} (the value the tool returns)."
            )
    return decisions

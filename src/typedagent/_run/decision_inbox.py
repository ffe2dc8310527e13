"""A durable execution that pauses waits for its decisions here, then goes on: the engines' shared part.

``typedagent.temporal`` and ``typedagent.dbos`` run an agent pausable; when it pauses (a call waiting for
approval, an external tool's call), the workflow waits durably (a Temporal signal, a DBOS message) for decisions
sent as JSON (``decision_to_json``, by call id) and resumes the execution with them, in the same workflow, until
the execution ends. Decisions may come in several messages (one approver each, say): the run goes on once every
pending call has one. An entry that does not fit (an id the run does not wait on, a shape that is no decision, an
approval for an external tool's call) is dropped with a warning naming what to send instead; the run keeps waiting,
so a wrong message loses nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, cast

from .._shared.decisions import Decision, Deny, ExternalResult, decision_from_json, decision_to_json

if TYPE_CHECKING:
    from .._shared.pausing import ExecutePaused, PausableResult, PausedState, PendingKind
    from .._shared.results import ExecuteResult

__all__ = ["DECISIONS", "DecisionInbox", "decisions_payload", "until_done"]

DECISIONS: Final = "typedagent.decisions"
"""The Temporal signal and the DBOS topic that carry a paused durable execution's decisions."""


def decisions_payload(decisions: object) -> dict[str, dict[str, Any]]:
    """``decisions`` (call id to ``Approve()`` / ``Deny(reason)`` / ``ExternalResult(...)``) as a message's JSON.

    Raises:
        TypeError: ``decisions`` is not a dict of call ids to decisions.
    """
    if not isinstance(decisions, Mapping) or not decisions:
        raise TypeError(
            "decisions must be a non-empty dict of call id to Approve() / Deny(reason) / ExternalResult(...), "
            f"got {decisions!r:.100}."
        )
    payload: dict[str, dict[str, Any]] = {}
    for key, decision in cast("Mapping[object, object]", decisions).items():
        if not isinstance(key, str):
            raise TypeError(f"decisions are keyed by call id (a str, PendingCall.id), got {key!r:.100}.")
        if not isinstance(decision, Decision):
            raise TypeError(
                f"decisions[{key!r}] must be Approve(), Deny(reason) or ExternalResult(...), got {decision!r:.100}."
            )
        payload[key] = decision_to_json(decision)
    return payload


class DecisionInbox:
    """The decision messages a durable execution received, and the decisions taken from them so far."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        self.arrived: list[object] = []
        """Messages not yet read (the signal handler, or ``DBOS.recv``, puts them here)."""
        self.decided: dict[str, Decision] = {}
        self.warn = warn

    def deliver(self, message: object) -> None:
        """A message came in (read at the next ``take``)."""
        self.arrived.append(message)

    def take(self, paused: ExecutePaused) -> dict[str, Decision] | None:
        """Read the messages: every pending call's decision once all have one (None while some still wait)."""
        pending = {call.id: call for call in paused.pending}
        for message in self.arrived:
            self._read(message, pending)
        self.arrived.clear()
        if any(key not in self.decided for key in pending):
            return None
        decided = {key: self.decided.pop(key) for key in pending}
        return decided

    def _read(self, message: object, pending: Mapping[str, Any]) -> None:
        waiting = ", ".join(f"{key!r} ({call.name}, {call.kind})" for key, call in pending.items())
        if not isinstance(message, Mapping):
            self.warn(f"typedagent: a decisions message that is not an object was dropped: {message!r:.200}")
            return
        for key, data in cast("Mapping[object, object]", message).items():
            if not isinstance(key, str) or key not in pending:
                self.warn(
                    f"typedagent: a decision for {key!r}, which the paused execution does not wait on, was dropped; "
                    f"it waits on {waiting}."
                )
                continue
            call = pending[key]
            try:
                decision = decision_from_json(data, f"the decision for {key!r}")
            except ValueError as exc:
                self.warn(f"typedagent: {exc} It was dropped; the execution waits for another.")
                continue
            if (call.kind == "external") != isinstance(decision, ExternalResult):
                wanted = "ExternalResult(...)" if call.kind == "external" else "Approve() or Deny(reason)"
                self.warn(
                    f"typedagent: call {key!r} ({call.name}) waits for {call.kind}: decide it with {wanted}; the "
                    f"decision sent ({type(decision).__name__}) was dropped."
                )
                continue
            self.decided[key] = decision


CANCELLED: Final = "The execution was cancelled while this call waited for a decision."


async def until_done(
    result: PausableResult[Any],
    inbox: DecisionInbox,
    wait: Callable[[], Awaitable[bool]],
    resume: Callable[[PausedState, dict[str, Decision]], Awaitable[PausableResult[Any]]],
) -> ExecuteResult[Any]:
    """Resume ``result`` while it is paused, each time with the decisions ``wait`` brought into ``inbox``.

    ``wait`` returns False when the execution was cancelled while it waited: every pending call is then denied
    (an external one gets an error) and the execution resumes with its abort event set, to end cancelled.
    """
    while result.status == "paused":
        decisions = inbox.take(result)
        while decisions is None:
            if not await wait():
                decisions = {call.id: _cancelled(call.kind) for call in result.pending}
                break
            decisions = inbox.take(result)
        result = await resume(result.state, decisions)
    return result


def _cancelled(kind: PendingKind) -> Decision:
    return ExternalResult(error=CANCELLED) if kind == "external" else Deny(CANCELLED)

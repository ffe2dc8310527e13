"""``send_decisions``: the decisions a paused durable run waits for, sent to its workflow as a signal."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from temporalio.client import WorkflowHandle

from .._run.decision_inbox import DECISIONS, decisions_payload
from .._shared.decisions import Decision

__all__ = ["send_decisions"]


async def send_decisions(handle: WorkflowHandle[Any, Any], decisions: Mapping[str, Decision]) -> None:
    """Send ``decisions`` (call id to ``Approve()``, ``Deny(reason)`` or ``ExternalResult(...)``) to a paused run.

    ``handle`` is the workflow's (``client.get_workflow_handle(workflow_id)``, or what ``start_workflow``
    returned). The signal (``TemporalAgent.signal_name``) is kept in the workflow's history: it reaches the run
    even when no worker is up, and the run goes on once every pending call has a decision, which may come in
    several signals. A decision for a call the run does not wait on, or of the wrong kind, is dropped with a
    warning in the worker's log, and the run keeps waiting.

    Raises:
        TypeError: ``handle`` is not a ``WorkflowHandle``, or ``decisions`` is not a non-empty dict of call ids
            to decisions (checked before anything is sent).
    """
    if not isinstance(handle, WorkflowHandle):
        raise TypeError(
            "send_decisions takes the workflow's handle (client.get_workflow_handle(workflow_id)), "
            f"got {type(handle).__name__}."
        )
    await handle.signal(DECISIONS, decisions_payload(decisions))

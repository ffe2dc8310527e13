"""Durable executions on Temporal: a crash mid-run loses nothing and repeats no paid call.

``TemporalAgent(agent, name=...)`` wraps a defined agent; ``await durable.run(prompt, deps=...)`` inside a
``@workflow.defn`` runs it with each model call and each helper call as an activity, and the loop in the
workflow. ``durable.activities`` goes to ``Worker(activities=...)``. ``AgentWorkflow`` runs a registered agent
on a prompt. A run that pauses (a call waiting for approval, an external tool) waits durably for the decisions
``send_decisions(handle, decisions)`` sends. Install with the ``temporal`` extra
(``pip install "typedagent[temporal]"``); see docs/durable.md.
"""

from ._agent import TemporalAgent
from ._signals import send_decisions
from ._workflow import AgentWorkflow

__all__ = ["AgentWorkflow", "TemporalAgent", "send_decisions"]

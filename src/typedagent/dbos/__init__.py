"""Durable executions on DBOS: a crash mid-run loses nothing and repeats no paid call.

``DBOSAgent(agent)`` wraps a defined agent; ``await durable.run(prompt)`` is a DBOS workflow whose model calls and
helper calls are steps, recorded in DBOS's database (SQLite by default, Postgres by configuration). After the
process dies, ``DBOS.launch()`` in a new one recovers the workflow and finishes it. A run that pauses (a call
waiting for approval, an external tool) waits durably (``DBOS.recv``) for the decisions
``send_decisions(workflow_id, decisions)`` sends. Install with the ``dbos`` extra (``pip install "typedagent[dbos]"``);
see docs/durable.md.
"""

from ._agent import DBOSAgent, send_decisions

__all__ = ["DBOSAgent", "send_decisions"]

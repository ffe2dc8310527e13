"""The run loop: ``execute_agent()`` and everything one execution does, top to bottom.

Attempts, iterations, the stop-reason table, the tool batch and the one tool call, the execution's toolbox (its
helpers and its connected toolsets' tools), validation feedback, the conversation, the request built from a
definition, failures, limits checked, callbacks dispatched (``Hooks``), history processors applied before each
model call, sub-runs (another agent run inside an execution, its usage rolled up), and the blocking wrapper. What
watches an execution from outside plugs in through two seams defined here: observers that wrap the execution, each
model call and each tool call (``observe``: tracing and logging), and a tap set in the execution's context that
sees its events (``tap``: ``stream_agent``).

May import: ``_shared``, ``_agent`` and ``_api``. Never streaming, many executions, observability, testing,
evals, Ray or the command line.
"""

"""Streaming: ``stream_agent()`` and ``stream_agent_sync()``, an execution's events as they happen.

The typed stream events, the tap that turns a streamed response's server-sent events and the loop's hook events
into them (set through the loop's ``tap`` seam), and partial outputs read from partial JSON.

May import: ``_shared``, ``_agent``, ``_api`` and ``_run``. Not many executions or observability (the three
wings above the loop are independent of each other).
"""

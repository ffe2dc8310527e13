"""Observability: OpenTelemetry spans and the ``typedagent`` logger's lines for every execution.

``instrument()``, the spans (``invoke_agent``, ``chat``, ``execute_tool``) and their attributes by the GenAI
semantic conventions, with credentials cut out, and the log lines. It watches executions as a ``RunObserver``
registered with the loop's ``observe`` seam by ``typedagent/__init__.py``: the loop never imports it.

May import: ``_shared``, ``_agent``, ``_api`` and ``_run``. Not streaming or many executions (the three wings
above the loop are independent of each other).
"""

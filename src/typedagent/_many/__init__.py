"""Many executions: ``execute_many()``, bounded, paced by the API's rate limits, resumable from a journal.

The inputs and their keys, the scheduler that keeps executions in flight and yields results as they finish, and
the journal that makes a run resumable.

May import: ``_shared``, ``_agent``, ``_api`` and ``_run``. Not streaming or observability (the three wings
above the loop are independent of each other).
"""

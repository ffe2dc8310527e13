"""The shared vocabulary: the words every other part speaks.

Errors and their contexts, results and their metadata, token usage, the callback events, the client protocol,
execution limits and the guard that races work against the abort event and the deadline, and small utilities
(deep read-only copies, finite-number checks, daemon worker threads for sync user code, subscriptable generic
dataclasses, the version).

May import: nothing of typedagent outside this wing (the Python standard library, ``typing_extensions``, and the
``anthropic`` SDK's types under ``TYPE_CHECKING`` only). Everything else may import it.
"""

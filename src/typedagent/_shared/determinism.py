"""The determinism seam: every clock read, sleep, id, random draw and thread hop of an execution goes through here.

An execution run by a durable-execution engine is replayed: Temporal runs the loop again from the start and
feeds it the recorded results of its model and tool calls, and the replay must take the same path. So the loop
never reads ``time``, ``asyncio.sleep``, ``uuid`` or ``random`` directly, nor hands sync user code to a thread
(a workflow has no threads): it asks the ``Runtime`` of its context. The default is the machine's; an
integration sets its own for the executions it runs (``typedagent.temporal`` points it at workflow time).
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

__all__ = ["SYSTEM", "Runtime", "runtime", "use_runtime"]


class Runtime:
    """Where an execution reads the time, sleeps, makes ids and draws random numbers: here, the machine's own."""

    inline_sync_calls: bool = False
    """Run sync user code (validators, handlers) on the loop's thread rather than a worker thread."""

    def clock(self) -> float:
        """Seconds on a monotonic clock (only differences mean anything)."""
        return time.perf_counter()

    def wall_clock(self) -> float:
        """Seconds since the Unix epoch (what a paused state records: it outlives the process)."""
        return time.time()

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds``."""
        await asyncio.sleep(seconds)

    def new_id(self) -> str:
        """A new unique id (32 hex digits)."""
        return uuid.uuid4().hex

    def random(self) -> float:
        """A random float in [0, 1)."""
        return random.random()


SYSTEM: Final = Runtime()
"""The machine's clock, sleep, ids and random numbers, and worker threads for sync user code."""

_RUNTIME: ContextVar[Runtime] = ContextVar("typedagent_runtime", default=SYSTEM)


def runtime() -> Runtime:
    """The runtime of the execution running in this context."""
    return _RUNTIME.get()


@contextmanager
def use_runtime(chosen: Runtime) -> Generator[None]:
    """Run what starts in this block (in this context) with ``chosen``."""
    token = _RUNTIME.set(chosen)
    try:
        yield
    finally:
        _RUNTIME.reset(token)

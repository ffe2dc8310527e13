"""The determinism seam: every clock read, sleep, id, random draw and thread hop of an execution goes through here.

An execution run by a durable-execution engine is replayed: Temporal runs the loop again from the start and
feeds it the recorded results of its model and tool calls, and the replay must take the same path. So the loop
never reads ``time``, ``asyncio.sleep``, ``uuid`` or ``random`` directly, nor hands sync user code to a thread
(a workflow has no threads): it asks the ``Runtime`` of its context. The default is the machine's; an
integration sets its own for the executions it runs (``typedagent.temporal`` points it at workflow time).
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

__all__ = ["SYSTEM", "Runtime", "runtime", "use_runtime"]

_UUID4_KEEP: Final = ~((0xC000 << 48) | (0xF000 << 64))
"""The bits of a random 128-bit number a version 4 UUID keeps: all but its variant and version fields."""
_UUID4_SET: Final = (0x8000 << 48) | (4 << 76)
"""The variant (RFC 4122) and version (4) bits of a version 4 UUID."""


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
        """A new unique id: a random UUID (version 4) as 32 hex digits, as ``uuid.uuid4().hex`` (without its object)."""
        value = int.from_bytes(os.urandom(16), "big") & _UUID4_KEEP | _UUID4_SET
        return f"{value:032x}"

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

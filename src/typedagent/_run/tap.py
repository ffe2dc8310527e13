"""The seam ``stream_agent`` plugs into: a tap, set in the execution's context, that sees its events as they happen.

The loop imports no streaming code: ``stream_agent`` sets an ``ExecutionTap`` in the context of the execution it
runs (``EVENT_TAP``); the execution claims it and hands it its hook events and its streamed responses' events.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

from .._api.stream_call import StreamObserver
from .hooks import HookObserver

if TYPE_CHECKING:
    from .._agent.definition import AgentDefinition

__all__ = ["EVENT_TAP", "ExecutionTap", "claim_tap"]


class ExecutionTap(HookObserver, StreamObserver, Protocol):
    """Sees one execution's hook events and the events of its streamed responses (``stream_agent``'s tap)."""

    def claim(self, position: Callable[[], tuple[int, int]]) -> ExecutionTap | None:
        """This tap for the first execution that asks (``position`` tells its attempt and iteration); None after."""
        ...

    def sub_run(self, agent: AgentDefinition[Any, Any], position: Callable[[], tuple[int, int]]) -> ExecutionTap | None:
        """A tap for a sub-run of ``agent`` this tap's execution started; None when sub-runs are not watched."""
        ...


EVENT_TAP: ContextVar[ExecutionTap | None] = ContextVar("typedagent_event_tap", default=None)
"""The tap ``stream_agent`` set for the execution it runs in this context."""


def claim_tap(position: Callable[[], tuple[int, int]]) -> ExecutionTap | None:
    """The tap of the ``stream_agent`` call this execution serves, if any (only its first execution gets it)."""
    tap = EVENT_TAP.get()
    return None if tap is None else tap.claim(position)

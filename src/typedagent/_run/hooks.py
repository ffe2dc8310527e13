"""``Hooks``: an execution's events dispatched to its callbacks and its observer, each callback's errors kept."""

from __future__ import annotations

import copy
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

from .._shared.errors import safe_str
from .._shared.events import (
    AttemptStart,
    Callback,
    ExecuteCallbacks,
    ExecutionState,
    FallbackSwitch,
    ModelResponse,
    ToolCall,
    ToolResult,
    ValidationFailure,
)
from .._shared.pausing import ExecutePaused, PausedState
from .._shared.results import CallbackError

__all__ = ["AnswerPreview", "HookObserver", "Hooks", "Snapshot"]


@dataclass(frozen=True, slots=True)
class AnswerPreview:
    """Reflection in native and prompted modes: the preview of a JSON answer, going back to the model.

    Only the observer sees it (``stream_agent``'s tap makes it a ``ReflectionPreview``): no callback is named after
    it, as the tool hooks report the previews of output calls.
    """

    response_id: str
    """The id of the response whose text was the answer."""
    preview: str
    """What the model reads: the reflection handler's text, or why the answer was not kept."""


logger = logging.getLogger("typedagent")

Snapshot: TypeAlias = Callable[[], Callable[[], ExecutionState] | None]
"""How hooks get the state a callback receives: a weak method of the execution (None once it is gone)."""


class HookObserver(Protocol):
    """Sees every hook event of an execution before its callbacks (``stream_agent``'s tap); it must not raise."""

    def hook_event(self, event: object) -> None:
        """Called with the event itself, not a copy: copy what is kept."""
        ...


class Hooks:
    """Dispatches an execution's events to its ``ExecuteCallbacks``, one typed method per hook.

    Each method builds the ``ExecutionState`` snapshot only when a callback is set, calls it, and records
    anything it raises in ``errors`` instead of raising, with a WARNING on the ``typedagent`` logger. A
    callback gets a deep copy of the event (a response, a tool input, a candidate): nothing it does to the
    event can change the run.
    """

    __slots__ = ("agent", "callbacks", "errors", "listening", "observer", "parent", "snapshot")

    def __init__(
        self,
        callbacks: ExecuteCallbacks | None,
        snapshot: Snapshot,
        observer: HookObserver | None = None,
        *,
        agent: str = "",
        parent: Hooks | None = None,
    ) -> None:
        self.callbacks = callbacks
        self.snapshot = snapshot
        self.observer = observer
        self.agent = agent
        """The agent's name, for the log line of a callback that raises."""
        self.parent = parent
        """The hooks of the execution this one is a sub-run of: its tool events go to their callbacks too."""
        self.errors: list[CallbackError] = []
        self.listening = callbacks is not None or observer is not None or parent is not None
        """Whether any event goes anywhere: without callbacks, an observer or a parent, events need not be built."""

    async def attempt_start(self, event: AttemptStart) -> None:
        """``on_attempt_start``."""
        if self.observer is not None:
            self.observer.hook_event(event)
        if self.callbacks is not None:
            await self._call("on_attempt_start", self.callbacks.on_attempt_start, event)

    async def model_response(self, event: ModelResponse) -> None:
        """``on_model_response``."""
        if self.observer is not None:
            self.observer.hook_event(event)
        if self.callbacks is not None:
            await self._call("on_model_response", self.callbacks.on_model_response, event)

    async def tool_call(self, event: ToolCall) -> None:
        """``on_tool_call``, here and in every execution this one is a sub-run of."""
        if self.observer is not None:
            self.observer.hook_event(event)
        if self.callbacks is not None:
            await self._call("on_tool_call", self.callbacks.on_tool_call, event)
        if self.parent is not None:
            await self.parent.relay("on_tool_call", event, self.snapshot)

    async def tool_result(self, event: ToolResult) -> None:
        """``on_tool_result``, here and in every execution this one is a sub-run of."""
        if self.observer is not None:
            self.observer.hook_event(event)
        if self.callbacks is not None:
            await self._call("on_tool_result", self.callbacks.on_tool_result, event)
        if self.parent is not None:
            await self.parent.relay("on_tool_result", event, self.snapshot)

    async def relay(self, hook: str, event: ToolCall | ToolResult, snapshot: Snapshot) -> None:
        """A sub-run's tool event, for this execution's callback ``hook``, with the sub-run's state (and upwards).

        The callback's errors are this execution's: its callbacks raised.
        """
        if self.callbacks is not None:
            await self._call(hook, getattr(self.callbacks, hook), event, snapshot)
        if self.parent is not None:
            await self.parent.relay(hook, event, snapshot)

    async def validation_failure(self, event: ValidationFailure) -> None:
        """``on_validation_failure``."""
        if self.observer is not None:
            self.observer.hook_event(event)
        if self.callbacks is not None:
            await self._call("on_validation_failure", self.callbacks.on_validation_failure, event)

    async def pause(self, event: ExecutePaused) -> None:
        """``on_pause``."""
        if self.callbacks is not None:
            await self._call("on_pause", self.callbacks.on_pause, event)

    async def resume(self, event: PausedState) -> None:
        """``on_resume``."""
        if self.callbacks is not None:
            await self._call("on_resume", self.callbacks.on_resume, event)

    def answer_preview(self, event: AnswerPreview) -> None:
        """A JSON answer's preview (observer only)."""
        if self.observer is not None:
            self.observer.hook_event(event)

    async def fallback(self, event: FallbackSwitch) -> None:
        """``on_fallback``."""
        if self.observer is not None:
            self.observer.hook_event(event)
        if self.callbacks is not None:
            await self._call("on_fallback", self.callbacks.on_fallback, event)

    async def _call(
        self, hook: str, callback: Callback[Any] | None, event: object, snapshot: Snapshot | None = None
    ) -> None:
        if callback is None:
            return
        try:
            state = (snapshot or self.snapshot)()
            assert state is not None, "the execution ended before its hook"
            outcome = callback(state(), copy.deepcopy(event))
            if inspect.isawaitable(outcome):
                await outcome
        except Exception as exc:
            name = getattr(callback, "__qualname__", type(callback).__qualname__)
            error = CallbackError(callback=f"{hook} ({name})", error_type=type(exc).__name__, message=safe_str(exc))
            self.errors.append(error)
            logger.warning(
                "agent %r: callback %s raised %s: %s; the execution goes on (recorded in metadata.callback_errors)",
                self.agent,
                error.callback,
                error.error_type,
                error.message,
            )

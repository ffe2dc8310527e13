"""The events ``stream_agent`` yields: frozen values with a common base and a ``kind`` that narrows the union."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias

from typing_extensions import TypeVar

from .._shared.events import ToolKind
from .._shared.generics import subscriptable
from .._shared.pausing import ExecutePaused, PausedState, PendingCall
from .._shared.results import AttemptOutcome, ExecuteResult

__all__ = [
    "AgentStreamEvent",
    "AttemptStarted",
    "FallbackSwitched",
    "Finished",
    "Partial",
    "PartialOutput",
    "Paused",
    "ReflectionPreview",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolInputDelta",
    "ValidationFailed",
]

OutputT = TypeVar("OutputT", default=Any)
ValueT = TypeVar("ValueT")


@dataclass(frozen=True, kw_only=True, slots=True)
class StreamEvent:
    """What every streamed event has: where in the execution it happened."""

    attempt: int
    """The attempt it belongs to (1-based)."""
    iteration: int
    """The model call of the attempt it belongs to (1-based; 0 before the attempt's first call)."""
    sub_agent: str | None = None
    """The name of the sub-agent whose event this is (``stream_agent(..., include_sub_agents=True)``), its attempt
    and iteration then being the sub-run's own; None for the streamed agent's own events."""


@dataclass(frozen=True, kw_only=True, slots=True)
class AttemptStarted(StreamEvent):
    """An attempt is starting (the first, or the next after a rejected output)."""

    max_attempts: int
    """The configured ``max_attempts``."""
    kind: Literal["attempt_started"] = field(default="attempt_started", init=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class TextDelta(StreamEvent):
    """The model wrote more text (outside any tool call)."""

    text: str
    """The new text, to append to what came before in the same response."""
    kind: Literal["text_delta"] = field(default="text_delta", init=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class ThinkingDelta(StreamEvent):
    """The model's extended thinking went on (when thinking is enabled)."""

    thinking: str
    """The new thinking text, to append to what came before in the same block."""
    kind: Literal["thinking_delta"] = field(default="thinking_delta", init=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolInputDelta(StreamEvent):
    """The model is writing a tool call's input: the next piece of its JSON."""

    id: str
    """The ``tool_use`` block id."""
    name: str
    """The tool's name."""
    partial_json: str
    """The new piece of JSON, to append to the pieces before it."""
    kind: Literal["tool_input_delta"] = field(default="tool_input_delta", init=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallStarted(StreamEvent):
    """A tool call is being handled: its input has streamed in whole (a copy: changing it changes nothing)."""

    id: str
    """The ``tool_use`` block id."""
    name: str
    """The tool's name as the model wrote it."""
    tool_kind: ToolKind
    """Helper, output, submit, unknown, or carried out by the API (server, mcp)."""
    input: dict[str, Any]
    """The input as the model streamed it, unvalidated."""
    server: str | None = None
    """The MCP server whose tool it is (a ``typedagent.mcp`` toolset's name, or the API's MCP connector's
    ``server_name``); else None."""
    kind: Literal["tool_call_started"] = field(default="tool_call_started", init=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallFinished(StreamEvent):
    """A tool call's result is going back to the model."""

    id: str
    """The ``tool_use`` id it answers."""
    name: str
    """The tool's name."""
    result: str
    """Exactly what the model reads (for content blocks, their text)."""
    is_error: bool
    """Whether the result is flagged ``is_error``."""
    duration_ms: float
    """Time spent handling the call (0 for calls the API carried out itself)."""
    server: str | None = None
    """The MCP server whose tool it is, as on the ``ToolCallStarted`` it answers; else None."""
    kind: Literal["tool_call_finished"] = field(default="tool_call_finished", init=False)


@subscriptable
@dataclass(frozen=True, kw_only=True, slots=True)
class Partial(Generic[OutputT]):
    """What has arrived so far of an output of type ``OutputT``, while the model writes it: read it with ``get``.

    It is not an ``OutputT``: fields arrive one after the other, so any of them may be missing yet, and your
    class's methods and properties are not there. ``get`` reads a field typed as your class types it, or None
    while it has not arrived: ``partial.get(lambda t: t.summary)`` is ``str | None``.
    """

    value: Any
    """What arrived: an object with your output type's fields, every one optional (None until it arrives, a
    string field holding the text written so far, nested models partial too); a dict of the keys present for a
    ``TypedDict`` output; the value itself for an output that is not an object (once it validates)."""

    def get(self, field: Callable[[OutputT], ValueT], /) -> ValueT | None:
        """``field`` read from what has arrived; None while something it reads has not arrived (or is not valid).

        ``field`` is called with ``value``; a lookup that fails on what is missing (an attribute of None, an
        index or a key not there yet, a method of your class, arithmetic on None) gives None. Nested models in
        what it returns are partial too: read their fields in the same function (``lambda t: t.steps[0].title``).
        """
        try:
            return field(self.value)
        except (AttributeError, LookupError, TypeError):
            return None

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            # Code written when ``partial`` was typed as the output class reads fields as attributes: that still
            # works at run time (untyped). Private and special names are never forwarded (copy, pickle).
            if name.startswith("_") or name == "value":
                raise AttributeError(name)
            return getattr(self.value, name)


@subscriptable
@dataclass(frozen=True, kw_only=True, slots=True)
class PartialOutput(StreamEvent, Generic[OutputT]):
    """The output so far, while the model writes it: fields arrive one after the other.

    In tool mode it is the output call's input; in ``"native"`` and ``"prompted"`` modes, the JSON of the response's
    text (read once its object starts, past any prose or Markdown fence). Text written beside a tool call is no
    answer, so a response that goes on to call a tool hands over nothing, whatever partial outputs it showed.

    ``partial`` holds every field that has arrived and has the right type (read them with ``partial.get``); field
    constraints and validators are not applied to it: only the final output is validated.
    """

    id: str
    """The output call's ``tool_use`` id; for a JSON answer (native, prompted), the response's id."""
    partial: Partial[OutputT] | None
    """The output so far (None when nothing of it can be read yet, or an output that is not an object does not
    validate yet)."""
    raw: dict[str, Any]
    """The input (or the answer's JSON) parsed so far, unvalidated; the last string may be cut short."""
    kind: Literal["partial_output"] = field(default="partial_output", init=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class ValidationFailed(StreamEvent):
    """The attempt ended without a valid output; its problems go back to the model, and the next attempt starts."""

    outcome: AttemptOutcome
    """Why the attempt failed."""
    problems: tuple[str, ...]
    """Every problem, as sent to the model."""
    candidate: dict[str, Any] | None
    """The rejected candidate (the output tool's input), if any."""
    kind: Literal["validation_failed"] = field(default="validation_failed", init=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class ReflectionPreview(StreamEvent):
    """Reflection mode: the preview of an output (call or JSON answer) that goes back to the model before it submits."""

    id: str
    """The output call's ``tool_use`` id; for a JSON answer (native, prompted), the response's id."""
    preview: str
    """What the model reads (the reflection handler's text, or why the call did not parse)."""
    kind: Literal["reflection_preview"] = field(default="reflection_preview", init=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class FallbackSwitched(StreamEvent):
    """The model calls move to another model of the agent's fallback chain (``define_agent(fallback=...)``).

    What streamed since the last ``ToolCallFinished`` (or the start) came from a call that failed or was refused,
    and is not part of the conversation: the same request goes to ``to_model`` now.
    """

    from_model: str
    """The model left (it failed or refused, or the stay on it ended)."""
    to_model: str
    """The model the call goes to now."""
    reason: str
    """Why (see ``FallbackSwitch.reason``): ``overloaded_error``, ``refusal``, ``circuit_open``, …"""
    server_side: bool
    """The API's own fallback served a refused request within the same call."""
    kind: Literal["fallback_switched"] = field(default="fallback_switched", init=False)


@subscriptable
@dataclass(frozen=True, kw_only=True, slots=True)
class Finished(StreamEvent, Generic[OutputT]):
    """The execution is over: the last event."""

    result: ExecuteResult[OutputT]
    """The execution's result, as ``execute_agent`` returns it."""
    kind: Literal["finished"] = field(default="finished", init=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class Paused(StreamEvent):
    """The execution paused at tool calls waiting for a decision: the last event of a ``pausable=True`` stream.

    Resume it, streaming on, with ``stream_agent(agent, resume=event.state, decisions={...})``.
    """

    pending: tuple[PendingCall, ...]
    """The calls waiting, in the order the model made them."""
    state: PausedState
    """The execution's state, to store and resume from."""
    result: ExecutePaused
    """The stream's result (``run.result``), as ``execute_agent`` returns it."""
    kind: Literal["paused"] = field(default="paused", init=False)


AgentStreamEvent: TypeAlias = (
    AttemptStarted
    | TextDelta
    | ThinkingDelta
    | ToolInputDelta
    | ToolCallStarted
    | ToolCallFinished
    | PartialOutput[OutputT]
    | ValidationFailed
    | ReflectionPreview
    | FallbackSwitched
    | Finished[OutputT]
)
"""Any event of ``stream_agent``: ``match`` on the class, or test ``event.kind``, to narrow it. A ``pausable=True``
stream (or a resumed one) may end with ``Paused`` instead of ``Finished``: its events are ``AgentStreamEvent | Paused``.
"""

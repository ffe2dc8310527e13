"""The tap a streamed execution carries: it turns the response's events and the loop's hooks into stream events."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic

from typing_extensions import TypeVar

from .._run.hooks import AnswerPreview
from .._shared.events import AttemptStart, FallbackSwitch, ToolCall, ToolResult, ValidationFailure
from .events import (
    AgentStreamEvent,
    AttemptStarted,
    FallbackSwitched,
    PartialOutput,
    ReflectionPreview,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolInputDelta,
    ValidationFailed,
)
from .partial import PartialReader

if TYPE_CHECKING:
    from anthropic.types import Message, RawMessageStreamEvent

    from .._agent.definition import AgentDefinition

__all__ = ["StreamTap"]

OutputT = TypeVar("OutputT")

_TOOL_CALLS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
_BEFORE_ANSWER = frozenset({"text", "thinking", "redacted_thinking"})
"""Blocks that keep the text before them part of the answer (any other block starts it afresh)."""


class StreamTap(Generic[OutputT]):
    """Sees one execution's hooks and the events of its streamed responses, and emits ``AgentStreamEvent``s.

    Everything it emits is built fresh or copied: nothing a consumer does to an event changes the run.
    """

    def __init__(
        self,
        agent: AgentDefinition[OutputT, Any],
        emit: Callable[[AgentStreamEvent[OutputT]], None],
        *,
        include_sub_agents: bool = False,
        sub_agent: str | None = None,
    ) -> None:
        self.put = emit
        """Where events go (the stream's backlog)."""
        self.emit: Callable[[AgentStreamEvent[OutputT]], None] = emit
        if sub_agent is not None:
            self.emit = lambda event: emit(dataclasses.replace(event, sub_agent=sub_agent))
        self.include_sub_agents = include_sub_agents
        self.output_name = agent.output.name
        self.reflection = agent.reflection_enabled
        # A sub-agent's output is not of the stream's type: it never streams as a partial (a tool call's input
        # streams as ToolInputDelta; an answer in text as TextDelta only).
        self.answers_in_text = agent.output.mode != "tool"
        """Native and prompted modes: the output is the text that ends the turn, read from the text deltas."""
        self.reader = PartialReader(agent.output) if sub_agent is None else None
        self.position: Callable[[], tuple[int, int]] | None = None
        """The execution's attempt and iteration now; set by the execution that claims the tap."""
        self._calls: dict[int, tuple[str, str]] = {}
        """The tool calls of the response streaming now, by block index: id and name."""
        self._inputs: dict[int, str] = {}
        """The output call's input JSON so far, by block index."""
        self._text = ""
        """The response's text since its last block of another kind: the answer so far (native, prompted)."""

    def claim(self, position: Callable[[], tuple[int, int]]) -> StreamTap[OutputT] | None:
        """This tap, for the first execution that asks (``position`` tells where it is); None after (a nested one)."""
        if self.position is not None:
            return None
        self.position = position
        return self

    def sub_run(
        self, agent: AgentDefinition[Any, Any], position: Callable[[], tuple[int, int]]
    ) -> StreamTap[Any] | None:
        """A tap for a sub-run of ``agent``, whose events are tagged with its name; None unless sub-runs are shown."""
        if not self.include_sub_agents:
            return None
        tap = StreamTap[Any](agent, self.put, include_sub_agents=True, sub_agent=agent.name)
        tap.position = position
        return tap

    @property
    def attempt(self) -> int:
        """The execution's current attempt (0 before the first)."""
        return 0 if self.position is None else self.position()[0]

    @property
    def iteration(self) -> int:
        """The current attempt's model calls so far."""
        return 0 if self.position is None else self.position()[1]

    def stream_event(self, event: RawMessageStreamEvent, snapshot: Message) -> None:
        """One event of a streamed response (``StreamObserver``)."""
        if event.type == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta":
                self.emit(TextDelta(attempt=self.attempt, iteration=self.iteration, text=delta.text))
                if self.answers_in_text and self.reader is not None:
                    self._answer_text(self.reader, delta.text, snapshot.id)
            elif delta.type == "thinking_delta":
                self.emit(ThinkingDelta(attempt=self.attempt, iteration=self.iteration, thinking=delta.thinking))
            elif delta.type == "input_json_delta" and delta.partial_json and event.index in self._calls:
                self._tool_input(event.index, delta.partial_json)
        elif event.type == "content_block_start":
            block = event.content_block
            if block.type in _TOOL_CALLS:
                self._calls[event.index] = (getattr(block, "id", ""), getattr(block, "name", ""))
            if block.type not in _BEFORE_ANSWER:
                self._text = ""
        elif event.type == "message_start":
            self._calls.clear()
            self._inputs.clear()
            self._text = ""

    def _tool_input(self, index: int, piece: str) -> None:
        use_id, name = self._calls[index]
        self.emit(
            ToolInputDelta(attempt=self.attempt, iteration=self.iteration, id=use_id, name=name, partial_json=piece)
        )
        if name != self.output_name or self.reader is None:
            return
        source = self._inputs.get(index, "") + piece
        self._inputs[index] = source
        raw, partial = self.reader.read(source)
        self.emit(PartialOutput(attempt=self.attempt, iteration=self.iteration, id=use_id, partial=partial, raw=raw))

    def _answer_text(self, reader: PartialReader[OutputT], piece: str, response_id: str) -> None:
        self._text += piece
        read = reader.read_text(self._text)
        if read is not None:
            raw, partial = read
            self.emit(
                PartialOutput(attempt=self.attempt, iteration=self.iteration, id=response_id, partial=partial, raw=raw)
            )

    def hook_event(self, event: object) -> None:
        """One of the loop's hook events (``HookObserver``)."""
        if isinstance(event, AnswerPreview):
            self.emit(
                ReflectionPreview(
                    attempt=self.attempt, iteration=self.iteration, id=event.response_id, preview=event.preview
                )
            )
            return
        if isinstance(event, AttemptStart):
            self.emit(AttemptStarted(attempt=event.attempt, iteration=0, max_attempts=event.max_attempts))
            return
        if isinstance(event, FallbackSwitch):
            self.emit(_switched(event, self.attempt, self.iteration))
            return
        if isinstance(event, ToolCall):
            tool_input = copy.deepcopy(event.input)
            self.emit(
                ToolCallStarted(
                    attempt=self.attempt,
                    iteration=self.iteration,
                    id=event.id,
                    name=event.name,
                    tool_kind=event.kind,
                    input=tool_input,
                    server=event.server,
                )
            )
        elif isinstance(event, ToolResult):
            if self.reflection and event.name == self.output_name and not self.answers_in_text:
                self.emit(
                    ReflectionPreview(
                        attempt=self.attempt, iteration=self.iteration, id=event.id, preview=event.content
                    )
                )
            self.emit(
                ToolCallFinished(
                    attempt=self.attempt,
                    iteration=self.iteration,
                    id=event.id,
                    name=event.name,
                    result=event.content,
                    is_error=event.is_error,
                    duration_ms=event.duration_ms,
                    server=event.server,
                )
            )
        elif isinstance(event, ValidationFailure):
            candidate = copy.deepcopy(event.candidate)
            self.emit(
                ValidationFailed(
                    attempt=self.attempt,
                    iteration=self.iteration,
                    outcome=event.outcome,
                    problems=event.errors,
                    candidate=candidate,
                )
            )


def _switched(event: FallbackSwitch, attempt: int, iteration: int) -> FallbackSwitched:
    return FallbackSwitched(
        attempt=attempt,
        iteration=iteration,
        from_model=event.from_model,
        to_model=event.to_model,
        reason=event.reason,
        server_side=event.server_side,
    )

"""What ``typedagent run`` shows while the model writes: the output as it streams, or the streamed events as JSON."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ._progress import Progress, to_json

if TYPE_CHECKING:
    from .._streaming.events import AgentStreamEvent, Paused

__all__ = ["LiveView"]

_STATUS_WIDTH = 110


class LiveView:
    """Takes the streamed events of one execution (the loop's other events reach ``Progress`` as callbacks).

    With ``--json-events``, each text, thinking and tool-input delta and each partial output is one JSON
    object per line, like the other events. Otherwise, on a terminal, the live status line shows what the model
    is writing right now: its text, its thinking, a tool call's input, the output filling in.
    """

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.writing: str = ""
        """What the model is writing now, as shown on the status line."""
        self.doing: str = ""
        """What it is writing (its text, its thinking, a tool's input): what it writes next starts afresh."""

    def __call__(self, event: AgentStreamEvent[Any] | Paused) -> None:
        """Show one streamed event."""
        if self.progress.json_events:
            self._json(event)
            return
        where = f"attempt {event.attempt} · iteration {event.iteration}"
        match event.kind:
            case "text_delta":
                self._show(where, "writing", event.text)
            case "thinking_delta":
                self._show(where, "thinking", event.thinking)
            case "tool_input_delta":
                self._show(where, f"calling {event.name}", event.partial_json)
            case "partial_output":
                self.writing = json.dumps(event.raw, ensure_ascii=False)
                self.progress.lines.status(f"{where} · output so far: {_tail(self.writing)}")
            case _:
                self.writing = self.doing = ""

    def _show(self, where: str, doing: str, piece: str) -> None:
        if doing != self.doing:
            self.writing, self.doing = "", doing
        self.writing += piece
        self.progress.lines.status(f"{where} · {doing}: {_tail(self.writing)}")

    def _json(self, event: AgentStreamEvent[Any] | Paused) -> None:
        fields: dict[str, Any]
        match event.kind:
            case "text_delta":
                fields = {"text": event.text}
            case "thinking_delta":
                fields = {"thinking": event.thinking}
            case "tool_input_delta":
                fields = {"id": event.id, "name": event.name, "partial_json": event.partial_json}
            case "partial_output":
                fields = {"id": event.id, "partial": to_json(event.raw)}
            case _:
                return  # reported through the callbacks, as without streaming
        record = {"event": event.kind, "attempt": event.attempt, "iteration": event.iteration, **fields}
        stream = self.progress.stream
        stream.write(json.dumps(record, ensure_ascii=False) + "\n")
        stream.flush()


def _tail(text: str) -> str:
    """The end of what is being written, on one line: the part that changes."""
    line = " ".join(text.split())
    return line if len(line) <= _STATUS_WIDTH else f"…{line[-(_STATUS_WIDTH - 1) :]}"

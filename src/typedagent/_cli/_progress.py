"""Live progress of one execution: human lines (rich when installed) or one JSON object per event."""

from __future__ import annotations

import json
from functools import partial
from typing import TYPE_CHECKING, Any, TextIO

from .._shared.events import (
    AttemptStart,
    ExecuteCallbacks,
    ExecutionState,
    FallbackSwitch,
    ModelResponse,
    ToolCall,
    ToolResult,
    ValidationFailure,
)
from .._shared.pausing import ExecutePaused, PausedState
from .._shared.results import ExecuteFailure
from ._lines import Lines, RichLines, make_lines
from ._summary import Summary, duration, plural, to_json

if TYPE_CHECKING:
    from .._agent.definition import AgentDefinition
    from .._shared.pausing import PausableResult

__all__ = ["Lines", "Progress", "RichLines", "Summary", "make_lines", "to_json"]


class Progress:
    """Reports one execution as it happens, through ``ExecuteCallbacks``.

    Args:
        stream: Where to write (stderr for ``run``, so stdout carries only the output).
        json_events: One JSON object per line instead of human lines.
    """

    def __init__(self, stream: TextIO, *, json_events: bool = False) -> None:
        self.stream = stream
        self.json_events = json_events
        self.lines = make_lines(stream)
        self._inputs: dict[str, dict[str, Any]] = {}
        self._output_type: str | None = None
        self._on_the_server: set[str] = set()
        """Ids of the server and MCP calls announced: the API ran them, so no duration is shown."""

    def callbacks(self) -> ExecuteCallbacks:
        """The hooks to pass to ``execute_agent``."""
        return ExecuteCallbacks(
            on_attempt_start=self._attempt_start,
            on_model_response=self._model_response,
            on_tool_call=self._tool_call,
            on_tool_result=self._tool_result,
            on_validation_failure=self._validation_failure,
            on_pause=self._pause,
            on_resume=self._resume,
            on_fallback=partial(_fallback, self),
        )

    def _emit(self, event: str, state: ExecutionState | None, **fields: Any) -> None:
        record: dict[str, Any] = {"event": event}
        if state is not None:
            record.update(
                agent=state.agent_name,
                attempt=state.attempt,
                iteration=state.iteration,
                elapsed_ms=round(state.elapsed_ms, 3),
                tokens=to_json(state.tokens),
            )
        record.update({key: to_json(value) for key, value in fields.items()})
        self.stream.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.stream.flush()

    def start(self, agent: AgentDefinition[Any, Any], *, label: str, mode: str) -> None:
        """Announce the run: which agent, which model, where the model's replies come from."""
        limits = agent.validation
        self._output_type = agent.output.type_name
        if self.json_events:
            self._emit(
                "start",
                None,
                target=label,
                agent=agent.name,
                model=agent.model,
                mode=mode,
                max_attempts=limits.max_attempts,
                max_iterations_per_attempt=limits.max_iterations_per_attempt,
            )
            return
        self.lines.line(
            ("▶ ", "bold"),
            (agent.name, "bold"),
            f" on {agent.model} · {mode}",
            (
                f" · up to {plural(limits.max_attempts, 'attempt')}, "
                f"{limits.max_iterations_per_attempt} iterations each",
                "dim",
            ),
        )
        self.lines.status("starting…")

    def _attempt_start(self, state: ExecutionState, event: AttemptStart) -> None:
        if self.json_events:
            self._emit("attempt_start", state, max_attempts=event.max_attempts)
            return
        self.lines.line((f"attempt {event.attempt}/{event.max_attempts}", "bold cyan"))
        self.lines.status(f"attempt {event.attempt} · waiting for the model…")

    def _model_response(self, state: ExecutionState, event: ModelResponse) -> None:
        if self.json_events:
            content = [block.to_dict(mode="json") for block in event.message.content]  # as the API sent it
            self._emit("model_response", state, stop_reason=event.stop_reason, usage=event.usage, content=content)
            return
        self.lines.line(
            f"  iteration {state.iteration} ",
            (f"→ {event.stop_reason}", "cyan"),
            (f" · +{event.usage.total:,} tokens · {state.tokens.total:,} so far", "dim"),
        )
        for block in event.message.content:
            if block.type == "text" and block.text.strip():
                self.lines.line(("    “", "dim"), (_clip(block.text, 110), "dim italic"), ("”", "dim"))
        self.lines.status(f"attempt {state.attempt} · iteration {state.iteration} · handling the response…")

    def _tool_call(self, state: ExecutionState, event: ToolCall) -> None:
        if self.json_events:
            server = {} if event.server is None else {"server": event.server}
            self._emit("tool_call", state, id=event.id, name=event.name, kind=event.kind, input=event.input, **server)
            return
        self._inputs[event.id] = event.input
        if event.kind in ("server", "mcp"):
            self._on_the_server.add(event.id)
        self.lines.status(f"attempt {state.attempt} · iteration {state.iteration} · running {event.name}…")

    def _tool_result(self, state: ExecutionState, event: ToolResult) -> None:
        if self.json_events:
            self._emit(
                "tool_result",
                state,
                id=event.id,
                name=event.name,
                content=event.content,
                is_error=event.is_error,
                duration_ms=round(event.duration_ms, 3),
                **({} if event.server is None else {"server": event.server}),
            )
            return
        tool_input = self._inputs.pop(event.id, {})
        where = " · by the API" if event.id in self._on_the_server else f" · {duration(event.duration_ms)}"
        if event.server is not None and event.id not in self._on_the_server:
            where = f" · on MCP server {event.server}{where}"
        self._on_the_server.discard(event.id)
        arguments = _clip(json.dumps(tool_input, ensure_ascii=False), 70) if tool_input else ""
        mark, style = ("✗ ", "red") if event.is_error else ("✓ ", "green")
        self.lines.line(
            ("    ", ""),
            (mark, style),
            (event.name, "bold"),
            f" {arguments}" if arguments else "",
            (" → ", "dim"),
            (_clip(event.content, 90), "red" if event.is_error else ""),
            (where, "dim"),
        )
        self.lines.status(f"attempt {state.attempt} · waiting for the model…")

    def _validation_failure(self, state: ExecutionState, event: ValidationFailure) -> None:
        if self.json_events:
            self._emit(
                "validation_failure", state, outcome=str(event.outcome), errors=event.errors, candidate=event.candidate
            )
            return
        self.lines.line(("  ✗ ", "yellow"), (f"attempt {event.attempt} ended with {event.outcome}", "yellow"))
        for error in event.errors:
            self.lines.line(("      - ", "yellow"), _clip(error, 140))

    def _pause(self, state: ExecutionState, event: ExecutePaused) -> None:
        if self.json_events:
            pending = [{"id": c.id, "name": c.name, "kind": c.kind, "input": c.input} for c in event.pending]
            self._emit("pause", state, pending=pending)

    def _resume(self, state: ExecutionState, event: PausedState) -> None:
        if self.json_events:
            self._emit("resume", state, pauses=event.pauses)
            return
        self._inputs.update((call.id, call.input) for call in event.pending)
        waited = ", ".join(f"{call.name} ({call.kind})" for call in event.pending)
        self.lines.line(("▶ resumed", "bold"), (f" after pause {event.pauses}, deciding {waited}", "dim"))

    def finish(self, result: PausableResult[Any]) -> Summary:
        """Report how the run ended (or paused), with the summary figures; returns them."""
        self.lines.close()
        summary = Summary.of(result.metadata)
        if self.json_events:
            fields: dict[str, Any] = {"ok": result.ok, "status": result.status, **summary.as_json()}
            if isinstance(result, ExecutePaused):
                fields["pending"] = [{"id": c.id, "name": c.name, "kind": c.kind} for c in result.pending]
            elif isinstance(result, ExecuteFailure):
                error = result.error
                fields["error"] = {
                    "code": str(error.code),
                    "message": error.message,
                    "context": to_json(error.context),
                    "last_output": error.last_output,
                }
            else:
                fields["output"] = to_json(result.output)  # any output type: a model, a list, a scalar
            fields["callback_errors"] = [to_json(e) for e in result.metadata.callback_errors]
            self._emit("end", None, **fields)
            return summary
        if isinstance(result, ExecutePaused):
            self.lines.line(("⏸ paused: ", "bold yellow"), f"waiting on {plural(len(result.pending), 'call')}")
            for call in result.pending:
                arguments = _clip(json.dumps(call.input, ensure_ascii=False, default=str), 90)
                self.lines.line(("    ", ""), (call.name, "bold"), f" {arguments}", (f" · {call.kind}", "dim"))
        elif isinstance(result, ExecuteFailure):
            self.lines.line(("✗ failed: ", "bold red"), (str(result.error.code), "bold red"))
            self.lines.line(("  ", ""), result.error.message)
            if result.error.last_output is not None:
                self.lines.line(("  last candidate: ", "dim"), _clip(json.dumps(result.error.last_output), 200))
        else:
            self.lines.line(
                ("✓ valid ", "bold green"), (self._output_type or type(result.output).__name__, "bold green")
            )
        self.lines.line(("  ", ""), (summary.counts(), "dim"))
        self.lines.line(("  ", ""), (summary.token_line(), "dim"))
        cost = summary.cost_line()
        if cost is not None:
            self.lines.line(("  ", ""), (cost, "dim"))
        for failed in result.metadata.callback_errors:
            self.lines.line(
                ("  callback error: ", "yellow"), f"{failed.callback}: {failed.error_type}: {failed.message}"
            )
        return summary


def _clip(text: str, width: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else f"{line[: width - 1]}…"


def _fallback(self: Progress, state: ExecutionState, event: FallbackSwitch) -> None:
    """A switch to another model of the fallback chain: a JSON event, or a line."""
    if self.json_events:
        self._emit(
            "fallback",
            state,
            from_model=event.from_model,
            to_model=event.to_model,
            reason=event.reason,
            status_code=event.status_code,
            server_side=event.server_side,
        )
        return
    self.lines.line(
        ("  ↪ ", "magenta"), f"{event.from_model} → ", (event.to_model, "bold"), (f" · {event.reason}", "dim")
    )

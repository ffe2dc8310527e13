"""The callbacks of an execution: their type, the state snapshot and the event objects they receive."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from typing_extensions import TypeVar

from .pausing import ExecutePaused, PausedState
from .results import AttemptOutcome, TokenUsage

if TYPE_CHECKING:
    from anthropic.types import Message

__all__ = [
    "AttemptStart",
    "Callback",
    "ExecuteCallbacks",
    "ExecutionState",
    "FallbackSwitch",
    "ModelResponse",
    "ToolCall",
    "ToolKind",
    "ToolResult",
    "ValidationFailure",
]

EventT = TypeVar("EventT")

ToolKind: TypeAlias = Literal["helper", "output", "submit", "unknown", "server", "mcp"]
"""What a tool call addressed: a helper, the output tool, ``submit``, a tool the agent does not have, or a call
the API carried out itself — a server tool (``server``: web search, web fetch, code execution, …) or a tool of an
MCP server (``mcp``)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ExecutionState:
    """A snapshot of the execution when a callback fires."""

    agent_name: str
    """Name of the running agent."""
    attempt: int
    """Current attempt (1-based)."""
    iteration: int
    """Current iteration within the attempt (0 before the first API call)."""
    tokens: TokenUsage
    """Tokens used so far."""
    elapsed_ms: float
    """Milliseconds since the execution started."""
    key: str | None = None
    """The key of the input this execution serves, when ``execute_many`` runs it (else None)."""


EXECUTION_KEY: ContextVar[str | None] = ContextVar("typedagent_execution_key", default=None)
"""The input key of the execution running in this context: ``execute_many`` sets it in each execution's task, and
every ``ExecutionState`` snapshot reads it."""


@dataclass(frozen=True, kw_only=True, slots=True)
class AttemptStart:
    """An attempt is starting."""

    attempt: int
    """1-based attempt number."""
    max_attempts: int
    """The configured ``max_attempts``."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelResponse:
    """The model answered an API call."""

    message: Message
    """The response as the client returned it."""
    stop_reason: str | None
    """The response's stop reason."""
    usage: TokenUsage
    """This response's tokens."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCall:
    """The model called a tool (fires before the call is handled)."""

    id: str
    """The ``tool_use`` block id."""
    name: str
    """Tool name as the model wrote it."""
    input: dict[str, Any]
    """The model's input, unvalidated."""
    kind: ToolKind
    """Helper, output, submit, unknown, or (carried out by the API, already done) server or mcp."""
    server: str | None = None
    """The MCP server whose tool it is: the toolset's name for a tool of a ``typedagent.mcp`` toolset (run here,
    kind ``helper``), the ``server_name`` of a call the API's MCP connector carried out (kind ``mcp``); else None."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolResult:
    """A ``tool_result`` is being sent back to the model."""

    id: str
    """The ``tool_use`` id it answers."""
    name: str
    """Tool name."""
    content: str
    """Exactly what the model will read; for a result with content blocks (images, documents), their text; for a
    server or MCP tool's result, a one-line account of it (the results found, the page fetched, the output)."""
    is_error: bool
    """Whether the result is flagged ``is_error``."""
    duration_ms: float
    """Time spent handling the call (0 for results that needed no handler, and for server and MCP tools the API
    carried out)."""
    kind: ToolKind
    """The kind of the call it answers, as ``ToolCall.kind`` said: helper, output, submit, unknown, server or mcp."""
    server: str | None = None
    """The MCP server whose tool it is, as on the ``ToolCall`` it answers; else None."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ValidationFailure:
    """An attempt ended without a valid output; its problems go back to the model."""

    attempt: int
    """The attempt that failed."""
    outcome: AttemptOutcome
    """Why it failed."""
    errors: tuple[str, ...]
    """Every problem, as sent to the model."""
    candidate: dict[str, Any] | None
    """The raw candidate that was rejected, if any."""


@dataclass(frozen=True, kw_only=True, slots=True)
class FallbackSwitch:
    """The execution's model calls move to another model of the agent's fallback chain (``define_agent(fallback=...)``).

    Fires before the call to ``to_model`` is made; for a refusal the API's server-side fallback answered within the
    same call (``server_side``), when that response arrives.
    """

    from_model: str
    """The model the execution leaves (the one that failed or refused, or the one it was staying on)."""
    to_model: str
    """The model the call goes to now."""
    position: int
    """``to_model``'s place in the chain: 0 for the agent's own model, 1 for the first alternative, …"""
    reason: str
    """Why: the error type that moved the call on (``overloaded_error``, ``api_error``, ``rate_limit_error``,
    ``connection_error``, ``timeout_error``, …), ``refusal``, ``circuit_open`` (a model skipped while its circuit
    breaker is open), ``cannot_move`` (an alternative that cannot take the conversation, or lacks the structured
    outputs the request needs, skipped), or ``stay_over`` (the time to stay on an alternative passed: the agent's
    own model is tried again)."""
    status_code: int | None = None
    """The HTTP status of the failure that moved the call on, if any."""
    server_side: bool = False
    """The switch happened inside one API call: the API's own fallback served a refused request."""


# A Callable alias rather than a Protocol: mypy infers a lambda's parameter types from a Callable
# (`on_tool_call=lambda state, event: ...` gets ExecutionState and ToolCall) but leaves them Any
# against a callback protocol.
Callback: TypeAlias = Callable[[ExecutionState, EventT], Awaitable[None] | None]
"""A hook: called as ``callback(state, event)``; sync (returns None) or async."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ExecuteCallbacks:
    """Hooks into an execution. Every field is optional; each may be sync or async.

    A hook that raises is caught: the error is recorded in ``metadata.callback_errors`` and the
    execution goes on. Each hook gets its own deep copy of the event: changing it changes nothing in
    the run.
    """

    on_attempt_start: Callback[AttemptStart] | None = None
    """Before each attempt."""
    on_model_response: Callback[ModelResponse] | None = None
    """After each API response (before its tool calls are handled)."""
    on_tool_call: Callback[ToolCall] | None = None
    """Before each tool call is handled (helpers, output and submit); for server and MCP tool calls, which the API
    has carried out already, when the response holding them arrives."""
    on_tool_result: Callback[ToolResult] | None = None
    """For each tool result sent back, errors and validation feedback included, and each server or MCP tool
    result the API put in a response."""
    on_validation_failure: Callback[ValidationFailure] | None = None
    """When an attempt ends without a valid output and feedback goes to the model."""
    on_pause: Callback[ExecutePaused] | None = None
    """When the execution pauses at tool calls waiting for a decision (``pausable=True``): the event is the result
    it returns, with the pending calls and the state."""
    on_resume: Callback[PausedState] | None = None
    """When a paused execution resumes (``resume=state``), before the decided calls run: the event is that state."""
    on_fallback: Callback[FallbackSwitch] | None = None
    """When a model call moves to another model of the agent's fallback chain (``define_agent(fallback=...)``)."""

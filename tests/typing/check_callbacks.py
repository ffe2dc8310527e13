"""Type-checked, never run: callbacks receive a typed state and a typed event, sync or async.

Every line ending in ``# type: ignore[...]`` must stay an error for mypy (``warn_unused_ignores``),
every ``# pyright: ignore[...]`` one for basedpyright (``reportUnnecessaryTypeIgnoreComment``).
"""

from typing import assert_type

from pydantic import BaseModel

from typedagent import (
    AttemptOutcome,
    AttemptStart,
    Callback,
    ExecuteCallbacks,
    ExecutionState,
    ModelResponse,
    OutputTool,
    TokenUsage,
    ToolCall,
    ToolResult,
    ValidationFailure,
    define_agent,
    execute_agent,
)


class Triage(BaseModel):
    severity: int
    summary: str


def on_attempt(state: ExecutionState, event: AttemptStart) -> None:
    print(state.agent_name, event.attempt, event.max_attempts)


async def on_response(state: ExecutionState, event: ModelResponse) -> None:
    print(state.elapsed_ms, event.stop_reason, event.usage.total)


def on_call(state: ExecutionState, event: ToolCall) -> None:
    print(state.iteration, event.name, event.input, event.kind)


async def on_result(state: ExecutionState, event: ToolResult) -> None:
    print(state.tokens.total, event.content, event.is_error, event.duration_ms)


def on_failure(state: ExecutionState, event: ValidationFailure) -> None:
    assert_type(event.outcome, AttemptOutcome)
    print(state.attempt, event.errors, event.candidate)


def on_anything(state: ExecutionState, event: object) -> None:
    print(state, event)


def returns_value(state: ExecutionState, event: ToolCall) -> bool:
    return bool(state and event)


def event_only(event: ToolCall) -> None:
    print(event)


# Every hook, sync or async; a hook taking ``object`` fits every event.

callbacks = ExecuteCallbacks(
    on_attempt_start=on_attempt,
    on_model_response=on_response,
    on_tool_call=on_call,
    on_tool_result=on_result,
    on_validation_failure=on_failure,
)
everything = ExecuteCallbacks(
    on_attempt_start=on_anything,
    on_model_response=on_anything,
    on_tool_call=on_anything,
    on_tool_result=on_anything,
    on_validation_failure=on_anything,
)
assert_type(callbacks.on_tool_call, Callback[ToolCall] | None)
typed_hook: Callback[ToolResult] = on_result

# Lambdas get their parameter types from the hook (both checkers).

ExecuteCallbacks(
    on_tool_call=lambda state, event: print(assert_type(state, ExecutionState), assert_type(event, ToolCall)),
    on_tool_result=lambda state, event: print(assert_type(event.is_error, bool)),
    on_validation_failure=lambda state, event: print(assert_type(state.tokens, TokenUsage), event.errors),
)

ExecuteCallbacks(on_tool_call=on_result)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
ExecuteCallbacks(on_tool_result=on_call)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
ExecuteCallbacks(on_tool_call=returns_value)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
ExecuteCallbacks(on_tool_call=event_only)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
ExecuteCallbacks(on_tool_call=lambda state, event: print(event.is_error))  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
ExecuteCallbacks(on_tool_call=lambda state, event: print(state.elapsed))  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
ExecuteCallbacks(on_tool_call=on_call, on_tool_calls=on_call)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]


async def run() -> None:
    agent = define_agent(name="triage", model="claude-sonnet-4-5", output=OutputTool(Triage))
    await execute_agent(agent, "Ticket", callbacks=callbacks)
    await execute_agent(agent, "Ticket", callbacks=on_call)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]

"""Type-checked, never run: ``execute_agent`` returns the agent's output type, narrowed without casts.

Every line ending in ``# type: ignore[...]`` must stay an error for mypy (``warn_unused_ignores``),
every ``# pyright: ignore[...]`` one for basedpyright (``reportUnnecessaryTypeIgnoreComment``).
"""

from dataclasses import dataclass
from typing import NoReturn, assert_type

from pydantic import BaseModel

from typedagent import (
    AgentError,
    AgentErrorCode,
    ApiErrorContext,
    AttemptErrorsContext,
    CancelledContext,
    ContextWindowContext,
    ErrorContext,
    ExecuteFailure,
    ExecuteResult,
    ExecuteSuccess,
    ExecutionMetadata,
    MaxIterationsContext,
    OutputTool,
    RefusalContext,
    TimeoutContext,
    TokenBudgetContext,
    ValidatorErrorContext,
    define_agent,
    execute_agent,
    execute_agent_sync,
)
from typedagent.testing import ScriptedClient


class Triage(BaseModel):
    severity: int
    summary: str


class Invoice(BaseModel):
    total: float


@dataclass
class Db:
    user: str


@dataclass
class AdminDb(Db):
    admin: bool


agent = define_agent(name="triage", model="claude-sonnet-4-5", output=OutputTool(Triage))
db_agent = define_agent(name="triage", model="claude-sonnet-4-5", output=OutputTool(Triage), deps_type=Db)


# The output type flows from OutputTool(Triage) to the result, async and sync, with no annotation.


async def run_async(client: ScriptedClient) -> None:
    result = await execute_agent(agent, "Ticket: VPN drops every hour", client=client)
    assert_type(result, ExecuteResult[Triage])
    assert_type(result, ExecuteSuccess[Triage] | ExecuteFailure)
    assert_type(result.metadata, ExecutionMetadata)
    assert_type(await execute_agent(db_agent, "Ticket", deps=Db("ada"), client=client), ExecuteResult[Triage])
    assert_type(await execute_agent(db_agent, "Ticket", deps=AdminDb("ada", admin=True)), ExecuteResult[Triage])

    await execute_agent(db_agent, "Ticket")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    await execute_agent(db_agent, "Ticket", deps="ada")  # type: ignore[misc]  # pyright: ignore[reportCallIssue, reportArgumentType]
    await execute_agent(db_agent, "Ticket", deps=None)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
    await execute_agent(agent, "Ticket", deps=Db("ada"))  # type: ignore[misc]  # pyright: ignore[reportCallIssue, reportArgumentType]
    await execute_agent(agent, 42)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
    await execute_agent(agent, "Ticket", client="anthropic")  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]


def run_sync(client: ScriptedClient) -> None:
    assert_type(execute_agent_sync(agent, "Ticket", client=client), ExecuteResult[Triage])
    assert_type(execute_agent_sync(db_agent, "Ticket", deps=Db("ada")), ExecuteResult[Triage])

    execute_agent_sync(db_agent, "Ticket")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    execute_agent_sync(db_agent, "Ticket", deps="ada")  # type: ignore[misc]  # pyright: ignore[reportCallIssue, reportArgumentType]


# Narrowing: isinstance and match work in both checkers. ``if result.ok:`` narrows in mypy only;
# pyright narrows a boolean discriminant on ``is True`` / ``is False`` / ``==``, never on truthiness.


def by_isinstance(result: ExecuteResult[Triage]) -> None:
    if isinstance(result, ExecuteSuccess):
        assert_type(result.output, Triage)
    else:
        assert_type(result.error, AgentError)


def by_match(result: ExecuteResult[Triage]) -> None:
    match result:
        case ExecuteSuccess(output=output):
            assert_type(output, Triage)
        case ExecuteFailure(error=error):
            assert_type(error.code, AgentErrorCode)


def by_ok_is_true(result: ExecuteResult[Triage]) -> None:
    if result.ok is True:
        assert_type(result.output, Triage)
    else:
        assert_type(result.error, AgentError)


def by_ok_is_false(result: ExecuteResult[Triage]) -> Triage:
    if result.ok is False:
        raise RuntimeError(result.error.message)
    return result.output


def by_ok(result: ExecuteResult[Triage]) -> None:
    if result.ok:
        assert_type(result.output, Triage)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportAssertTypeFailure]
    else:
        assert_type(result.error, AgentError)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportAssertTypeFailure]


def by_not_ok(result: ExecuteResult[Triage]) -> Triage:
    if not result.ok:
        raise RuntimeError(result.error.message)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
    return result.output  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]


def before_narrowing(result: ExecuteResult[Triage]) -> None:
    print(result.output)  # type: ignore[union-attr]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
    print(result.error)  # type: ignore[union-attr]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
    assert_type(result.ok, bool)


# unwrap() returns the output type; on a failure it never returns.


def by_unwrap(result: ExecuteResult[Triage]) -> Triage:
    assert_type(result.unwrap(), Triage)
    return result.unwrap()


def not_another_type(result: ExecuteResult[Triage]) -> Invoice:
    return result.unwrap()  # type: ignore[return-value]  # pyright: ignore[reportReturnType]


def failure_unwrap(failure: ExecuteFailure) -> NoReturn:
    failure.unwrap()


def early_exit(result: ExecuteResult[Triage]) -> Triage:
    if isinstance(result, ExecuteFailure):
        result.unwrap()
    return result.output


# An error's context is a union; context_for(code) narrows it to that code's class, in both checkers.


def context_by_code(error: AgentError, code: AgentErrorCode) -> None:
    assert_type(error.context, ErrorContext)
    assert_type(error.context_for(AgentErrorCode.API_ERROR), ApiErrorContext | None)
    assert_type(error.context_for(AgentErrorCode.EXECUTION_CANCELLED), CancelledContext | None)
    assert_type(error.context_for(AgentErrorCode.TIMEOUT), TimeoutContext | None)
    assert_type(error.context_for(AgentErrorCode.TOKEN_BUDGET_EXCEEDED), TokenBudgetContext | None)
    assert_type(error.context_for(AgentErrorCode.MAX_ITERATIONS), MaxIterationsContext | None)
    assert_type(error.context_for(AgentErrorCode.VALIDATION_FAILED), AttemptErrorsContext | None)
    assert_type(error.context_for(AgentErrorCode.INVALID_RESPONSE), AttemptErrorsContext | None)
    assert_type(error.context_for(AgentErrorCode.SUBMIT_BEFORE_OUTPUT), AttemptErrorsContext | None)
    assert_type(error.context_for(AgentErrorCode.MAX_TOKENS), AttemptErrorsContext | None)
    assert_type(error.context_for(AgentErrorCode.VALIDATOR_ERROR), ValidatorErrorContext | None)
    assert_type(error.context_for(AgentErrorCode.REFUSAL), RefusalContext | None)
    assert_type(error.context_for(AgentErrorCode.CONTEXT_WINDOW_EXCEEDED), ContextWindowContext | None)
    assert_type(error.context_for(code), ErrorContext | None)
    if (api := error.context_for(AgentErrorCode.API_ERROR)) is not None:
        assert_type(api.status_code, int | None)
    print(error.context.status_code)  # type: ignore[union-attr]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
    error.context_for("API_ERROR")  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]

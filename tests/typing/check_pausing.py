"""Type-checked, never run: pausing is asked for, so the result type says when an execution can pause.

Without ``pausable=True`` the result stays ``ExecuteResult[Output]``; with it, and on ``resume=``, it is
``PausableResult[Output]``, narrowed by ``result.status`` (``==`` or ``match``) in both checkers.

Every line ending in ``# type: ignore[...]`` must stay an error for mypy (``warn_unused_ignores``),
every ``# pyright: ignore[...]`` one for basedpyright (``reportUnnecessaryTypeIgnoreComment``).
"""

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any, assert_never, assert_type

from pydantic import BaseModel

from typedagent import (
    AgentStream,
    AgentStreamEvent,
    Approve,
    Decision,
    Deny,
    ExecuteFailure,
    ExecutePaused,
    ExecuteResult,
    ExecuteSuccess,
    ExternalResult,
    HelperTool,
    ManyResult,
    OutputTool,
    PausableResult,
    Paused,
    PausedState,
    PendingCall,
    RunContext,
    SyncAgentStream,
    define_agent,
    execute_agent,
    execute_agent_sync,
    execute_many,
    stream_agent,
    stream_agent_sync,
    tool,
)


class Triage(BaseModel):
    severity: int


@dataclass
class Db:
    user: str


@tool(requires_approval=True)
def delete(path: str) -> str:
    return path


@tool(requires_approval=lambda ctx, args: args["path"] != "/tmp")
def move(path: str) -> str:
    return path


def outside(ctx: RunContext[Db], args: dict[str, Any]) -> bool:
    return bool(ctx.deps.user != args["owner"])


@tool(requires_approval=outside)
def chown(ctx: RunContext[Db], owner: str) -> str:
    return owner


@tool(external=True)
def ask_user(question: str) -> str:
    raise NotImplementedError  # a signature only: the result comes from outside


raw = HelperTool(definition={"name": "status", "input_schema": {"type": "object"}}, handler=None)
checked = HelperTool(
    definition={"name": "s", "input_schema": {"type": "object"}}, handler=lambda _: "", requires_approval=True
)
tool(lambda: "", requires_approval="always")  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType, reportCallIssue]

agent = define_agent(name="t", model="claude-sonnet-4-6", output=OutputTool(Triage), helpers=[delete, ask_user])
db_agent = define_agent(name="t", model="claude-sonnet-4-6", output=OutputTool(Triage), helpers=[chown], deps_type=Db)


def approve(call: PendingCall) -> Approve | Deny:
    return Approve() if call.kind == "approval" else Deny("no")


async def approve_async(call: PendingCall) -> Approve | Deny:
    return Deny(call.name)


def external_only(call: PendingCall) -> ExternalResult:
    return ExternalResult(call.input)


async def results() -> None:
    assert_type(await execute_agent(agent, "x"), ExecuteResult[Triage])
    assert_type(await execute_agent(agent, "x", approve=approve), ExecuteResult[Triage])
    assert_type(await execute_agent(agent, "x", pausable=False), ExecuteResult[Triage])
    paused = await execute_agent(agent, "x", pausable=True)
    assert_type(paused, PausableResult[Triage])
    assert_type(paused, ExecuteSuccess[Triage] | ExecuteFailure | ExecutePaused)
    assert_type(await execute_agent(agent, "x", pausable=True, approve=approve_async), PausableResult[Triage])
    assert_type(await execute_agent(db_agent, "x", deps=Db("ada"), pausable=True), PausableResult[Triage])
    await execute_agent(agent, "x", approve=external_only)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


async def resumed(state: PausedState, decisions: dict[str, Decision]) -> None:
    assert_type(await execute_agent(agent, resume=state, decisions=decisions), PausableResult[Triage])
    assert_type(
        await execute_agent(db_agent, resume=state, decisions={"toolu_1": Approve()}, deps=Db("ada")),
        PausableResult[Triage],
    )
    await execute_agent(agent, resume=state)  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue]
    await execute_agent(agent, resume=state, decisions={"toolu_1": "yes"})  # type: ignore[dict-item]  # pyright: ignore[reportArgumentType]
    await execute_agent(agent, "again", resume=state, decisions=decisions)  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue]
    await execute_agent(db_agent, resume=state, decisions=decisions)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    assert_type(execute_agent_sync(agent, resume=state, decisions=decisions), PausableResult[Triage])
    assert_type(execute_agent_sync(agent, "x", pausable=True), PausableResult[Triage])
    assert_type(execute_agent_sync(agent, "x"), ExecuteResult[Triage])


def narrowing(result: PausableResult[Triage]) -> str:
    if result.status == "paused":
        assert_type(result, ExecutePaused)
        assert_type(result.pending, tuple[PendingCall, ...])
        assert_type(result.state, PausedState)
        return result.state.to_json()
    if result.status == "success":
        assert_type(result, ExecuteSuccess[Triage])
        return str(result.output.severity)
    assert_type(result, ExecuteFailure)
    return result.error.message


def matching(result: PausableResult[Triage]) -> str:
    match result:
        case ExecuteSuccess(output=output):
            assert_type(output, Triage)
            return "done"
        case ExecutePaused(pending=pending):
            return pending[0].kind
        case ExecuteFailure(error=error):
            return error.message
        case _:
            assert_never(result)


def ok_still_tests_success(result: PausableResult[Triage]) -> None:
    if result.ok is True:
        assert_type(result, ExecuteSuccess[Triage])
    else:
        assert_type(result, ExecuteFailure | ExecutePaused)
        print(result.error)  # type: ignore[union-attr]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]


def status_on_the_plain_result(result: ExecuteResult[Triage]) -> None:
    if result.status == "failure":
        assert_type(result, ExecuteFailure)
    else:
        assert_type(result, ExecuteSuccess[Triage])


def decisions_and_state(text: str, call: PendingCall) -> None:
    state = PausedState.from_json(text)
    assert_type(state.to_json(), str)
    assert_type(state.pending, tuple[PendingCall, ...])
    choices: list[Decision] = [Approve(), Approve(input={"path": "/tmp"}), Deny("no"), Deny(), ExternalResult(3)]
    choices.append(ExternalResult(error="down"))
    Approve({"path": "/tmp"})  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    Deny(reason=3)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


async def streams(state: PausedState) -> None:
    async with stream_agent(agent, "x") as plain:
        async for event in plain:
            assert_type(event, AgentStreamEvent[Triage])
        assert_type(plain.result, ExecuteResult[Triage])
    pausing = stream_agent(agent, "x", pausable=True)
    assert_type(pausing, AgentStream[Triage, Paused, ExecutePaused])
    async with pausing as run:
        async for paused_event in run:
            assert_type(paused_event, AgentStreamEvent[Triage] | Paused)
            if paused_event.kind == "paused":
                assert_type(paused_event, Paused)
                assert_type(paused_event.state, PausedState)
        assert_type(run.result, PausableResult[Triage])
    assert_type(stream_agent(agent, resume=state, decisions={}), AgentStream[Triage, Paused, ExecutePaused])
    assert_type(stream_agent_sync(agent, "x"), SyncAgentStream[Triage])
    with stream_agent_sync(agent, "x", pausable=True) as sync_run:
        for item in sync_run:
            assert_type(item, AgentStreamEvent[Triage] | Paused)
        assert_type(sync_run.result, PausableResult[Triage])


async def many() -> None:
    plain = execute_many(agent, ["x"])
    assert_type(plain, AsyncGenerator[ManyResult[Triage], None])
    pausing = execute_many(agent, ["x"], pausable=True)
    assert_type(pausing, AsyncGenerator[ManyResult[Triage, PausableResult[Triage]], None])
    async for item in pausing:
        if item.result.status == "paused":
            assert_type(item.result, ExecutePaused)
    async for each in plain:
        assert_type(each.result, ExecuteResult[Triage])

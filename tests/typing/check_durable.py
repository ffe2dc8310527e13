"""Type-checked, never run: durable agents keep the agent's output and deps types.

Every line ending in ``# type: ignore[...]`` must stay an error for mypy (``warn_unused_ignores``),
every ``# pyright: ignore[...]`` one for basedpyright (``reportUnnecessaryTypeIgnoreComment``).
"""

from dataclasses import dataclass
from typing import Any, assert_type

from pydantic import BaseModel
from temporalio.client import WorkflowHandle

from typedagent import Approve, Deny, ExecuteResult, ExternalResult, OutputTool, RunContext, define_agent, tool
from typedagent.dbos import DBOSAgent
from typedagent.dbos import send_decisions as dbos_send
from typedagent.temporal import TemporalAgent
from typedagent.temporal import send_decisions as temporal_send


class Triage(BaseModel):
    severity: int


@dataclass
class Db:
    user: str


@tool
def whoami(ctx: RunContext[Db]) -> str:
    """The user."""
    return ctx.deps.user


with_deps = define_agent(name="d", model="claude-sonnet-4-6", output=OutputTool(Triage), helpers=[whoami], deps_type=Db)
plain = define_agent(name="p", model="claude-sonnet-4-6", output=OutputTool(Triage))


async def durable_runs() -> None:
    temporal = TemporalAgent(with_deps, name="d")
    assert_type(temporal, TemporalAgent[Triage, Db])
    assert_type(await temporal.run("hi", deps=Db(user="ann")), ExecuteResult[Triage])
    await temporal.run("hi", deps="not a Db")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    assert_type(await TemporalAgent(plain, name="p").run("hi"), ExecuteResult[Triage])
    dbos = DBOSAgent(with_deps)
    assert_type(await dbos.run("hi", deps=Db(user="ann")), ExecuteResult[Triage])
    assert_type(await DBOSAgent(plain).run("hi"), ExecuteResult[Triage])


async def decisions(handle: WorkflowHandle[Any, ExecuteResult[Triage]]) -> None:
    temporal = TemporalAgent(plain, name="p")
    assert_type(temporal.signal_name, str)
    assert_type(DBOSAgent(plain).decisions_topic, str)
    assert_type(await temporal_send(handle, {"toolu_1": Approve(), "toolu_2": Deny("no")}), None)
    assert_type(await dbos_send("wf-1", {"toolu_1": ExternalResult({"answer": 42})}), None)
    await temporal_send("wf-1", {"toolu_1": Approve()})  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    await dbos_send("wf-1", {"toolu_1": True})  # type: ignore[dict-item]  # pyright: ignore[reportArgumentType]
    await dbos_send("wf-1", [Approve()])  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]

"""A DBOSAgent, run by tests/test_dbos.py in subprocesses: one that dies mid-run, one that recovers the workflow.

Usage: python dbos_app.py start|recover|wait|decide DBDIR WORKFLOW_ID [BASELINE_URL]
``start`` runs the workflow (the checkpoint tool kills the process when DURABLE_DIE_IN_CHECKPOINT is set);
``recover`` launches DBOS (which recovers the workflow), prints its result's metadata as JSON, then the
metadata of an uninterrupted run of the same workflow against BASELINE_URL. ``wait`` starts a run that pauses
for approval (the test kills the process while it waits); ``decide`` recovers it, sends it decisions and prints
its result.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import sys

from anthropic import AsyncAnthropic
from dbos import DBOS, DBOSConfig, SetWorkflowID
from pydantic import BaseModel

from typedagent import (
    Approve,
    ExecuteCallbacks,
    ExecutePaused,
    ExecuteResult,
    ExecutionState,
    ExternalResult,
    OutputTool,
    RunContext,
    define_agent,
    tool,
)
from typedagent.dbos import DBOSAgent, send_decisions
from typedagent.testing import use_client


class Triage(BaseModel):
    label: str
    urgent: bool


class Account(BaseModel):
    user: str


def record(line: str) -> None:
    with open(os.environ["DURABLE_TOOL_LOG"], "a", encoding="utf-8") as log:
        log.write(f"{line} {os.getpid()}\n")


@tool
async def lookup(ctx: RunContext[Account], key: str) -> str:
    """Look a key up for the account."""
    record(f"lookup:{key}")
    return f"{key} of {ctx.deps.user}"


@tool
async def checkpoint(note: str) -> str:
    """Save a note."""
    record(f"checkpoint:{note}")
    if os.environ.get("DURABLE_DIE_IN_CHECKPOINT"):
        os.kill(os.getpid(), signal.SIGKILL)
    return "saved"


agent = define_agent(
    name="triage",
    model="claude-sonnet-4-6",
    output=OutputTool(Triage),
    helpers=[lookup, checkpoint],
    deps_type=Account,
)
durable = DBOSAgent(agent)


@tool(requires_approval=True)
async def refund(ctx: RunContext[None], amount: int) -> str:
    """Refund the customer (a person approves it first)."""
    record(f"refund:{amount}:deps={ctx.deps!r}")  # an agent without deps sees None, recovered or not
    return f"refunded {amount}"


refunds = DBOSAgent(
    define_agent(name="refunds", model="claude-sonnet-4-6", output=OutputTool(Triage), helpers=[refund])
)

PENDING = "pending_calls"
"""The DBOS event the refund run publishes its pending call ids on, for the approver to read."""


async def publish_pending(state: ExecutionState, paused: ExecutePaused) -> None:
    """on_pause, in the workflow: publish what the run waits on (DBOS.get_event reads it from any process)."""
    await DBOS.set_event_async(PENDING, [call.id for call in paused.pending])


def summary(result: ExecuteResult[Triage]) -> str:
    assert result.ok, result
    meta = result.metadata
    return json.dumps(
        {
            "output": result.output.model_dump(),
            "tokens": dataclasses.asdict(meta.tokens),
            "cost_usd": meta.cost_usd,
            "iterations": meta.iterations,
            "tool_calls": meta.tool_calls,
            "attempts": [dataclasses.asdict(record) for record in meta.attempts],
        }
    )


async def main(mode: str, dbdir: str, workflow_id: str, baseline_url: str | None) -> None:
    config: DBOSConfig = {
        "name": "typedagent-tests",
        "system_database_url": f"sqlite:///{dbdir}/dbos.sqlite",
        "application_version": "typedagent-tests",  # recovery needs the same version in both processes
        "log_level": "WARNING",
    }
    DBOS(config=config)
    DBOS.launch()  # in the running loop: a recovered workflow runs on it
    try:
        if mode == "wait":  # start a run that pauses for approval; the test kills this process while it waits
            with SetWorkflowID(workflow_id):
                await refunds.run("Refund order 7.", callbacks=ExecuteCallbacks(on_pause=publish_pending))
        elif mode == "decide":  # DBOS.launch() recovered the waiting run: send it decisions, print its result
            assert refunds.decisions_topic == "typedagent.decisions"
            pending: list[str] = await DBOS.get_event_async(workflow_id, PENDING, timeout_seconds=60)
            print(json.dumps({"pending": pending}), flush=True)
            # A decision for a call the run does not wait on, and one of the wrong kind: dropped, the run waits on.
            await send_decisions(
                workflow_id, {"toolu_other": Approve(), **{id_: ExternalResult("yes") for id_ in pending}}
            )
            await send_decisions(workflow_id, {id_: Approve(input={"amount": 25}) for id_ in pending})
            handle = await DBOS.retrieve_workflow_async(workflow_id)
            print(summary(await handle.get_result()), flush=True)
        elif mode == "start":
            with SetWorkflowID(workflow_id):
                await durable.run("My VPN drops every hour.", deps=Account(user="ann"))
        else:
            handle = await DBOS.retrieve_workflow_async(workflow_id)
            print(summary(await handle.get_result()), flush=True)
            assert baseline_url is not None
            with use_client(AsyncAnthropic(base_url=baseline_url, api_key="test")):
                print(summary(await durable.run("My VPN drops every hour.", deps=Account(user="ann"))), flush=True)
    finally:
        DBOS.destroy()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None))

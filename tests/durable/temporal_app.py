"""A TemporalAgent and its workflows, for tests/test_temporal.py and the worker it runs in a subprocess."""

from __future__ import annotations

import asyncio
import os
import signal
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from pydantic import BaseModel

    from typedagent import ExecuteResult, OutputTool, RunContext, define_agent, tool
    from typedagent.temporal import TemporalAgent


class Triage(BaseModel):
    label: str
    urgent: bool


class Account(BaseModel):
    user: str


def record(line: str) -> None:
    """Append ``line`` and this process's id to the tool log (each tool run leaves one line)."""
    with open(os.environ["DURABLE_TOOL_LOG"], "a", encoding="utf-8") as log:
        log.write(f"{line} {os.getpid()}\n")


@tool
async def lookup(ctx: RunContext[Account], key: str) -> str:
    """Look a key up for the account."""
    record(f"lookup:{key}")
    return f"{key} of {ctx.deps.user} ({type(ctx.deps).__name__})"


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
durable = TemporalAgent(
    agent,
    name="tests-triage",  # not "triage": docs/durable.md's agent has that name, in the same test process
    activity_config={
        "start_to_close_timeout": timedelta(seconds=30),
        "retry_policy": RetryPolicy(initial_interval=timedelta(milliseconds=100)),
    },
    # A short heartbeat timeout: the checkpoint that dies with its worker is retried on another after 1 s.
    tool_activity_config={"checkpoint": {"heartbeat_timeout": timedelta(seconds=1)}},
)


@tool(requires_approval=True)
async def refund(amount: int) -> str:
    """Refund the customer (a person approves it first)."""
    record(f"refund:{amount}")
    return f"refunded {amount}"


@tool(external=True)
def ask_customer(question: str) -> str:
    """Ask the customer; the answer comes from outside."""
    raise AssertionError("an external tool's function is never called")


refunds = TemporalAgent(
    define_agent(name="refunds", model="claude-sonnet-4-6", output=OutputTool(Triage), helpers=[refund, ask_customer]),
    name="tests-refunds",
    activity_config={
        "start_to_close_timeout": timedelta(seconds=30),
        "retry_policy": RetryPolicy(initial_interval=timedelta(milliseconds=100)),
    },
)


@workflow.defn
class RefundWorkflow:
    @workflow.run
    async def run(self, prompt: str) -> ExecuteResult[Triage]:
        return await refunds.run(prompt)


@workflow.defn
class TriageWorkflow:
    @workflow.run
    async def run(self, prompt: str, account: Account) -> ExecuteResult[Triage]:
        return await durable.run(prompt, deps=account)


@tool
async def nap(seconds: float) -> str:
    """Sleep, then answer (slower than its activity's timeout, in the test of a failing activity)."""
    await asyncio.sleep(seconds)
    return "woke"


failing = TemporalAgent(
    define_agent(name="failing", model="claude-sonnet-4-6", output=OutputTool(Triage), helpers=[nap]),
    name="tests-failing",
    # One attempt of one second: an activity that outlives it fails for good, at once.
    activity_config={"start_to_close_timeout": timedelta(seconds=1), "retry_policy": RetryPolicy(maximum_attempts=1)},
)


@workflow.defn
class FailingWorkflow:
    @workflow.run
    async def run(self, prompt: str) -> ExecuteResult[Triage]:
        return await failing.run(prompt)

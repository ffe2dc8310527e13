"""Durable triage on DBOS (SQLite): the process is killed mid-run, DBOS.launch() in a new one finishes the run.

Runs offline: DBOS on a SQLite file in a temporary folder, and a local fake Messages API that counts the calls
it answers. The first child process dies (SIGKILL) in the checkpoint tool, after the second model call; the
second child only launches DBOS, which recovers the workflow and finishes it without repeating a call.

    pip install "typedagent[dbos]"
    python examples/durable/dbos_triage.py
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile

from dbos import DBOS, DBOSConfig, SetWorkflowID
from pydantic import BaseModel

from typedagent import OutputTool, define_agent, tool
from typedagent.dbos import DBOSAgent
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
        print(f"  [pid {os.getpid()}] the process is killed now", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    return "saved"


agent = define_agent(
    name="triage", model="claude-sonnet-4-6", output=OutputTool(Triage), helpers=[lookup_plan, checkpoint]
)
durable = DBOSAgent(agent)  # at import time: registered before DBOS.launch(), as recovery needs
SCRIPT = [
    tool_call("lookup_plan", {"customer": "ann"}),
    tool_call("checkpoint", {"note": "plan is premium"}),
    tool_call("lookup_plan", {"customer": "ann's team"}),
    output_call(Triage(label="network", urgent=True)),
]


async def child(mode: str, folder: str) -> None:
    config: DBOSConfig = {
        "name": "triage-example",
        "system_database_url": f"sqlite:///{folder}/dbos.sqlite",
        "application_version": "1",  # the recovering process must have the same version
        "log_level": "WARNING",
    }
    DBOS(config=config)
    DBOS.launch()  # in the running loop: the recovered workflow runs on it
    try:
        if mode == "start":
            with SetWorkflowID("ticket-42"):
                await durable.run("Ticket: my VPN drops every hour")
        else:
            result = await (await DBOS.retrieve_workflow_async("ticket-42")).get_result()
            if result.ok is True:
                print(result.output.model_dump_json(), flush=True)
    finally:
        DBOS.destroy()


def run_child(mode: str, folder: str, base_url: str) -> int:
    env = {**os.environ, "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "offline"}
    if mode == "start":
        env["EXAMPLE_DIE_IN_CHECKPOINT"] = "1"
    return subprocess.run([sys.executable, __file__, mode, folder], env=env, check=False).returncode


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, FakeAnthropicServer(SCRIPT) as server:
        print("process 1 starts the workflow")
        code = run_child("start", folder, server.base_url)
        print(f"process 1 died ({code}); the API has answered {len(server.requests)} model calls")
        print("process 2 launches DBOS, which recovers the workflow")
        run_child("recover", folder, server.base_url)
        print(f"model calls the API answered in all: {len(server.requests)} (4 in the script)")


if __name__ == "__main__":
    if len(sys.argv) == 3:
        asyncio.run(child(sys.argv[1], sys.argv[2]))
    else:
        main()

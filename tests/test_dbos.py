"""typedagent.dbos on DBOS with SQLite in a temporary folder: a process SIGKILLed mid-run, recovered by another."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("dbos", reason="the dbos extra is not installed (pip install 'typedagent[dbos]')")

from pydantic import BaseModel

from typedagent.testing import FakeAnthropicServer, output_call, tool_call

APP = Path(__file__).parent / "durable" / "dbos_app.py"


class Triage(BaseModel):
    label: str
    urgent: bool


TRIAGE = Triage(label="network", urgent=True)


def four_calls() -> list[object]:
    return [
        tool_call("lookup", {"key": "plan"}),
        tool_call("checkpoint", {"note": "halfway"}),
        tool_call("lookup", {"key": "region"}),
        output_call(TRIAGE),
    ]


def app(
    mode: str, tmp_path: Path, base_url: str, *extra: str, die: bool = False, workflow_id: str = "triage-1"
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "test"}
    env["DURABLE_TOOL_LOG"] = str(tmp_path / "tools.log")
    if die:
        env["DURABLE_DIE_IN_CHECKPOINT"] = "1"
    return subprocess.run(
        [sys.executable, str(APP), mode, str(tmp_path), workflow_id, *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_a_killed_process_is_recovered_by_dbos_launch_repeating_no_model_call(tmp_path: Path) -> None:
    """The process dies (SIGKILL) in the tool after the 2nd model call; DBOS.launch() in a new one finishes the run.

    The fake server sees each of the four calls exactly once; the completed lookup is not run again; only the
    checkpoint that was running when the process died runs twice; the metadata equals an uninterrupted run's.
    """
    with FakeAnthropicServer(four_calls()) as server, FakeAnthropicServer(four_calls()) as baseline_server:
        started = app("start", tmp_path, server.base_url, die=True)
        assert started.returncode == -9, started.stderr
        assert len(server.requests) == 2
        recovered = app("recover", tmp_path, server.base_url, baseline_server.base_url)
        assert recovered.returncode == 0, recovered.stderr
    assert len(server.requests) == 4
    assert [len(request["messages"]) for request in server.requests] == [1, 3, 5, 7]
    assert len(baseline_server.requests) == 4
    durable, baseline = (json.loads(line) for line in recovered.stdout.splitlines())
    assert durable["output"] == TRIAGE.model_dump()
    assert durable == baseline
    assert durable["iterations"] == 4
    runs = [line.split() for line in (tmp_path / "tools.log").read_text().splitlines()]
    pids = [pid for _, pid in runs]
    assert [tool for tool, _ in runs[:4]] == [
        "lookup:plan",
        "checkpoint:halfway",
        "checkpoint:halfway",
        "lookup:region",
    ]
    # The first two ran in the process that died, the rest in the one that recovered the workflow.
    assert pids[0] == pids[1] != pids[2] == pids[3]
    # Then the baseline run, in the recovering process.
    assert [tool for tool, _ in runs[4:]] == ["lookup:plan", "checkpoint:halfway", "lookup:region"]


def test_a_run_that_waits_for_decisions_survives_a_kill_and_goes_on_after_send_decisions(tmp_path: Path) -> None:
    """The run pauses for approval and waits (DBOS.recv); the process is killed (SIGKILL) while it waits.

    The run's on_pause callback publishes the pending call ids (DBOS.set_event). A new process recovers the run
    with DBOS.launch(), reads those ids (DBOS.get_event) and sends decisions with send_decisions: a wrong one first
    (dropped, with a warning), then an approval with edited arguments. The model is called once per step; the
    refund runs once, in the new process, with the edited arguments.
    """
    script = [tool_call("refund", {"amount": 30}, id="toolu_refund"), output_call(TRIAGE)]
    with FakeAnthropicServer(script) as server:
        env = {**os.environ, "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "test"}
        env["DURABLE_TOOL_LOG"] = str(tmp_path / "tools.log")
        command = [sys.executable, str(APP), "wait", str(tmp_path), "refund-1"]
        with subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True) as waiting:
            try:
                for _ in range(600):
                    if server.requests or waiting.poll() is not None:
                        break
                    time.sleep(0.05)
                time.sleep(1.5)  # the run reaches DBOS.recv and waits there
                assert waiting.poll() is None, waiting.stderr.read() if waiting.stderr else ""
            finally:
                waiting.kill()
        assert len(server.requests) == 1
        assert not (tmp_path / "tools.log").exists()
        decided = app("decide", tmp_path, server.base_url, workflow_id="refund-1")
        assert decided.returncode == 0, decided.stderr
    assert len(server.requests) == 2
    last = server.requests[1]["messages"][-1]["content"]
    assert [(b["tool_use_id"], b["content"]) for b in last] == [("toolu_refund", "refunded 25")]
    published, summary = (json.loads(line) for line in decided.stdout.splitlines())
    # The approver learnt what waits from the run itself: on_pause published it with DBOS.set_event.
    assert published == {"pending": ["toolu_refund"]}
    assert summary["output"] == TRIAGE.model_dump()
    assert summary["iterations"] == 2
    [(tool, pid)] = [line.rsplit(" ", 1) for line in (tmp_path / "tools.log").read_text().splitlines()]
    # The recovered run of an agent without deps still gives its tools ctx.deps None (not the "not passed" marker).
    assert tool == "refund:25:deps=None"
    assert pid != str(waiting.pid)
    assert "'toolu_other', which the paused execution does not wait on, was dropped" in decided.stderr
    assert "'toolu_refund' (refund) waits for approval" in decided.stderr

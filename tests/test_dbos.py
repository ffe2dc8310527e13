"""typedagent.dbos on DBOS with SQLite in a temporary folder: a process SIGKILLed mid-run, recovered by another."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


def app(mode: str, tmp_path: Path, base_url: str, *extra: str, die: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "test"}
    env["DURABLE_TOOL_LOG"] = str(tmp_path / "tools.log")
    if die:
        env["DURABLE_DIE_IN_CHECKPOINT"] = "1"
    return subprocess.run(
        [sys.executable, str(APP), mode, str(tmp_path), "triage-1", *extra],
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

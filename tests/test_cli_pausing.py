"""``typedagent run`` that pauses (state file, exit 3), ``run --approve`` on the terminal, and ``typedagent resume``."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from typedagent.__main__ import main

TYPEDAGENT = Path(sys.executable).with_name("typedagent")

MODULE = '''
from pydantic import BaseModel
from typedagent import OutputTool, define_agent, tool
from typedagent.testing import ScriptedClient, output_call, response, tool_call


class Report(BaseModel):
    summary: str


@tool(requires_approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


agent = define_agent(name="cleaner", model="claude-sonnet-4-6", output=OutputTool(Report), helpers=[delete_file])
other = define_agent(name="cleaner", model="claude-opus-4-6", output=OutputTool(Report), helpers=[delete_file])


def scripted_client() -> ScriptedClient:
    return ScriptedClient(
        [
            tool_call("delete_file", {"path": "/tmp/a"}),
            tool_call("delete_file", {"path": "/tmp/b"}),
            output_call(Report(summary="cleaned")),
        ]
    )
'''

ASKING = '''
from app import Report, delete_file
from typedagent import OutputTool, define_agent, tool
from typedagent.testing import ScriptedClient, output_call, response, tool_call


@tool(external=True)
def ask_owner(question: str) -> str:
    """Ask the file's owner."""
    ...


asking = define_agent(
    name="asker", model="claude-sonnet-4-6", output=OutputTool(Report), helpers=[delete_file, ask_owner]
)


def scripted_client() -> ScriptedClient:
    return ScriptedClient(
        [
            tool_call("delete_file", {"path": "/tmp/a"}),
            response(tool_call("delete_file", {"path": "/tmp/b"}), tool_call("ask_owner", {"question": "ok?"})),
            output_call(Report(summary="cleaned")),
        ]
    )
'''


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(MODULE)
    (tmp_path / "ask.py").write_text(ASKING)
    return tmp_path


def cli(folder: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    return subprocess.run(
        [str(TYPEDAGENT), *args],
        capture_output=True,
        text=True,
        env=clean,
        cwd=folder,
        input=stdin,
        timeout=120,
        check=False,
    )


def _paused(folder: Path, *extra: str) -> dict[str, Any]:
    done = cli(folder, "run", "app.py:agent", "Clean up", "--scripted", "--state-file", "state.json", *extra)
    assert done.returncode == 3, done.stderr
    return json.loads(done.stdout)


def test_cli_pausing_run_writes_the_state_and_says_how_to_resume(folder: Path) -> None:
    """A run that pauses exits 3: its state in a file only its owner reads, the pending calls as JSON on stdout."""
    done = cli(folder, "run", "app.py:agent", "Clean up", "--scripted")
    assert done.returncode == 3, done.stderr
    document = json.loads(done.stdout)
    assert document["status"] == "paused"
    assert document["pending"] == [
        {"id": "toolu_01_001", "name": "delete_file", "input": {"path": "/tmp/a"}, "kind": "approval"}
    ]
    path = folder / document["state_file"]
    assert path.name.startswith("cleaner-")
    assert path.name.endswith(".paused.json")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["format"] == "typedagent.paused_state"
    assert "⏸ paused: waiting on 1 call" in done.stderr
    assert f"typedagent resume app.py:agent {document['state_file']} --approve-all" in done.stderr
    assert 'where decisions.json holds {"toolu_01_001": {"approve": true}}' in done.stderr


def test_cli_pausing_resume_approve_all_runs_on_and_pauses_again_over_the_same_file(folder: Path) -> None:
    """``resume --approve-all``: the run goes on; when it pauses again, the new state replaces the old one."""
    _paused(folder)
    before = json.loads((folder / "state.json").read_text())
    again = cli(folder, "resume", "app.py:agent", "state.json", "--approve-all", "--scripted")
    assert again.returncode == 3, again.stderr
    assert "▶ resumed after pause 1, deciding delete_file (approval)" in again.stderr
    after = json.loads((folder / "state.json").read_text())
    assert (after["id"], after["pauses"]) == (before["id"], 2)
    assert [call["name"] for call in json.loads(again.stdout)["pending"]] == ["delete_file"]
    done = cli(folder, "resume", "app.py:agent", "state.json", "--approve-all", "--scripted")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"summary": "cleaned"}


def test_cli_pausing_resume_deny_all_sends_the_reason(folder: Path) -> None:
    """``resume --deny-all --reason``: the model reads the reason as the tool's error."""
    _paused(folder)
    done = cli(
        folder,
        "resume",
        "app.py:agent",
        "state.json",
        "--deny-all",
        "--reason",
        "not today",
        "--scripted",
        "--json-events",
    )
    assert done.returncode == 3, done.stderr
    events = [json.loads(line) for line in done.stderr.splitlines()]
    results = [event for event in events if event["event"] == "tool_result"]
    assert (results[0]["name"], results[0]["content"], results[0]["is_error"]) == (
        "delete_file",
        "Error: not today",
        True,
    )
    assert [event["event"] for event in events][-3:] == ["pause", "end", "paused"]
    assert events[-2]["status"] == "paused"


def test_cli_pausing_resume_with_a_decisions_file(folder: Path) -> None:
    """``--decisions FILE``: a decision per call id, an external tool's result among them."""
    first = cli(folder, "run", "ask.py:asking", "Clean up", "--scripted", "--state-file", "s.json")
    assert first.returncode == 3, first.stderr
    (call,) = json.loads(first.stdout)["pending"]
    (folder / "d1.json").write_text(json.dumps({call["id"]: {"approve": True, "input": {"path": "/tmp/z"}}}))
    second = cli(folder, "resume", "ask.py:asking", "s.json", "--decisions", "d1.json", "--scripted", "--json-events")
    assert second.returncode == 3, second.stderr
    events = [json.loads(line) for line in second.stderr.splitlines()]
    assert any(e["event"] == "tool_result" and e["content"] == "deleted /tmp/z" for e in events)
    pending = json.loads(second.stdout)["pending"]
    assert [(c["name"], c["kind"]) for c in pending] == [("delete_file", "approval"), ("ask_owner", "external")]
    decisions = {pending[0]["id"]: {"deny": "no"}, pending[1]["id"]: {"result": "fine by me"}}
    (folder / "d2.json").write_text(json.dumps(decisions))
    done = cli(folder, "resume", "ask.py:asking", "s.json", "--decisions", "d2.json", "--scripted")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"summary": "cleaned"}


@pytest.mark.parametrize(
    ("answers", "shown"),
    [
        ("y\ny\n", "✓ delete_file"),
        ("maybe\nn\nnot that one\ny\n", "Error: not that one"),
        ("", "No answer came from the terminal"),
    ],
)
def test_cli_pausing_run_approve_asks_on_the_terminal(folder: Path, answers: str, shown: str) -> None:
    """``run --approve``: each call is shown with its arguments; y runs it, n asks a reason; no answer denies."""
    done = cli(folder, "run", "app.py:agent", "Clean up", "--scripted", "--approve", stdin=answers)
    assert done.returncode == 0, done.stderr
    assert "? delete_file wants to run, with:" in done.stderr
    assert '"path": "/tmp/a"' in done.stderr
    assert "Approve this call? [y/n]" in done.stderr
    assert shown in done.stderr
    assert json.loads(done.stdout) == {"summary": "cleaned"}


def test_cli_pausing_run_approve_with_json_events_asks_with_a_json_line(folder: Path) -> None:
    """With ``--json-events`` the question is a JSON object too (``approval_request``)."""
    done = cli(folder, "run", "app.py:agent", "x", "--scripted", "--approve", "--json-events", stdin="y\ny\n")
    assert done.returncode == 0, done.stderr
    requests = [json.loads(line) for line in done.stderr.splitlines() if '"approval_request"' in line]
    assert [(r["name"], r["input"]) for r in requests] == [
        ("delete_file", {"path": "/tmp/a"}),
        ("delete_file", {"path": "/tmp/b"}),
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["resume", "app.py:agent", "missing.json", "--approve-all"], "cannot read the state file missing.json"),
        (["resume", "app.py:agent", "bad.json", "--approve-all"], "bad.json: not a paused execution's state"),
        (["resume", "app.py:other", "state.json", "--approve-all"], "the model changed from 'claude-sonnet-4-6'"),
        (["resume", "app.py:agent", "state.json", "--approve-all", "--reason", "x"], "--reason goes with --deny-all"),
        (
            ["resume", "app.py:agent", "state.json", "--decisions", "unknown.json"],
            "which the paused execution does not",
        ),
        (
            ["resume", "app.py:agent", "state.json", "--decisions", "shape.json"],
            "decision 'toolu_01_001' must be one of",
        ),
        (["resume", "app.py:agent", "state.json", "--decisions", "bad.json"], "is not JSON"),
        (["resume", "app.py:agent", "state.json", "--decisions", "list.json"], "must hold a JSON object"),
        (["resume", "app.py:agent", "state.json"], "one of the arguments --approve-all --deny-all --decisions"),
        (["run", "app.py:agent", "-", "--approve"], "--approve reads your answers from stdin"),
    ],
)
def test_cli_pausing_usage_errors_exit_2(
    folder: Path, args: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing or damaged state, a state of another agent, wrong decisions: exit 2 with one line (in-process)."""
    monkeypatch.chdir(folder)
    out, err = io.StringIO(), io.StringIO()
    assert main(["run", "app.py:agent", "x", "--scripted", "--state-file", "state.json"], stdout=out, stderr=err) == 3
    (folder / "bad.json").write_text("{not json")
    (folder / "unknown.json").write_text(json.dumps({"toolu_99": {"approve": True}}))
    (folder / "shape.json").write_text(json.dumps({"toolu_01_001": {"maybe": True}}))
    (folder / "list.json").write_text("[]")
    err = io.StringIO()
    assert main([*args, "--scripted"], stdout=io.StringIO(), stderr=err, stdin=io.StringIO("")) == 2
    last = err.getvalue().strip().splitlines()[-1]
    assert last.startswith("typedagent ")
    assert message in last


def test_cli_pausing_approve_all_cannot_answer_an_external_call(folder: Path) -> None:
    """``--approve-all`` / ``--deny-all`` decide approval calls only: an external call needs ``--decisions``."""
    first = cli(folder, "run", "ask.py:asking", "x", "--scripted", "--state-file", "s.json")
    call_id = json.loads(first.stdout)["pending"][0]["id"]
    (folder / "d.json").write_text(json.dumps({call_id: {"approve": True}}))
    assert cli(folder, "resume", "ask.py:asking", "s.json", "--decisions", "d.json", "--scripted").returncode == 3
    done = cli(folder, "resume", "ask.py:asking", "s.json", "--approve-all", "--scripted")
    assert done.returncode == 2
    assert "the run also waits on external tool calls" in done.stderr
    assert '{"CALL_ID": {"result": ...}}' in done.stderr


def test_cli_pausing_batch_refuses_an_agent_whose_tools_wait(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``typedagent batch`` cannot pause: an agent with tools that wait is a usage error before anything runs."""
    monkeypatch.chdir(folder)
    (folder / "inputs.jsonl").write_text('"Clean up"\n')
    err = io.StringIO()
    assert main(["batch", "app.py:agent", "inputs.jsonl", "-o", "out.jsonl"], stdout=io.StringIO(), stderr=err) == 2
    assert "has tools that need approval ('delete_file')" in err.getvalue()
    assert "typedagent batch cannot pause" in err.getvalue()
    assert not (folder / "out.jsonl").exists()


def test_cli_pausing_state_that_cannot_be_written_goes_to_stdout(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``--state-file`` that cannot be written loses nothing: the state is in the JSON on stdout, and it resumes."""
    monkeypatch.chdir(folder)
    out, err = io.StringIO(), io.StringIO()
    args = ["run", "app.py:agent", "x", "--scripted", "--state-file", "no/such/folder/state.json"]
    assert main(args, stdout=out, stderr=err) == 3
    assert "cannot write the state to no/such/folder/state.json" in err.getvalue()
    document = json.loads(out.getvalue())
    assert document["state_file"] is None
    (folder / "saved.json").write_text(json.dumps(document["state"]))
    resumed = io.StringIO()
    argv = ["resume", "app.py:agent", "saved.json", "--approve-all", "--scripted"]
    assert main(argv, stdout=resumed, stderr=io.StringIO()) == 3  # the script's second call waits too
    assert json.loads(resumed.getvalue())["state_file"] == "saved.json"


def test_cli_pausing_resume_of_a_module_that_fails_to_import(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``resume`` of an agent whose module raises on import, or with an unreadable decisions file: exit 2."""
    monkeypatch.chdir(folder)
    (folder / "broken.py").write_text("raise RuntimeError('no database')\n")
    err = io.StringIO()
    assert main(["resume", "broken.py:agent", "s.json", "--approve-all"], stdout=io.StringIO(), stderr=err) == 2
    assert "importing broken.py failed: RuntimeError: no database" in err.getvalue()
    assert main(["run", "app.py:agent", "x", "--scripted", "--state-file", "s.json"], stdout=io.StringIO()) == 3
    (folder / "folder.json").mkdir()
    err = io.StringIO()
    argv = ["resume", "app.py:agent", "s.json", "--decisions", "folder.json", "--scripted"]
    assert main(argv, stdout=io.StringIO(), stderr=err) == 2
    assert "cannot read --decisions folder.json" in err.getvalue()

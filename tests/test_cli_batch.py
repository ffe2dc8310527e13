"""``typedagent batch``, driven as a user drives it: the console script in a subprocess against a fake API."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from typedagent import ExecuteFailure, ManyResult, TokenUsage
from typedagent._cli._batch_view import BatchStats, BatchView, RichView, make_view
from typedagent.testing import FakeAnthropicServer, ServerRateLimits, output_call

TYPEDAGENT = Path(sys.executable).with_name("typedagent")

AGENTS = """
from dataclasses import dataclass
from pydantic import BaseModel
from typedagent import OutputRejected, OutputTool, RunContext, ValidationConfig, define_agent

class Ticket(BaseModel):
    severity: int
    summary: str

@dataclass
class Case:
    fail: bool = False

def check(out: Ticket, ctx: RunContext[Case]) -> None:
    if ctx.deps.fail:
        raise OutputRejected("rejected on purpose")

agent = define_agent(name="tickets", model="claude-sonnet-4-6", output=OutputTool(Ticket), validators=[check],
                     deps_type=Case, validation=ValidationConfig(max_attempts=2))
plain = define_agent(name="plain", model="claude-sonnet-4-6", output=OutputTool(Ticket))
"""
ANSWER = output_call({"severity": 2, "summary": "VPN drops"})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "agents.py").write_text(textwrap.dedent(AGENTS))
    return tmp_path


@pytest.fixture
def api() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer([ANSWER, ANSWER], per_conversation=True, latency_ms=20) as server:
        yield server


def write_inputs(path: Path, count: int, failing: set[int] = frozenset()) -> Path:  # type: ignore[assignment]
    with path.open("w") as file:
        for i in range(count):
            file.write(json.dumps({"prompt": f"ticket {i}", "deps": {"fail": i in failing}}) + "\n")
            if i == 2:
                file.write("\n")  # blank lines are skipped
    return path


def env_for(server: FakeAnthropicServer | None) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    if server is None:
        return clean
    return {**clean, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.base_url}


def batch(project: Path, *args: str, server: FakeAnthropicServer | None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TYPEDAGENT), "batch", *args],
        capture_output=True,
        text=True,
        env=env_for(server),
        cwd=project,
        timeout=120,
        check=False,
    )


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_cli_batch_runs_every_input_and_summarises_failures(project: Path, api: FakeAnthropicServer) -> None:
    """Results go to the output file; stderr ends with the figures and a table by error code; exit 1 on failures."""
    inputs = write_inputs(project / "inputs.jsonl", 12, failing={3, 7})
    done = batch(project, "agents.py:agent", "inputs.jsonl", "-o", "out.jsonl", "-c", "4", server=api)
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0] == "▶ agents.py:agent · 12 inputs → out.jsonl"
    # (a slow machine may add plain progress lines in between, one every 10 s)
    assert lines[-4].startswith("12/12 done · 2 failed · ")
    # The cost of every input, as journaled, summed (four decimals below a dollar).
    cost = sum(json.loads(line)["cost_usd"] for line in (project / "out.jsonl").read_text().splitlines())
    assert 0 < cost < 1
    assert f" tokens · cost ${cost:.4f} · ETA 0:00" in lines[-4]
    assert lines[-3:] == [
        "error code         inputs  first key",
        f"VALIDATION_FAILED       2  {lines[-2].split()[-1]}",
        "10 succeeded, 2 failed · results in out.jsonl",
    ]
    assert lines[-2].split()[-1] in ("#3", "#7")
    saved = {record["key"]: record for record in records(project / "out.jsonl")}
    assert sorted(saved) == sorted(f"#{i}" for i in range(12))
    assert {key for key, record in saved.items() if record["outcome"] == "VALIDATION_FAILED"} == {"#3", "#7"}
    assert saved["#0"]["output"] == {"severity": 2, "summary": "VPN drops"}
    assert inputs.exists()

    again = batch(project, "agents.py:agent", "inputs.jsonl", "-o", "out.jsonl", server=api)
    assert again.returncode == 1
    assert again.stderr.splitlines()[0] == (
        "▶ agents.py:agent · 12 inputs → out.jsonl · 12 already in out.jsonl, read back"
    )
    assert "10 succeeded, 2 failed" in again.stderr
    assert len(records(project / "out.jsonl")) == 12


def test_cli_batch_exits_0_when_every_input_succeeds(project: Path, api: FakeAnthropicServer) -> None:
    """Plain prompt lines work for agents without deps; every success is exit status 0."""
    (project / "prompts.jsonl").write_text('"first ticket"\n{"prompt": "second", "key": "two"}\n')
    done = batch(project, "agents.py:plain", "prompts.jsonl", "-o", "out.jsonl", server=api)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "2 succeeded, 0 failed · results in out.jsonl"
    assert sorted(record["key"] for record in records(project / "out.jsonl")) == ["#0", "two"]


def test_cli_batch_paced_by_the_rate_limit(project: Path) -> None:
    """Against a rate-limited API every input still succeeds: the limiter waits instead of failing."""
    limits = ServerRateLimits(requests_per_minute=600, capacity_s=1)
    with FakeAnthropicServer([ANSWER], per_conversation=True, rate_limits=limits) as server:
        write_inputs(project / "inputs.jsonl", 20)
        done = batch(project, "agents.py:agent", "inputs.jsonl", "-o", "out.jsonl", "-c", "20", server=server)
    assert done.returncode == 0, done.stderr
    assert server.rate_limited <= 2
    assert len(records(project / "out.jsonl")) == 20


def test_cli_batch_ctrl_c_keeps_everything_finished_and_resumes(project: Path) -> None:
    """Ctrl-C stops cleanly (exit 130) keeping every finished result; the same command then finishes the rest."""
    write_inputs(project / "inputs.jsonl", 200)
    output = project / "out.jsonl"
    with FakeAnthropicServer([ANSWER], per_conversation=True, latency_ms=150) as server:
        process = subprocess.Popen(
            [str(TYPEDAGENT), "batch", "agents.py:agent", "inputs.jsonl", "-o", "out.jsonl", "-c", "4"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env_for(server),
            cwd=project,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not output.exists() or output.read_bytes().count(b"\n") < 5):
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 130, stderr
        assert "stopping: no new input starts" in stderr
        kept = len(records(output))
        assert 5 <= kept < 200
        assert f"interrupted: {kept} results are in out.jsonl;" in stderr
        assert stderr.rstrip().endswith("Run the same command again to resume.")

        resumed = batch(project, "agents.py:agent", "inputs.jsonl", "-o", "out.jsonl", "-c", "16", server=server)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{kept} already in out.jsonl, read back" in resumed.stderr
    keys = [record["key"] for record in records(output)]
    assert sorted(keys) == sorted(f"#{i}" for i in range(200))


@pytest.mark.parametrize(
    ("lines", "args", "message"),
    [
        ('{"prompt": "a", "deps": {}}\nnot json\n', [], "inputs.jsonl:2 is not JSON (Expecting value)"),
        ("[1]\n", [], 'inputs.jsonl:1: expected a prompt string or an object with "prompt", got list'),
        ('{"promt": "a"}\n', [], 'inputs.jsonl:1: unknown field(s) promt (allowed: "prompt", "deps", "key")'),
        ('{"prompt": ""}\n', [], 'inputs.jsonl:1: "prompt" must be a non-empty string'),
        ('{"prompt": "a", "key": 5}\n', [], 'inputs.jsonl:1: "key" must be a non-empty string'),
        ('{"prompt": "a"}\n', [], "inputs.jsonl:1: agent 'tickets' needs \"deps\" (Case)"),
        ('{"prompt": "a", "deps": {"fail": "maybe"}}\n', [], 'inputs.jsonl:1: "deps" does not fit Case: fail:'),
        ('{"prompt": "a", "deps": {}}\n', ["--target", "agents.py:plain"], "declares no deps_type"),
    ],
)
def test_cli_batch_bad_inputs_are_usage_errors_before_any_call(
    project: Path, monkeypatch: pytest.MonkeyPatch, lines: str, args: list[str], message: str
) -> None:
    """Every line is checked first: a bad one is reported with its line number, exit 2, nothing sent."""
    from typedagent.__main__ import main

    (project / "inputs.jsonl").write_text(lines)
    monkeypatch.chdir(project)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # nothing may be sent
    target = args[1] if args else "agents.py:agent"
    out, err = io.StringIO(), io.StringIO()
    assert main(["batch", target, "inputs.jsonl", "-o", "out.jsonl"], stdout=out, stderr=err) == 2
    assert message in err.getvalue()
    assert err.getvalue().startswith("typedagent batch: error: ")
    assert not (project / "out.jsonl").exists()


def test_cli_batch_other_usage_errors(project: Path, api: FakeAnthropicServer) -> None:
    """No key, a missing inputs file, and a results file of another agent are one-line usage errors."""
    write_inputs(project / "inputs.jsonl", 1)
    no_key = batch(project, "agents.py:agent", "inputs.jsonl", "-o", "out.jsonl", server=None)
    assert (no_key.returncode, no_key.stderr) == (
        2,
        "typedagent batch: error: ANTHROPIC_API_KEY is not set: export it to run the batch against the API, or "
        "answer from the module's scripted_client() with --scripted\n",
    )
    missing = batch(project, "agents.py:agent", "nope.jsonl", "-o", "out.jsonl", server=api)
    assert missing.returncode == 2
    assert "cannot read nope.jsonl: No such file or directory" in missing.stderr
    (project / "theirs.jsonl").write_text('{"key": "#0", "agent": "someone_else"}\n')
    foreign = batch(project, "agents.py:agent", "inputs.jsonl", "-o", "theirs.jsonl", server=api)
    assert foreign.returncode == 2
    assert "--output: theirs.jsonl holds results of agent 'someone_else', not 'tickets'" in foreign.stderr
    bad_agent = batch(project, "agents.py:nothing", "inputs.jsonl", "-o", "out.jsonl", server=api)
    assert bad_agent.returncode == 2
    assert api.requests_served == 0


def test_cli_batch_notes_a_torn_last_line(project: Path, api: FakeAnthropicServer) -> None:
    """A results file whose last line was cut by a crash is repaired, and says so."""
    write_inputs(project / "inputs.jsonl", 2)
    (project / "out.jsonl").write_text('{"key": "#0", "agent": "tick')
    done = batch(project, "agents.py:agent", "inputs.jsonl", "-o", "out.jsonl", server=api)
    assert done.returncode == 0, done.stderr
    assert "cut off a torn last line (28 bytes) left in out.jsonl by an interrupted write" in done.stderr
    assert sorted(record["key"] for record in records(project / "out.jsonl")) == ["#0", "#1"]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_cli_batch_view_on_a_terminal_shows_a_live_bar() -> None:
    """On a terminal: a rich bar with done, failed, rate, tokens, cost and ETA; the summary as a table."""
    from typedagent import AgentError, AgentErrorCode, ApiErrorContext, ExecuteSuccess, ExecutionMetadata

    stream = Terminal()
    stats = BatchStats(total=4)
    view = make_view(stream, stats)
    assert isinstance(view, RichView)
    view.start("agents.py:agent", "out.jsonl", resumed_from=1)
    meta = ExecutionMetadata(
        model="m", tokens=TokenUsage(input_tokens=1_000, output_tokens=234), attempts=(), iterations=1,
        latency_ms=1.0, callback_errors=(), messages=[],
    )  # fmt: skip
    context = ApiErrorContext(status_code=529, error_type="overloaded_error", request_id=None, attempt=1, iteration=1)
    failure = ExecuteFailure(
        error=AgentError(code=AgentErrorCode.API_ERROR, message="m", context=context), metadata=meta
    )
    stats.add(ManyResult(index=0, key="#0", result=ExecuteSuccess(output=None, metadata=meta), resumed=True))
    stats.add(ManyResult(index=1, key="#1", result=ExecuteSuccess(output=None, metadata=meta)))
    stats.add(ManyResult(index=2, key="k2", result=failure))
    view.update()
    view.note("a note")
    view.stop()
    view.summary("out.jsonl", interrupted=False)
    text = stream.getvalue()
    assert "▶ agents.py:agent · 4 inputs → out.jsonl · 1 already in out.jsonl, read back" in text
    assert "3/4 · 1 failed · " in text
    assert "/s · 2,468 tokens · n/a · ETA " in text
    assert "failed inputs by error code" in text
    assert "API_ERROR" in text
    assert "k2" in text
    assert "2 succeeded, 1 failed · results in out.jsonl" in text


def test_cli_batch_plain_view_writes_a_line_every_few_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a pipe, progress is a plain line at most every PLAIN_EVERY_S seconds."""
    from typedagent._cli import _batch_view

    stream = io.StringIO()
    stats = BatchStats(total=None)
    view = make_view(stream, stats)
    assert type(view) is BatchView
    view.update()
    assert stream.getvalue() == ""
    monkeypatch.setattr(_batch_view, "PLAIN_EVERY_S", 0.0)
    view.update()
    assert stream.getvalue().startswith("0 done · 0 failed · 0.0/s · 0 tokens · cost $0.00 · ETA -")


def test_cli_batch_second_ctrl_c_quits_without_waiting(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second Ctrl-C gives up waiting for executions in flight: exit 130, finished results kept."""
    import threading

    from typedagent.__main__ import main
    from typedagent.testing import delay

    write_inputs(project / "inputs.jsonl", 3)
    presses: list[str] = []
    note = BatchView.note

    def note_then_press_again(view: BatchView, text: str) -> None:
        note(view, text)
        presses.append(text)
        if text.startswith("stopping:"):
            os.kill(os.getpid(), signal.SIGINT)  # the second Ctrl-C, while the first is being handled

    monkeypatch.setattr(BatchView, "note", note_then_press_again)
    with FakeAnthropicServer([delay(30, ANSWER)], per_conversation=True) as server:
        monkeypatch.chdir(project)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)

        def press_ctrl_c() -> None:
            deadline = time.monotonic() + 30
            while server.requests_served < 1 and time.monotonic() < deadline:  # the first call goes alone
                time.sleep(0.01)
            os.kill(os.getpid(), signal.SIGINT)

        presser = threading.Thread(target=press_ctrl_c)
        presser.start()
        err = io.StringIO()
        started = time.monotonic()
        status = main(["batch", "agents.py:agent", "inputs.jsonl", "-o", "out.jsonl", "-c", "3"], stderr=err)
        presser.join()
    assert status == 130
    assert time.monotonic() - started < 20
    assert presses == [
        "stopping: no new input starts; executions in flight are being stopped (Ctrl-C again to quit now)"
    ]
    assert "interrupted: 0 results are in out.jsonl" in err.getvalue()
    assert (project / "out.jsonl").read_text() == ""


def test_cli_batch_max_attempts_and_an_unwritable_output(project: Path, api: FakeAnthropicServer) -> None:
    """``--max-attempts`` overrides the agent's; an output path that cannot be opened is a usage error."""
    write_inputs(project / "inputs.jsonl", 2, failing={1})
    done = batch(project, "agents.py:agent", "inputs.jsonl", "-o", "out.jsonl", "--max-attempts", "1", server=api)
    assert done.returncode == 1, done.stderr
    failed = [record for record in records(project / "out.jsonl") if record["outcome"] != "success"]
    assert [len(record["attempts"]) for record in failed] == [1]
    (project / "a_directory").mkdir()
    unwritable = batch(project, "agents.py:agent", "inputs.jsonl", "-o", "a_directory", server=api)
    assert unwritable.returncode == 2
    assert "typedagent batch: error: --output: cannot open a_directory: Is a directory" in unwritable.stderr
    broken = batch(project, "agents.py:broken", "inputs.jsonl", "-o", "out.jsonl", server=api)
    assert broken.returncode == 2
    assert "importing agents.py failed" in broken.stderr or "has no attribute 'broken'" in broken.stderr


def test_cli_batch_output_that_is_not_a_regular_file_is_a_usage_error(project: Path, api: FakeAnthropicServer) -> None:
    """`-o` at a FIFO, or /dev/stdout in a pipe, is refused at once (exit 2) instead of blocking forever."""
    write_inputs(project / "inputs.jsonl", 1)
    os.mkfifo(project / "results.fifo")
    fifo = batch(project, "agents.py:agent", "inputs.jsonl", "-o", "results.fifo", server=api)
    assert fifo.returncode == 2
    assert fifo.stderr == (
        "typedagent batch: error: --output: results.fifo is not a regular file (a FIFO): the results must go to a "
        "file that can be read back to resume from; pass a file path\n"
    )
    piped = batch(project, "agents.py:agent", "inputs.jsonl", "-o", "/dev/stdout", server=api)
    assert piped.returncode == 2
    assert "--output: /dev/stdout is not a regular file (a FIFO)" in piped.stderr
    assert piped.stdout == ""
    assert api.requests_served == 0


def test_cli_batch_message_batches_at_half_the_price(project: Path) -> None:
    """``--message-batches`` sends the model calls in a batch; the summary and journal price them at half."""
    (project / "prompts.jsonl").write_text('"first ticket"\n"second ticket"\n')
    with FakeAnthropicServer([ANSWER], per_conversation=True) as server:
        online = batch(project, "agents.py:plain", "prompts.jsonl", "-o", "online.jsonl", server=server)
        batched = batch(
            project, "agents.py:plain", "prompts.jsonl", "-o", "out.jsonl", "--message-batches", server=server
        )
    assert online.returncode == batched.returncode == 0, batched.stderr
    assert server.batches.created == 1
    assert server.batches.submitted == 2
    online_cost = sum(record["cost_usd"] for record in records(project / "online.jsonl"))
    batch_cost = sum(record["cost_usd"] for record in records(project / "out.jsonl"))
    assert batch_cost == pytest.approx(online_cost / 2)
    assert "model calls go in Message Batches" in batched.stderr
    assert f" tokens · cost ${batch_cost:.4f} · ETA 0:00" in batched.stderr
    assert batched.stderr.splitlines()[-1] == "2 succeeded, 0 failed · results in out.jsonl"


def test_cli_batch_over_a_local_ray_cluster(project: Path) -> None:
    """``--ray local`` starts a Ray cluster here and runs the inputs on its workers, journaled as usual."""
    pytest.importorskip("ray", reason="the ray extra is not installed (the dev extra brings it)")
    (project / "prompts.jsonl").write_text('"first ticket"\n"second ticket"\n"third"\n')
    with FakeAnthropicServer([ANSWER], per_conversation=True) as server:
        done = batch(
            project,
            "agents.py:plain",
            "prompts.jsonl",
            "-o",
            "out.jsonl",
            "--ray",
            "local",
            "--workers",
            "1",
            server=server,
        )
    assert done.returncode == 0, done.stderr
    assert "with 1 worker(s)" in done.stderr
    assert done.stderr.splitlines()[-1] == "3 succeeded, 0 failed · results in out.jsonl"
    saved = records(project / "out.jsonl")
    assert sorted(record["key"] for record in saved) == ["#0", "#1", "#2"]
    assert all(record["output"] == {"severity": 2, "summary": "VPN drops"} for record in saved)
    assert len(server.requests) == 3


def _main_batch(project: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    """``typedagent batch`` in-process, from ``project``, with nothing reachable to send to."""
    from typedagent.__main__ import main

    monkeypatch.chdir(project)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # nothing may be sent
    err = io.StringIO()
    return main(["batch", *args], stdout=io.StringIO(), stderr=err), err.getvalue()


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            '{"prompt": "a", "key": "k"}\n"b"\n\n{"prompt": "c", "key": "k"}\n',
            "inputs.jsonl:4: key 'k' is already the key of inputs.jsonl:1: every input needs a key of its own",
        ),
        (
            '{"prompt": "a", "key": "#1"}\n"b"\n',
            "inputs.jsonl:2: its key '#1' (from its position) is already the key of inputs.jsonl:1: every input "
            "needs a key of its own",
        ),
    ],
)
def test_cli_batch_duplicate_keys_are_usage_errors_before_any_call(
    project: Path, monkeypatch: pytest.MonkeyPatch, lines: str, message: str
) -> None:
    """Keys are checked with every line, before the first API call: a duplicate is exit 2 naming both lines."""
    (project / "inputs.jsonl").write_text(lines)
    code, err = _main_batch(project, monkeypatch, "agents.py:plain", "inputs.jsonl", "-o", "out.jsonl")
    assert (code, err) == (2, f"typedagent batch: error: {message}\n")
    assert not (project / "out.jsonl").exists()


def test_cli_batch_line_that_is_not_utf8_is_a_usage_error(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bytes that are not UTF-8 are a usage error naming their line, before any call."""
    (project / "inputs.jsonl").write_bytes(b'"first"\n"caf\xe9"\n')
    code, err = _main_batch(project, monkeypatch, "agents.py:plain", "inputs.jsonl", "-o", "out.jsonl")
    assert (code, err) == (
        2,
        "typedagent batch: error: inputs.jsonl:2 is not UTF-8 text (invalid continuation byte): save the file "
        "as UTF-8\n",
    )


SCRIPTED = """
from typedagent.testing import ScriptedClient, output_call, text

def scripted_client() -> ScriptedClient:
    return ScriptedClient([text("Let me think."), output_call({"severity": 1, "summary": "scripted"})])

def deps() -> Case:
    return Case(fail=False)
"""


def test_cli_batch_scripted_runs_offline(project: Path) -> None:
    """``--scripted`` answers every input from a fresh ``scripted_client()``, with no key; the journal resumes."""
    (project / "agents.py").write_text(textwrap.dedent(AGENTS) + textwrap.dedent(SCRIPTED))
    (project / "inputs.jsonl").write_text('"one"\n{"prompt": "two", "deps": {"fail": true}}\n"three"\n')
    done = batch(project, "agents.py:agent", "inputs.jsonl", "-o", "out.jsonl", "--scripted", server=None)
    assert done.returncode == 1, done.stderr  # "two" is rejected on purpose, twice
    assert "answers from the module's scripted_client(), one input at a time (offline)" in done.stderr
    saved = {record["key"]: record for record in records(project / "out.jsonl")}
    assert {key: record["outcome"] for key, record in saved.items()} == {
        "#0": "success",
        "#1": "VALIDATION_FAILED",
        "#2": "success",
    }
    assert saved["#2"]["output"] == {"severity": 1, "summary": "scripted"}
    assert saved["#0"]["iterations"] == 2  # the script from its start: text, then the output
    again = batch(project, "agents.py:agent", "inputs.jsonl", "-o", "out.jsonl", "--scripted", server=None)
    assert "3 already in out.jsonl, read back" in again.stderr


def test_cli_batch_scripted_usage_errors(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--scripted`` needs a scripted_client(); it runs one input at a time and never on Ray or in batches."""
    (project / "inputs.jsonl").write_text('"one"\n')
    code, err = _main_batch(project, monkeypatch, "agents.py:plain", "inputs.jsonl", "-o", "out.jsonl", "--scripted")
    assert code == 2
    assert err.startswith(
        "typedagent batch: error: --scripted: the module of agents.py:plain defines no scripted_client()"
    )
    code, err = _main_batch(
        project, monkeypatch, "agents.py:plain", "inputs.jsonl", "-o", "out.jsonl", "--scripted", "-c", "4"
    )
    assert (code, err) == (
        2,
        "typedagent batch: error: --scripted runs one input at a time, each on a fresh scripted_client(): "
        "leave out -c\n",
    )
    code, err = _main_batch(
        project, monkeypatch, "agents.py:plain", "inputs.jsonl", "-o", "out.jsonl", "--scripted", "--ray", "local"
    )
    assert code == 2
    assert "--scripted answers from the module's scripted_client() in this process: it cannot run on Ray" in err


def test_cli_batch_on_a_results_file_another_run_holds(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second ``typedagent batch`` on a results file in use stops before any call, saying so (exit 2)."""
    import asyncio

    from typedagent._many.journal import Journal

    (project / "inputs.jsonl").write_text('"one"\n')
    holder = Journal.open(project / "out.jsonl", _plain_agent(project, monkeypatch))
    try:
        code, err = _main_batch(project, monkeypatch, "agents.py:plain", "inputs.jsonl", "-o", "out.jsonl")
    finally:
        asyncio.run(holder.close())
    assert (code, err) == (
        2,
        "typedagent batch: error: --output: out.jsonl is in use by another run (it holds the journal's lock, in "
        "this process or another): wait for it to finish, or use another journal file.\n",
    )


def _plain_agent(project: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    from typedagent._agent.locate import load_agent

    monkeypatch.chdir(project)
    return load_agent("agents.py:plain").agent


def test_cli_batch_scripted_client_that_runs_out(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scripted client whose script runs out is reported on one line, exit 1, never a traceback."""
    (project / "agents.py").write_text(
        textwrap.dedent(AGENTS) + "\nfrom typedagent.testing import ScriptedClient\n"
        "\ndef scripted_client() -> ScriptedClient:\n    return ScriptedClient([])\n"
    )
    (project / "inputs.jsonl").write_text('"one"\n')
    code, err = _main_batch(project, monkeypatch, "agents.py:plain", "inputs.jsonl", "-o", "out.jsonl", "--scripted")
    assert code == 1
    assert err.splitlines()[-1].startswith(
        "typedagent batch: error: ScriptError: ScriptedClient: request 1 arrived but the script has only 0 item(s)."
    )

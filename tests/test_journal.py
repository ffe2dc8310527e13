"""The journal of ``execute_many``: every finished execution on disk before it is reported; resume reads them back."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support import GOOD, Triage, triage_agent

from typedagent import (
    AgentErrorCode,
    ApiErrorContext,
    AttemptErrorsContext,
    JournalError,
    ManyResult,
    OutputTool,
    RunInput,
    define_agent,
    execute_many,
)
from typedagent.testing import FakeAnthropicServer, FunctionClient, api_error, output_call, text

ROOT = Path(__file__).resolve().parent.parent


def model(request: dict[str, Any]) -> Any:
    """Answers ``ok N`` with a valid output, ``bad N`` with text (the attempt fails), ``down`` with a 500."""
    prompt = request["messages"][0]["content"]
    if prompt.startswith("down"):
        return api_error(500, "the model is down")
    if prompt.startswith("bad"):
        return text("no tool call")
    return output_call(Triage(severity=3, summary=prompt))


async def run(inputs: list[Any], journal: Path, **kwargs: Any) -> list[ManyResult[Triage]]:
    stream = execute_many(triage_agent(), inputs, client=FunctionClient(model), journal=journal, **kwargs)
    return sorted([result async for result in stream], key=lambda r: r.index)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_journal_records_each_finished_execution(tmp_path: Path) -> None:
    """One JSON line per execution: key, outcome, output or error (code, message, context), tokens, cost."""
    journal = tmp_path / "run.jsonl"
    results = await run(["ok 1", RunInput("bad 2", key="b")], journal, rate_limits=None)
    records = {record["key"]: record for record in lines(journal)}
    assert set(records) == {"#0", "b"}
    good, bad = records["#0"], records["b"]
    assert {k: good[k] for k in ("index", "outcome", "output", "error", "tokens", "cost_usd", "agent", "model")} == {
        "index": 0,
        "outcome": "success",
        "output": {"severity": 3, "summary": "ok 1"},
        "error": None,
        "tokens": {
            "input_tokens": 10,
            "output_tokens": 5,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "web_search_requests": 0,
            "web_fetch_requests": 0,
            "cache_creation_1h_input_tokens": 0,
        },
        "cost_usd": next(r.result.metadata.cost_usd for r in results if r.key == "#0"),
        "agent": "triage",
        "model": "claude-sonnet-4-6",
    }
    assert good["cost_usd"] > 0
    assert good["cache_savings_usd"] == 0  # the fake model reports no cache use
    assert good["iterations"] == 1
    assert good["v"] == 1
    assert len(good["input_sha256"]) == 16
    assert bad["outcome"] == "INVALID_RESPONSE"
    assert bad["output"] is None
    assert bad["error"]["code"] == "INVALID_RESPONSE"
    assert bad["error"]["message"] == results[1].result.error.message  # type: ignore[union-attr]
    assert bad["error"]["context"]["type"] == "AttemptErrorsContext"
    assert len(bad["attempts"]) == 3


async def test_journal_resume_skips_finished_keys_and_reads_them_back(tmp_path: Path) -> None:
    """Run again with the same journal: finished inputs are not executed, their results come back whole."""
    journal = tmp_path / "run.jsonl"
    inputs = ["ok 0", "bad 1", RunInput("down", key="api"), "ok 3"]
    first = await run(inputs, journal)
    calls: list[str] = []

    def counting(request: dict[str, Any]) -> Any:
        calls.append(request["messages"][0]["content"])
        return model(request)

    stream = execute_many(triage_agent(), [*inputs, "ok 4"], client=FunctionClient(counting), journal=journal)
    second = sorted([result async for result in stream], key=lambda r: r.index)
    assert calls == ["ok 4"]
    assert [(r.key, r.resumed) for r in second] == [
        ("#0", True),
        ("#1", True),
        ("api", True),
        ("#3", True),
        ("#4", False),
    ]
    for before, after in zip(first, second, strict=False):
        assert after.result.ok == before.result.ok
        assert after.result.metadata.tokens == before.result.metadata.tokens
        assert after.result.metadata.cost_usd == before.result.metadata.cost_usd
        assert after.result.metadata.cache_savings_usd == before.result.metadata.cache_savings_usd
        assert after.result.metadata.attempts == before.result.metadata.attempts
        assert after.result.metadata.messages == []
        if before.result.ok:
            assert after.result.unwrap() == before.result.unwrap()
        else:
            assert after.result.error.code == before.result.error.code  # type: ignore[union-attr]
            assert after.result.error.message == before.result.error.message  # type: ignore[union-attr]
            assert after.result.error.context == before.result.error.context  # type: ignore[union-attr]
    api = second[2].result
    assert not api.ok
    assert isinstance(api.error.context, ApiErrorContext)
    assert api.error.context.status_code == 500
    assert isinstance(second[1].result.error.context, AttemptErrorsContext)  # type: ignore[union-attr]
    assert len(lines(journal)) == 5


async def test_journal_does_not_record_cancelled_executions(tmp_path: Path) -> None:
    """Executions stopped by the abort event were not finished: the next run executes them."""
    journal = tmp_path / "run.jsonl"
    abort = asyncio.Event()

    async def slow_after_first(request: dict[str, Any]) -> Any:
        if request["messages"][0]["content"] != "ok 0":
            await asyncio.sleep(30)
        return model(request)

    inputs = [f"ok {i}" for i in range(5)]
    async for result in execute_many(
        triage_agent(), inputs, client=FunctionClient(slow_after_first), journal=journal, abort_event=abort
    ):
        if result.key == "#0":
            abort.set()
    assert [record["key"] for record in lines(journal)] == ["#0"]
    second = await run(inputs, journal)
    assert [r.resumed for r in second] == [True, False, False, False, False]
    assert sorted(record["key"] for record in lines(journal)) == [f"#{i}" for i in range(5)]


async def test_journal_cuts_a_torn_last_line_and_runs_that_input_again(tmp_path: Path) -> None:
    """A line left half-written by a killed process is dropped; its input runs again; nothing is duplicated."""
    journal = tmp_path / "run.jsonl"
    await run(["ok 0", "ok 1"], journal)
    whole = journal.read_bytes()
    first_line = whole.split(b"\n")[0] + b"\n"
    journal.write_bytes(first_line + whole[len(first_line) : len(first_line) + 40])  # line 2 torn mid-write
    second = await run(["ok 0", "ok 1"], journal)
    assert [r.resumed for r in second] == [True, False]
    assert [record["key"] for record in lines(journal)] == ["#0", "#1"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not json\n{}\n", r"run.jsonl:1 is not JSON"),
        (b'{"no": "key"}\n', r'run.jsonl:1 has no "key"'),
        (b'{"key": "a", "agent": "other"}\n', r"holds results of agent 'other', not 'triage'"),
        (b'{"key": "a", "agent": "triage"}\n{"key": "a", "agent": "triage"}\n', r"key 'a' is journaled twice"),
    ],
)
async def test_journal_that_cannot_be_used_is_an_error(tmp_path: Path, content: bytes, message: str) -> None:
    """A damaged file, another agent's journal or a key written twice stop the run before anything executes."""
    journal = tmp_path / "run.jsonl"
    journal.write_bytes(content)
    with pytest.raises(JournalError, match=message):
        await run(["ok 0"], journal)


async def test_journal_refuses_derived_keys_of_changed_inputs(tmp_path: Path) -> None:
    """Keys derived from positions must still name the same inputs: a reordered input list is refused."""
    journal = tmp_path / "run.jsonl"
    await run(["ok 0", "ok 1"], journal)
    with pytest.raises(JournalError, match=r"input 0 is not the input journaled under '#0'"):
        await run(["ok 1", "ok 0"], journal)


async def test_journal_explicit_keys_survive_reordering(tmp_path: Path) -> None:
    """With keys of their own, inputs may be reordered, added or removed between runs."""
    journal = tmp_path / "run.jsonl"
    await run([RunInput("ok 0", key="a"), RunInput("ok 1", key="b")], journal)
    second = await run([RunInput("ok 2", key="c"), RunInput("ok 1", key="b")], journal)
    assert [(r.key, r.resumed) for r in second] == [("c", False), ("b", True)]


async def test_journal_output_that_no_longer_fits_is_an_error(tmp_path: Path) -> None:
    """A journaled output the agent's output type no longer accepts is reported, not silently dropped."""
    journal = tmp_path / "run.jsonl"
    await run(["ok 0"], journal)

    from pydantic import BaseModel

    class Stricter(BaseModel):
        severity: int
        summary: str
        owner: str

    agent = define_agent(name="triage", model="claude-sonnet-4-6", output=OutputTool(Stricter))
    with pytest.raises(JournalError, match=r"journaled output of key '#0' no longer fits Stricter"):
        async for _ in execute_many(agent, ["ok 0"], client=FunctionClient(model), journal=journal):
            pass


async def test_journal_write_failure_stops_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """If the journal cannot be written, the run stops with that error instead of reporting unsaved work."""
    journal = tmp_path / "run.jsonl"

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space left on device"):
        await run(["ok 0", "ok 1"], journal)


KILL_CHILD = """
import asyncio, sys
sys.path.insert(0, {tests!r})
from support import triage_agent
from typedagent import execute_many
from typedagent.testing import FakeAnthropicServer
import anthropic

async def main():
    client = anthropic.AsyncAnthropic(api_key="test", base_url={base_url!r})
    inputs = (f"ticket {{i}}" for i in range({count}))
    async for _ in execute_many(triage_agent(), inputs, client=client, journal={journal!r}, concurrency=4):
        pass

asyncio.run(main())
"""


def test_journal_survives_sigkill(tmp_path: Path) -> None:
    """A process killed with SIGKILL mid-run: a resumed run loses no finished execution and duplicates none."""
    journal = tmp_path / "run.jsonl"
    count = 60
    with FakeAnthropicServer([output_call(GOOD)], per_conversation=True, latency_ms=40) as server:
        code = KILL_CHILD.format(tests=str(ROOT / "tests"), base_url=server.base_url, journal=str(journal), count=count)
        child = subprocess.Popen([sys.executable, "-c", code])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not journal.exists() or journal.read_bytes().count(b"\n") < 10):
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
        before = journal.read_bytes()
        finished_before = before.count(b"\n")
        assert 10 <= finished_before < count
        served_before = server.requests_served

        async def resume() -> list[ManyResult[Triage]]:
            async with server.client() as client:
                stream = execute_many(
                    triage_agent(), (f"ticket {i}" for i in range(count)), client=client, journal=journal
                )
                return [result async for result in stream]

        results = asyncio.run(resume())
    keys = [record["key"] for record in lines(journal)]
    assert sorted(keys) == sorted(f"#{i}" for i in range(count))  # every input once: none lost, none twice
    assert journal.read_bytes().startswith(before.rsplit(b"\n", 1)[0])  # earlier lines untouched
    assert sum(r.resumed for r in results) == finished_before
    assert server.requests_served - served_before == count - finished_before  # only unfinished ones ran again
    assert all(r.result.ok for r in results)
    assert all(r.result.unwrap() == GOOD for r in results if r.resumed)


async def test_journal_error_codes_read_back_as_the_enum(tmp_path: Path) -> None:
    """A read-back failure's code is the ``AgentErrorCode`` member, usable in comparisons and tables."""
    journal = tmp_path / "run.jsonl"
    await run(["bad 0"], journal)
    [again] = await run(["bad 0"], journal)
    assert not again.result.ok
    assert again.result.error.code is AgentErrorCode.INVALID_RESPONSE


async def test_journal_line_missing_fields_is_an_error(tmp_path: Path) -> None:
    """A line with a key but not the fields of a result names the key instead of crashing."""
    journal = tmp_path / "run.jsonl"
    journal.write_text('{"key": "k", "agent": "triage", "outcome": "success"}\n')
    with pytest.raises(JournalError, match=r"the journal line of key 'k' is not one typedagent can read back"):
        await run([RunInput("ok 0", key="k")], journal)


async def test_journal_is_locked_while_a_run_uses_it(tmp_path: Path) -> None:
    """A second run on a journal in use stops with a JournalError before executing anything; the first is unharmed."""
    journal = tmp_path / "run.jsonl"
    started, release = asyncio.Event(), asyncio.Event()

    async def held(request: dict[str, Any]) -> Any:
        started.set()
        await release.wait()
        return model(request)

    async def first_run() -> list[ManyResult[Triage]]:
        stream = execute_many(triage_agent(), ["ok 0", "ok 1"], client=FunctionClient(held), journal=journal)
        return [result async for result in stream]

    first = asyncio.ensure_future(first_run())
    await started.wait()
    second_calls: list[object] = []

    def second_model(request: dict[str, Any]) -> Any:
        second_calls.append(request)
        return model(request)

    with pytest.raises(JournalError, match=r"run\.jsonl is in use by another run") as raised:
        async for _ in execute_many(triage_agent(), ["ok 0"], client=FunctionClient(second_model), journal=journal):
            pass
    assert "wait for it to finish, or use another journal file" in str(raised.value)
    assert second_calls == []
    release.set()
    assert sorted(r.key for r in await first) == ["#0", "#1"]
    assert sorted(record["key"] for record in lines(journal)) == ["#0", "#1"]
    again = await run(["ok 0", "ok 1"], journal)  # the lock ends with the run
    assert [r.resumed for r in again] == [True, True]


LOCK_CHILD = """
import sys, time
sys.path.insert(0, {tests!r})
from support import triage_agent
from typedagent._many.journal import Journal

journal = Journal.open({journal!r}, triage_agent())
print("locked", flush=True)
time.sleep(60)
"""


def test_journal_lock_holds_across_processes(tmp_path: Path) -> None:
    """Another process holding the journal (a second `typedagent batch`) makes this run stop with a JournalError."""
    journal = tmp_path / "run.jsonl"
    code = LOCK_CHILD.format(tests=str(ROOT / "tests"), journal=str(journal))
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "locked\n"
        with pytest.raises(JournalError, match=r"is in use by another run"):
            asyncio.run(run(["ok 0"], journal))
    finally:
        child.kill()
        child.wait(timeout=30)
        if child.stdout is not None:
            child.stdout.close()
    assert [r.resumed for r in asyncio.run(run(["ok 0"], journal))] == [False]  # a killed holder leaves no lock


async def test_journal_keeps_a_complete_last_line_without_its_newline(tmp_path: Path) -> None:
    """A last record that parses whole is kept (its input is not billed again); the next line starts on a new line."""
    journal = tmp_path / "run.jsonl"
    await run(["ok 0", "ok 1"], journal)
    journal.write_bytes(journal.read_bytes().rstrip(b"\n"))  # an editor or a tool dropped the final newline
    calls: list[str] = []

    def counting(request: dict[str, Any]) -> Any:
        calls.append(request["messages"][0]["content"])
        return model(request)

    stream = execute_many(triage_agent(), ["ok 0", "ok 1", "ok 2"], client=FunctionClient(counting), journal=journal)
    second = sorted([result async for result in stream], key=lambda r: r.index)
    assert calls == ["ok 2"]
    assert [r.resumed for r in second] == [True, True, False]
    assert [record["key"] for record in lines(journal)] == ["#0", "#1", "#2"]


async def test_journal_refuses_a_newer_format_version(tmp_path: Path) -> None:
    """A journal written by a newer typedagent (a higher "v") is refused, not misread."""
    journal = tmp_path / "run.jsonl"
    await run(["ok 0"], journal)
    record = lines(journal)[0]
    journal.write_text(json.dumps({**record, "v": 3}) + "\n")
    with pytest.raises(JournalError, match=r"run\.jsonl:1 was written in journal format 3 .* reads format 2"):
        await run(["ok 0"], journal)
    journal.write_text(json.dumps({**record, "v": "1"}) + "\n")
    with pytest.raises(JournalError, match=r"run\.jsonl:1 has a format version '1' that is not a number"):
        await run(["ok 0"], journal)

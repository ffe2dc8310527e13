"""``execute_many(..., pausable=True)``: paused executions reported as paused, journaled whole, never re-run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import Triage, triage_agent

from typedagent import (
    Approve,
    ExecutePaused,
    ExecuteSuccess,
    JournalError,
    ManyResult,
    PausableResult,
    RunInput,
    execute_agent,
    execute_many,
    execute_many_sync,
    tool,
)
from typedagent.testing import FunctionClient, output_call, tool_call


@tool(requires_approval=lambda ctx, args: args["path"] != "/tmp")
def delete(path: str) -> str:
    """Delete a path (anything but /tmp needs approval)."""
    return f"deleted {path}"


AGENT = triage_agent(helpers=[delete])


def model(request: dict[str, Any]) -> Any:
    """Asks to delete the path in the prompt, then hands over the output once the result is back."""
    messages = request["messages"]
    if len(messages) == 1:
        return tool_call("delete", {"path": messages[0]["content"]})
    return output_call(Triage(severity=2, summary=str(messages[-1]["content"][0]["content"])))


async def _run(client: FunctionClient, journal: Path) -> list[ManyResult[Triage, PausableResult[Triage]]]:
    inputs = [RunInput("/tmp", key="tmp"), RunInput("/home", key="home")]
    stream = execute_many(AGENT, inputs, client=client, journal=journal, pausable=True, rate_limits=None)
    return sorted([result async for result in stream], key=lambda result: result.index)


async def test_many_pausing_reports_paused_runs_and_journals_their_state(tmp_path: Path) -> None:
    """A run that pauses is yielded as ``ExecutePaused``; its journal line holds its state, conversation included."""
    journal = tmp_path / "run.jsonl"
    client = FunctionClient(model)
    done, paused = await _run(client, journal)
    assert isinstance(done.result, ExecuteSuccess)
    assert done.result.output.summary == "deleted /tmp"
    assert isinstance(paused.result, ExecutePaused)
    assert paused.result.pending[0].input == {"path": "/home"}
    records = {record["key"]: record for record in map(json.loads, journal.read_text().splitlines())}
    assert records["home"]["outcome"] == "paused"
    # A paused line is format 2 (a typedagent that reads only format 1 refuses it, saying to upgrade); others stay 1.
    assert (records["home"]["v"], records["tmp"]["v"]) == (2, 1)
    assert records["home"]["pauses"] == 1
    assert records["home"]["state"]["conversation"] == paused.result.state.messages
    assert "state" not in records["tmp"]


async def test_many_pausing_resumed_batch_reads_paused_runs_back_instead_of_running_them(tmp_path: Path) -> None:
    """Running the batch again with its journal yields the paused run as it was (state and all), sending nothing."""
    journal = tmp_path / "run.jsonl"
    first = await _run(FunctionClient(model), journal)
    again_client = FunctionClient(model)
    again = await _run(again_client, journal)
    assert again_client.requests == []
    assert [result.resumed for result in again] == [True, True]
    paused = again[1].result
    assert isinstance(paused, ExecutePaused)
    original = first[1].result
    assert isinstance(original, ExecutePaused)
    assert paused.state == original.state
    assert paused.metadata.messages == original.state.messages
    assert paused.metadata.pauses == 1
    result = await execute_agent(
        AGENT, resume=paused.state, decisions={paused.pending[0].id: Approve()}, client=FunctionClient(model)
    )
    assert isinstance(result, ExecuteSuccess)
    assert result.output.summary == "deleted /home"


def test_many_pausing_sync_and_the_upfront_check(tmp_path: Path) -> None:
    """``execute_many_sync(pausable=True)`` too; without ``pausable`` an agent whose tools wait is refused at once."""
    results = execute_many_sync(AGENT, ["/tmp", "/srv"], client=FunctionClient(model), pausable=True, rate_limits=None)
    assert [result.result.status for result in results] == ["success", "paused"]
    with pytest.raises(ValueError, match="has tools that need approval"):
        execute_many(AGENT, ["/tmp"], client=FunctionClient(model))


async def test_many_pausing_journaled_pause_read_by_a_run_that_cannot_pause(tmp_path: Path) -> None:
    """A paused line read back by a run without ``pausable`` (the agent lost its approval tool) is a JournalError."""
    journal = tmp_path / "run.jsonl"
    await _run(FunctionClient(model), journal)
    plain = triage_agent(helpers=[tool(lambda path: path, name="delete")])
    stream = execute_many(
        plain,
        [RunInput("/tmp", key="tmp"), RunInput("/home", key="home")],
        client=FunctionClient(model),
        journal=journal,
    )
    with pytest.raises(JournalError, match="holds key 'home' as a paused execution: run with execute_many"):
        _ = [result async for result in stream]


async def test_many_pausing_damaged_paused_line_is_a_journal_error(tmp_path: Path) -> None:
    """A paused line whose state is damaged cannot be read back: JournalError naming the key."""
    journal = tmp_path / "run.jsonl"
    await _run(FunctionClient(model), journal)
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    for line in lines:
        if line["key"] == "home":
            line["state"]["version"] = 99
    journal.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(JournalError, match="the paused state journaled under key 'home' cannot be read back"):
        await _run(FunctionClient(model), journal)

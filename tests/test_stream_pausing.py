"""Pausing a streamed execution: a ``Paused`` event ends the stream, and a resumed stream streams on."""

from __future__ import annotations

from typing import Any

import pytest
from support import GOOD, Triage, triage_agent

from typedagent import (
    AgentStreamEvent,
    Approve,
    ExecutePaused,
    ExecuteSuccess,
    Finished,
    Paused,
    PausedState,
    PendingCall,
    execute_agent,
    stream_agent,
    stream_agent_sync,
    tool,
)
from typedagent.testing import ScriptedClient, output_call, response, text, tool_call


@tool
def look(query: str) -> str:
    """Look something up."""
    return f"saw {query}"


@tool(requires_approval=True)
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


AGENT = triage_agent(helpers=[look, delete])


def _script() -> list[Any]:
    return [
        response(text("Checking."), tool_call("look", {"query": "disk"}), tool_call("delete", {"path": "/a"})),
        response(text("Done."), output_call(GOOD)),
    ]


async def test_stream_pausing_ends_with_a_paused_event_and_the_paused_result() -> None:
    """The last event is ``Paused`` (pending calls and state); ``run.result`` is the ``ExecutePaused``."""
    client = ScriptedClient(_script())
    async with stream_agent(AGENT, "Disk full", client=client, pausable=True) as run:
        events: list[AgentStreamEvent[Triage] | Paused] = [event async for event in run]
    last = events[-1]
    assert isinstance(last, Paused)
    assert last.kind == "paused"
    assert last.pending == (PendingCall(id="toolu_01_002", name="delete", input={"path": "/a"}, kind="approval"),)
    assert isinstance(run.result, ExecutePaused)
    assert run.result is last.result
    assert last.state is run.result.state
    assert (last.attempt, last.iteration) == (1, 1)
    finished = [event.name for event in events if event.kind == "tool_call_finished"]
    assert finished == []  # nothing was answered yet: the results go back on resume, all together
    assert not any(isinstance(event, Finished) for event in events)
    assert [event.name for event in events if event.kind == "tool_call_started"] == ["look", "delete"]


async def test_stream_pausing_resumed_stream_streams_on_to_the_end() -> None:
    """``stream_agent(agent, resume=state, decisions=...)``: the answered calls, the next response, ``Finished``."""
    client = ScriptedClient(_script())
    async with stream_agent(AGENT, "Disk full", client=client, pausable=True) as run:
        _ = [event async for event in run]
    paused = run.result
    assert isinstance(paused, ExecutePaused)
    state = PausedState.from_json(paused.state.to_json())
    async with stream_agent(AGENT, resume=state, decisions={"toolu_01_002": Approve()}, client=client) as resumed:
        events = [event async for event in resumed]
    assert [(e.name, e.result) for e in events if e.kind == "tool_call_finished"] == [
        ("look", "saw disk"),
        ("delete", "deleted /a"),
        ("final_output", "Output accepted."),
    ]
    assert "".join(e.text for e in events if e.kind == "text_delta") == "Done."
    assert [(e.kind, e.attempt) for e in events if e.kind in ("attempt_started", "finished")] == [("finished", 1)]
    assert isinstance(resumed.result, ExecuteSuccess)
    assert resumed.result.output == GOOD
    assert resumed.result.metadata.pauses == 1


async def test_stream_pausing_stream_and_execute_agent_resume_each_other() -> None:
    """A state paused by a stream resumes with ``execute_agent``, and the other way round."""
    client = ScriptedClient(_script())
    paused = await execute_agent(AGENT, "Disk full", client=client, pausable=True)
    assert isinstance(paused, ExecutePaused)
    async with stream_agent(AGENT, resume=paused.state, decisions={"toolu_01_002": Approve()}, client=client) as run:
        async for _ in run:
            pass
    assert run.result.ok


async def test_stream_pausing_arguments_are_checked_when_the_stream_is_made() -> None:
    """A stream of an agent whose tools wait, without ``pausable``, or with a bad decision, fails before it starts."""
    with pytest.raises(ValueError, match="has tools that need approval"):
        stream_agent(AGENT, "Disk full", client=ScriptedClient())
    paused = await execute_agent(AGENT, "x", client=ScriptedClient(_script()), pausable=True)
    assert isinstance(paused, ExecutePaused)
    with pytest.raises(ValueError, match="no decision for 'toolu_01_002'"):
        stream_agent(AGENT, resume=paused.state, decisions={}, client=ScriptedClient())


def test_stream_pausing_sync_stream_pauses_and_resumes() -> None:
    """``stream_agent_sync`` ends with ``Paused`` too, and resumes."""
    client = ScriptedClient(_script())
    with stream_agent_sync(AGENT, "Disk full", client=client, pausable=True) as run:
        events = list(run)
    assert isinstance(events[-1], Paused)
    paused = run.result
    assert isinstance(paused, ExecutePaused)
    with stream_agent_sync(AGENT, resume=paused.state, decisions={"toolu_01_002": Approve()}, client=client) as resumed:
        last = list(resumed)[-1]
    assert isinstance(last, Finished)
    assert resumed.result.ok


async def test_stream_pausing_inline_approval_streams_like_any_run() -> None:
    """With ``approve=`` nothing pauses: the stream ends with ``Finished``."""
    client = ScriptedClient(_script())
    async with stream_agent(AGENT, "Disk full", client=client, approve=lambda call: Approve()) as run:
        events = [event async for event in run]
    assert isinstance(events[-1], Finished)
    assert run.result.ok

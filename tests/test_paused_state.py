"""``PausedState``: versioned JSON, read back with suspicion, and resumed only with the agent it was paused with."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import GOOD, Triage, reflecting, triage_agent

from typedagent import (
    Approve,
    ExecutePaused,
    ExecutionLimits,
    ExternalResult,
    OutputTool,
    PausedState,
    TokenUsage,
    execute_agent,
    tool,
)
from typedagent.testing import ScriptedClient, output_call, response, tool_call


@tool(requires_approval=True)
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool
def look(query: str) -> str:
    """Look something up."""
    return f"saw {query}"


def _agent(**overrides: Any) -> Any:
    return triage_agent(helpers=[look, delete], **overrides)


async def _paused(**kwargs: Any) -> ExecutePaused:
    client = ScriptedClient(
        [response(tool_call("look", {"query": "disk"}), tool_call("delete", {"path": "/a"})), output_call(GOOD)]
    )
    result = await execute_agent(_agent(), "Ticket: disk full", client=client, pausable=True, **kwargs)
    assert isinstance(result, ExecutePaused)
    return result


async def test_paused_state_round_trips_through_json() -> None:
    """``from_json(to_json())`` is the same state: equal, and the same JSON again."""
    state = (await _paused(limits=ExecutionLimits(max_total_tokens=1_000, timeout_s=30))).state
    text = state.to_json()
    again = PausedState.from_json(text)
    assert again == state
    assert again.to_json() == text
    assert PausedState.from_json(text.encode()) == state
    assert again.limits == ExecutionLimits(max_total_tokens=1_000, timeout_s=30)
    assert again.tokens == TokenUsage(input_tokens=10, output_tokens=5)
    assert (again.pauses, again.agent_name) == (1, "triage")
    assert repr(again) == f"PausedState(id={state.id!r}, agent_name='triage', pending=[delete:approval])"


async def test_paused_state_json_is_versioned_and_holds_what_resuming_needs() -> None:
    """The top-level ``version`` and ``format`` say what it is; conversation, counters, limits and calls are there."""
    data = json.loads((await _paused()).state.to_json())
    assert (data["version"], data["format"]) == (1, "typedagent.paused_state")
    assert set(data) == {
        "version",
        "format",
        "id",
        "agent",
        "fingerprint",
        "limits",
        "elapsed_s",
        "pauses",
        "request",
        "conversation",
        "attempt",
        "totals",
        "records",
        "warnings",
        "callback_errors",
        "batch",
        "trace",
    }
    assert data["conversation"][0] == {"role": "user", "content": "Ticket: disk full"}
    assert data["attempt"]["number"] == 1
    assert data["attempt"]["iteration"] == 1
    assert data["totals"]["iterations"] == 1
    assert data["totals"]["tool_calls"] == 1
    assert data["fingerprint"]["model"] == "claude-sonnet-4-6"
    assert set(data["fingerprint"]["tools"]) == {"look", "delete"}
    assert [(call["name"], call["hold"], call["result"]) for call in data["batch"]] == [
        (
            "look",
            None,
            {"content": "saw disk", "is_error": False, "duration_ms": data["batch"][0]["result"]["duration_ms"]},
        ),
        ("delete", "approval", None),
    ]


async def test_paused_state_holds_no_api_key_nor_client() -> None:
    """The state holds what the conversation holds and nothing of the client: no key, no base URL."""
    import httpx2
    from anthropic import AsyncAnthropic

    secret = "sk-ant-api03-" + "k" * 80

    def answer(request: httpx2.Request) -> httpx2.Response:
        body = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "delete", "input": {"path": "/a"}}],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 2},
        }
        return httpx2.Response(200, json=body)

    client = AsyncAnthropic(
        api_key=secret,
        base_url="https://internal.example/anthropic",
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(answer)),
    )
    result = await execute_agent(_agent(), "Ticket", client=client, pausable=True)
    assert isinstance(result, ExecutePaused)
    text = result.state.to_json()
    assert secret not in text
    assert "sk-ant" not in text
    assert "internal.example" not in text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "not a paused execution's state: the text is not JSON"),
        ("[1, 2]", 'its JSON has no "format": "typedagent.paused_state"'),
        ('{"version": 1}', 'its JSON has no "format"'),
        ('{"format": "typedagent.paused_state", "version": "1"}', "its \"version\" is '1'"),
        ('{"format": "typedagent.paused_state", "version": 0}', 'its "version" is 0'),
        ('{"format": "typedagent.paused_state", "version": 1}', "the paused state is damaged"),
        ("[" * 100_000, "the text is not JSON"),
    ],
)
def test_paused_state_from_json_refuses_what_is_not_a_state(text: str, message: str) -> None:
    """Text that is not a typedagent state is a ``ValueError`` that says so."""
    with pytest.raises(ValueError, match=".*".join(map(__import__("re").escape, message.split(".*")))):
        PausedState.from_json(text)


async def test_paused_state_from_a_newer_version_says_to_upgrade() -> None:
    """A state written in a newer format version is a ``ValueError`` asking to upgrade typedagent."""
    data = json.loads((await _paused()).state.to_json())
    data["version"] = 2
    with pytest.raises(ValueError, match="format version 2 by a newer typedagent; this one reads up to version 1"):
        PausedState.from_json(json.dumps(data))


def _damage(data: dict[str, Any], path: str, value: object) -> dict[str, Any]:
    *parents, last = path.split(".")
    node: Any = data
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return data


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("totals.tokens.input_tokens", -5, "at totals.tokens.input_tokens"),
        ("totals.iterations", "1", "at totals.iterations"),
        ("attempt.number", 0, "at attempt.number"),
        ("pauses", 0, "at pauses"),
        ("conversation.0.role", "system", "at conversation.0.role"),
        ("batch.1.hold", None, "none of its tool calls waits"),
        ("batch.1.id", "toolu_other", "does not end with the tool calls it says are waiting"),
        ("batch.0.result", None, "is in no state it can be in"),
        ("batch.0.hold", "external", "is in no state it can be in"),
        ("records", [{"number": 1, "iterations": 1, "tokens": {}, "outcome": "X"}], "at records.0.tokens"),
        ("limits.timeout_s", -1, "its limits are not limits (ExecutionLimits.timeout_s must be a finite positive"),
    ],
)
async def test_paused_state_damaged_fields_are_value_errors(path: str, value: object, message: str) -> None:
    """A field of the wrong type or out of range, or a batch that does not fit the conversation: ``ValueError``."""
    data = _damage(json.loads((await _paused()).state.to_json()), path, value)
    with pytest.raises(ValueError, match=__import__("re").escape(message)):
        PausedState.from_json(json.dumps(data))


async def test_paused_state_unknown_attempt_outcome_is_damage() -> None:
    """An attempt record with an outcome typedagent does not know is a damaged state."""
    data = json.loads((await _paused()).state.to_json())
    data["records"] = [
        {
            "number": 1,
            "iterations": 1,
            "tokens": data["totals"]["tokens"],
            "outcome": "EXPLODED",
            "candidate": None,
            "validation_errors": [],
            "output_forced": False,
        }
    ]
    with pytest.raises(ValueError, match="an attempt's outcome is 'EXPLODED'"):
        PausedState.from_json(json.dumps(data))


@settings(max_examples=200, deadline=None, database=None)
@given(
    st.one_of(
        st.text(),
        st.binary(),
        st.recursive(st.none() | st.integers() | st.text(), lambda x: st.lists(x) | st.dictionaries(st.text(), x)).map(
            json.dumps
        ),
    )
)
def test_paused_state_from_json_of_anything_is_a_state_or_a_value_error(text: str | bytes) -> None:
    """Whatever the text, ``from_json`` returns a state or raises ``ValueError``: never another exception."""
    with contextlib.suppress(ValueError):
        PausedState.from_json(text)


def test_paused_state_from_json_needs_text() -> None:
    """``from_json`` of something that is not text is a ``TypeError``."""
    with pytest.raises(TypeError, match="takes the text to_json\\(\\) wrote, got dict"):
        PausedState.from_json({"version": 1})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changed", "message"),
    [
        ({"model": "claude-opus-4-6"}, "the model changed from 'claude-sonnet-4-6' to 'claude-opus-4-6'"),
        ({"helpers": [delete]}, "tool(s) 'look' are gone"),
        ({"helpers": [look, delete, tool(lambda: "x", name="extra")]}, "tool(s) 'extra' are new"),
        ({"helpers": [look, tool(lambda path, recursive=False: "", name="delete")]}, "the schema of tool(s) 'delete'"),
        ({"output": OutputTool(Triage, name="emit")}, "the output tool changed"),
        ({"output": reflecting()}, "the output tool changed"),
    ],
)
async def test_paused_state_resumed_with_another_agent_names_what_changed(
    changed: dict[str, Any], message: str
) -> None:
    """A state resumed with an agent whose model, tools or output changed is a ``ValueError``; nothing is sent."""
    state = (await _paused()).state
    client = ScriptedClient([output_call(GOOD)])
    other = triage_agent(**{"helpers": [look, delete], **changed})
    with pytest.raises(ValueError, match=__import__("re").escape(message)):
        await execute_agent(other, resume=state, decisions={state.pending[0].id: Approve()}, client=client)
    assert client.requests == []


async def test_paused_state_instructions_and_name_may_change() -> None:
    """The agent's name and instructions are not part of the fingerprint: the paused system prompt is kept."""
    state = (await _paused()).state
    client = ScriptedClient([output_call(GOOD)])
    other = _agent(name="renamed", instructions="Something new.")
    result = await execute_agent(other, resume=state, decisions={state.pending[0].id: Approve()}, client=client)
    assert result.ok
    assert client.requests[0]["system"] == _paused_system()


def _paused_system() -> str:
    from typedagent._run.request import protocol_note

    return protocol_note(_agent())


async def test_paused_state_waiting_call_of_the_wrong_kind_is_damage() -> None:
    """A state whose waiting call claims a kind its tool cannot have (edited by hand) is refused before it runs."""
    data = json.loads((await _paused()).state.to_json())
    data["batch"][1]["hold"] = "external"
    state = PausedState.from_json(json.dumps(data))
    client = ScriptedClient([output_call(GOOD)])
    with pytest.raises(ValueError, match="call 'toolu_01_002' of 'delete' waits for its result, which agent 'triage'"):
        await execute_agent(_agent(), resume=state, decisions={"toolu_01_002": ExternalResult("x")}, client=client)
    assert client.requests == []


async def test_paused_state_keeps_the_container_and_the_fallback_to_auto() -> None:
    """The request the execution was sending goes on: the container a response named, ``tool_choice`` auto."""
    from test_request import REFUSED

    from typedagent.testing import api_error

    client = ScriptedClient(
        [api_error(400, REFUSED), response(tool_call("delete", {"path": "/a"}), container="ctr_1"), output_call(GOOD)]
    )
    paused = await execute_agent(_agent(), "Ticket", client=client, pausable=True)
    assert isinstance(paused, ExecutePaused)
    state = PausedState.from_json(paused.state.to_json())
    result = await execute_agent(_agent(), resume=state, decisions={paused.pending[0].id: Approve()}, client=client)
    assert result.ok
    last = client.requests[-1]
    assert (last["tool_choice"], last["container"]) == ({"type": "auto"}, "ctr_1")
    assert result.metadata.warnings == paused.metadata.warnings
    assert len(result.metadata.warnings) == 1


async def test_paused_state_a_conversation_that_is_not_json_cannot_pause() -> None:
    """``pausable=True`` with a history that JSON cannot hold: ``TypeError`` before anything is sent."""
    client = ScriptedClient([output_call(GOOD)])
    history: Any = [{"role": "user", "content": [{"type": "text", "text": b"raw bytes"}]}]
    with pytest.raises(
        TypeError, match="the execution cannot pause: its conversation holds something that is not JSON"
    ):
        await execute_agent(_agent(), "Ticket", client=client, pausable=True, message_history=history)
    assert client.requests == []


async def test_paused_state_repeated_call_ids_are_damage() -> None:
    """Two calls with one id could not be told apart by their decisions: the state is damaged."""
    data = json.loads((await _paused()).state.to_json())
    data["batch"][1]["id"] = data["batch"][0]["id"]
    data["conversation"][-1]["content"][1]["id"] = data["batch"][0]["id"]
    with pytest.raises(ValueError, match="does not end with the tool calls it says are waiting"):
        PausedState.from_json(json.dumps(data))


async def test_paused_state_keeps_the_cache_counts_and_savings() -> None:
    """Prompt-cache figures survive a pause: the resumed result's tokens and savings equal an inline run's."""
    cached = {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_creation_input_tokens": 300,
        "cache_read_input_tokens": 2_000,
        "cache_creation": {"ephemeral_1h_input_tokens": 300, "ephemeral_5m_input_tokens": 0},
    }
    script = [
        response(tool_call("look", {"query": "disk"}), tool_call("delete", {"path": "/a"}), usage=cached),
        output_call(GOOD),
    ]
    paused = await execute_agent(_agent(), "Ticket: disk full", client=ScriptedClient(script), pausable=True)
    assert isinstance(paused, ExecutePaused)
    state = PausedState.from_json(paused.state.to_json())
    resumed = await execute_agent(
        _agent(), resume=state, decisions={paused.pending[0].id: Approve()}, client=ScriptedClient(script[1:])
    )
    inline = await execute_agent(
        _agent(), "Ticket: disk full", client=ScriptedClient(script), approve=lambda c: Approve()
    )
    assert resumed.ok
    assert inline.ok
    assert resumed.metadata.tokens.cache_creation_1h_input_tokens == 300
    assert resumed.metadata.tokens == inline.metadata.tokens
    assert inline.metadata.cache_savings_usd is not None
    assert inline.metadata.cache_savings_usd > 0
    assert resumed.metadata.cache_savings_usd == pytest.approx(inline.metadata.cache_savings_usd)

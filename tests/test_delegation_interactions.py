"""Delegation and history processors with the other features: cache savings, pausing, output modes, breakpoints."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from typedagent import (
    Approve,
    Deny,
    ExecutePaused,
    OutputTool,
    PausedState,
    PendingCall,
    define_agent,
    execute_agent,
    tool,
)
from typedagent.history import keep_last_turns
from typedagent.testing import ScriptedClient, approve_all, output_call, response, text, tool_call, usage


class Facts(BaseModel):
    facts: list[str]


class Report(BaseModel):
    summary: str


@tool(requires_approval=True)
def erase(path: str) -> str:
    """Erase a file."""
    return f"erased {path}"


@tool(external=True)
def ask_a_person(question: str) -> str:  # pyright: ignore[reportReturnType]
    """Ask a person; the answer comes from outside."""
    ...  # pragma: no cover


@tool
def search(query: str) -> str:
    """Search the notes."""
    return f"notes about {query}"


def _parent(*sub_helpers: Any, own: tuple[Any, ...] = ()) -> Any:
    """A coordinator whose one specialist (``cleaner``, on haiku) has ``sub_helpers``."""
    cleaner = define_agent(
        name="cleaner", model="claude-haiku-4-5", output=OutputTool(Facts), helpers=[*sub_helpers, search]
    )
    return define_agent(
        name="boss", model="claude-sonnet-4-6", output=OutputTool(Report), helpers=[cleaner.as_tool(), *own]
    )


# Cache savings roll up like cost.


async def test_sub_run_cache_savings_roll_up_into_the_parent() -> None:
    """The parent's cache_savings_usd is its own responses' savings plus every sub-run's, priced per model."""
    client = ScriptedClient(
        [
            response(tool_call("cleaner", {"task": "tidy"}), usage=usage(100, 10, 0, 20_000)),
            response(output_call(Facts(facts=["done"])), usage=usage(100, 10, 0, 50_000)),  # the sub-run, haiku
            response(output_call(Report(summary="ok")), usage=usage(100, 10, 0, 20_000)),
        ]
    )
    result = await execute_agent(_parent(), "go", client=client)
    assert result.ok is True
    sub = result.metadata.sub_executions[0].metadata
    # haiku-4-5: input $1/M, cache read $0.10/M; sonnet-4-6: input $3/M, cache read $0.30/M.
    assert sub.cache_savings_usd == pytest.approx(50_000 * 0.9 / 1e6)
    assert result.metadata.cache_savings_usd == pytest.approx(40_000 * 2.7 / 1e6 + 50_000 * 0.9 / 1e6)
    assert result.metadata.tokens.cache_read_input_tokens == 90_000


async def test_unpriced_sub_run_makes_cost_and_cache_savings_unknown() -> None:
    """Like the cost, the savings are None once a sub-run ran on a model typedagent has no price for."""
    local = define_agent(name="local", model="my-local-model", output=OutputTool(Facts))
    parent = define_agent(name="p", model="claude-sonnet-4-6", output=OutputTool(Report), helpers=[local.as_tool()])
    client = ScriptedClient(
        [tool_call("local", {"task": "x"}), output_call(Facts(facts=[])), output_call(Report(summary="s"))]
    )
    result = await execute_agent(parent, "go", client=client)
    assert result.ok is True
    assert (result.metadata.cost_usd, result.metadata.cache_savings_usd) == (None, None)


# A sub-agent inside a pausable parent: it never pauses; approve= decides its calls, or it cannot run.


async def test_sub_agent_tool_needing_approval_is_decided_by_the_parents_approve_callback() -> None:
    """The parent's approve= callback is asked about the sub-agent's call; a denial is what the sub-agent reads."""
    asked: list[PendingCall] = []

    def policy(call: PendingCall) -> Approve | Deny:
        asked.append(call)
        return Approve() if call.input["path"] == "/tmp/a" else Deny("not that one")

    client = ScriptedClient(
        [
            tool_call("cleaner", {"task": "erase two files"}),
            response(tool_call("erase", {"path": "/tmp/a"}), tool_call("erase", {"path": "/etc/b"})),
            output_call(Facts(facts=["erased /tmp/a"])),
            output_call(Report(summary="one erased")),
        ]
    )
    result = await execute_agent(_parent(erase), "go", client=client, approve=policy, pausable=True)
    assert not isinstance(result, ExecutePaused)
    assert result.ok is True
    assert [(call.name, call.input["path"], call.kind) for call in asked] == [
        ("erase", "/tmp/a", "approval"),
        ("erase", "/etc/b", "approval"),
    ]
    sub = result.metadata.sub_executions[0].metadata
    results = [block for block in sub.messages[2]["content"] if isinstance(block, dict)]
    assert [block.get("is_error", False) for block in results] == [False, True]
    assert results[0]["content"] == "erased /tmp/a"
    assert "not that one" in str(results[1]["content"])
    assert result.metadata.pauses == 0


async def test_sub_agent_needing_approval_without_a_callback_is_a_tool_error_even_when_pausable() -> None:
    """A sub-run cannot pause: without approve= the delegation is refused, nothing is sent for the sub-agent."""
    client = ScriptedClient([tool_call("cleaner", {"task": "erase"}), output_call(Report(summary="could not"))])
    result = await execute_agent(_parent(erase), "go", client=client, pausable=True)
    assert not isinstance(result, ExecutePaused)
    assert result.ok is True
    answer = result.metadata.messages[2]["content"][0]
    assert isinstance(answer, dict)
    assert answer["is_error"] is True
    assert "the 'cleaner' agent has tools that need approval ('erase')" in str(answer["content"])
    assert "execute_agent(..., approve=callback)" in str(answer["content"])
    assert "a sub-run never pauses" in str(answer["content"])
    assert result.metadata.sub_executions == ()
    assert len(client.requests) == 2  # the parent's two calls only


async def test_sub_agent_with_an_external_tool_is_a_tool_error_even_with_approve() -> None:
    """An external tool's result comes from outside: a sub-run could never get it, so it does not start."""
    client = ScriptedClient([tool_call("cleaner", {"task": "ask"}), output_call(Report(summary="could not"))])
    result = await execute_agent(
        _parent(ask_a_person), "go", client=client, pausable=True, approve=lambda call: Approve()
    )
    assert not isinstance(result, ExecutePaused)
    answer = result.metadata.messages[2]["content"][0]
    assert isinstance(answer, dict)
    assert answer["is_error"] is True
    assert "the 'cleaner' agent has external tools ('ask_a_person')" in str(answer["content"])


async def test_parent_paused_after_a_sub_run_keeps_its_totals_through_the_pause() -> None:
    """A sub-run ends before the parent pauses at its own call; tokens, cost, savings and an unknown cost go on."""
    local = define_agent(name="local", model="my-local-model", output=OutputTool(Facts))
    parent = define_agent(
        name="p", model="claude-sonnet-4-6", output=OutputTool(Report), helpers=[local.as_tool(), erase]
    )
    client = ScriptedClient(
        [
            response(tool_call("local", {"task": "x"}), usage=usage(100, 10, 0, 1_000)),
            response(output_call(Facts(facts=[])), usage=usage(7, 3)),
            tool_call("erase", {"path": "/tmp/a"}),
            output_call(Report(summary="s")),
        ]
    )
    paused = await execute_agent(parent, "go", client=client, pausable=True)
    assert isinstance(paused, ExecutePaused)
    before = paused.metadata
    assert before.cost_usd is None  # the sub-run's model has no price
    assert [sub.agent_name for sub in before.sub_executions] == ["local"]
    state = PausedState.from_json(paused.state.to_json())
    resumed = await execute_agent(parent, resume=state, decisions=approve_all(paused), client=client)
    assert not isinstance(resumed, ExecutePaused)
    assert resumed.ok is True
    after = resumed.metadata
    assert after.cost_usd is None
    assert after.cache_savings_usd is None
    assert after.tokens.input_tokens == before.tokens.input_tokens + 10  # the one call after the pause
    assert after.tokens.cache_read_input_tokens == 1_000
    assert after.pauses == 1
    assert after.sub_executions == ()  # the records of the segment before the pause are in its ExecutePaused


# History processors with the output modes and with cache breakpoints.


EARLIER: list[Any] = [
    {"role": "user", "content": "first question"},
    {"role": "assistant", "content": "first answer"},
    {"role": "user", "content": "second question"},
    {"role": "assistant", "content": "second answer"},
]


@pytest.mark.parametrize("mode", ["native", "prompted"])
async def test_history_processor_with_a_text_answer_mode(mode: Any) -> None:
    """Processors see and trim the messages only: the format (native) and the protocol note (system) are kept.

    A rejected text answer and its feedback are turns like any other: the retry's request is processed too.
    """
    agent = define_agent(
        name="a",
        model="claude-sonnet-4-6",
        output=OutputTool(Report, mode=mode),
        history_processors=[keep_last_turns(0)],
    )
    client = ScriptedClient([text("not JSON at all"), text('{"summary": "done"}')])
    result = await execute_agent(agent, "go", client=client, message_history=EARLIER)
    assert result.ok is True
    assert result.output == Report(summary="done")
    conversation = result.metadata.messages
    assert conversation[:5] == [*EARLIER, {"role": "user", "content": "go"}]  # the whole conversation is kept
    for request in client.requests:
        sent = request["messages"]
        assert sent[0] == EARLIER[0]
        assert "first answer" not in str(sent)
        assert "second question" not in str(sent)
        if mode == "native":
            assert request["output_config"]["format"]["type"] == "json_schema"
        else:
            assert "output_config" not in request
            assert '"summary"' in str(request["system"])  # the protocol note, with the schema
    assert client.requests[1]["messages"][-1] == conversation[-2]  # the feedback on the rejected answer is sent


def _mark_every_turn(messages: list[Any]) -> list[Any]:
    """A processor that puts a breakpoint on every earlier message's last block (too many for the API)."""
    marked: list[Any] = []
    for message in messages[:-1]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        blocks[-1] = {**blocks[-1], "cache_control": {"type": "ephemeral"}}
        marked.append({**message, "content": blocks})
    return [*marked, messages[-1]]


def _markers(value: object) -> int:
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(_markers(item) for item in value.values())
    if isinstance(value, list):
        return sum(_markers(item) for item in value)
    return 0


async def test_history_processor_adding_breakpoints_never_sends_more_than_four() -> None:
    """Excess breakpoints a processor leaves are taken off the earliest messages, with a warning; ours give way."""
    agent = define_agent(
        name="a",
        model="claude-sonnet-4-6",
        instructions="You search. " * 2_000,  # long enough for the static prefix's breakpoint
        output=OutputTool(Report),
        helpers=[search],
        history_processors=[_mark_every_turn],
    )
    script: list[Any] = [tool_call("search", {"query": str(n)}) for n in range(4)]
    client = ScriptedClient([*script, output_call(Report(summary="done"))])
    result = await execute_agent(agent, "go", client=client)
    assert result.ok is True
    counts = [_markers(request) for request in client.requests]
    assert max(counts) <= 4
    last = client.requests[-1]
    assert _markers(last["messages"][-2]) == 1  # the latest breakpoints are the ones kept
    assert _markers(last["messages"][0]) == 0
    assert any("cache_control breakpoint(s) more than" in warning for warning in result.metadata.warnings)
    assert _markers(result.metadata.messages) == 0  # the conversation itself is never marked

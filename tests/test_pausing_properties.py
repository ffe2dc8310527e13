"""A paused and resumed run sends the model exactly what the same run sends with its decisions known up front.

Hypothesis writes random model behaviour — rounds of helper calls, calls that need approval and calls of an
external tool, in any mix, an output next to them or not, reflection on or off — and random decisions (approve,
approve with edited arguments, valid or not, deny with a reason) and external results. The same script runs twice:
once deciding every approval call inline (``approve=``, and the external tool replaced by a helper returning the
same values), once pausing at every waiting call, the state written to JSON and read back, then resumed. Every
request of the two runs must be the same, and so must the outcome and the accounting.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import GOOD, Triage, reflecting, triage_agent

from typedagent import (
    AgentDefinition,
    Approve,
    Decision,
    Deny,
    ExecutePaused,
    ExternalResult,
    PausableResult,
    PausedState,
    PendingCall,
    execute_agent,
    tool,
)
from typedagent.testing import ScriptedClient, ScriptItem, output_call, response, submit_call, tool_call

PROFILE = settings(
    max_examples=200 if os.environ.get("TYPEDAGENT_HYPOTHESIS_PROFILE") == "thorough" else 40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)


@tool
def look(query: str) -> str:
    """Look something up."""
    return f"saw {query}"


@tool(requires_approval=lambda ctx, args: args["path"] != "/tmp/ok")
def delete(path: str, force: bool = False) -> str:
    """Delete a file (anything but /tmp/ok needs approval)."""
    return f"deleted {path}{' (forced)' if force else ''}"


def fetch_signature(url: str) -> Any:
    """Fetch a page (the result comes from outside)."""
    raise AssertionError("never called")


@dataclass(frozen=True)
class Case:
    rounds: list[list[tuple[str, dict[str, Any]]]]
    decisions: list[Decision]
    """One per approval call, in the order the calls are made."""
    pages: list[Any]
    """The external tool's result, one per call, in order."""
    output_with_last_round: bool
    reflect: bool


CALLS = st.one_of(
    st.builds(lambda q: ("look", {"query": q}), st.sampled_from(["a", "b"])),
    st.builds(lambda p: ("delete", {"path": p}), st.sampled_from(["/tmp/ok", "/etc", "/home"])),
    st.builds(lambda u: ("fetch", {"url": u}), st.sampled_from(["https://a", "https://b"])),
    st.just(("delete", {"path": 7})),  # input that fails validation: answered at once, never waits
    st.sampled_from([("final_output", GOOD.model_dump()), ("final_output", {"severity": 9, "summary": "bad"})]),
)
DECISIONS = st.one_of(
    st.just(Approve()),
    st.just(Approve(input={"path": "/tmp/edited", "force": True})),
    st.just(Approve(input={"force": "not a bool"})),
    st.builds(Deny, st.sampled_from(["no", "not that one", ""])),
)
PAGES = st.one_of(st.text(max_size=20), st.dictionaries(st.sampled_from(["title", "n"]), st.integers(), max_size=2))


@st.composite
def cases(draw: st.DrawFn) -> Case:
    rounds = draw(st.lists(st.lists(CALLS, min_size=1, max_size=3), min_size=1, max_size=3))
    return Case(
        rounds=rounds,
        decisions=draw(st.lists(DECISIONS, min_size=9, max_size=9)),
        pages=draw(st.lists(PAGES, min_size=9, max_size=9)),
        output_with_last_round=draw(st.booleans()),
        reflect=draw(st.booleans()),
    )


def script(case: Case) -> list[ScriptItem]:
    items: list[ScriptItem] = [response(*(tool_call(name, args) for name, args in calls)) for calls in case.rounds]
    finish = [output_call(GOOD), *([submit_call()] if case.reflect else [])]
    if case.output_with_last_round:
        last = case.rounds[-1]
        items[-1] = response(*(tool_call(name, args) for name, args in last), *finish)
        return items
    return [*items, response(*finish)]


def agents(case: Case) -> tuple[AgentDefinition[Triage, None], AgentDefinition[Triage, None]]:
    """The agent deciding inline (its fetch returns the pages itself) and the agent that pauses."""
    pages = iter(case.pages)

    def fetch_inline(url: str) -> Any:
        """Fetch a page (the result comes from outside)."""
        return next(pages)

    output = reflecting() if case.reflect else None
    extra: dict[str, Any] = {} if output is None else {"output": output}
    inline = triage_agent(helpers=[look, delete, tool(fetch_inline, name="fetch")], **extra)
    pausing = triage_agent(helpers=[look, delete, tool(fetch_signature, name="fetch", external=True)], **extra)
    return inline, pausing


async def run_inline(case: Case) -> tuple[PausableResult[Triage], ScriptedClient]:
    decisions: Iterator[Decision] = iter(case.decisions)

    def approve(call: PendingCall) -> Approve | Deny:
        decision = next(decisions)
        assert isinstance(decision, Approve | Deny)
        return decision

    client = ScriptedClient(script(case))
    inline, _ = agents(case)
    return await execute_agent(inline, "Ticket", client=client, approve=approve), client


async def run_pausing(case: Case) -> tuple[PausableResult[Triage], ScriptedClient, int]:
    decisions, pages = iter(case.decisions), iter(case.pages)
    client = ScriptedClient(script(case))
    _, pausing = agents(case)
    result = await execute_agent(pausing, "Ticket", client=client, pausable=True)
    pauses = 0
    while isinstance(result, ExecutePaused):
        pauses += 1
        state = PausedState.from_json(result.state.to_json())  # stored and read back, as between two processes
        decided: dict[str, Decision] = {
            call.id: next(decisions) if call.kind == "approval" else ExternalResult(next(pages))
            for call in result.pending
        }
        result = await execute_agent(pausing, resume=state, decisions=decided, client=client)
    return result, client, pauses


@PROFILE
@given(cases())
def test_pausing_properties_resumed_run_sends_what_the_run_with_known_decisions_sends(case: Case) -> None:
    """Request by request, the paused and resumed run and the inline run send the same thing, and end alike."""
    inline, inline_client = asyncio.run(run_inline(case))
    paused, paused_client, pauses = asyncio.run(run_pausing(case))
    assert len(paused_client.requests) == len(inline_client.requests)
    for sent_paused, sent_inline in zip(paused_client.requests, inline_client.requests, strict=True):
        assert sent_paused["messages"] == sent_inline["messages"]
        assert sent_paused["system"] == sent_inline["system"]
        assert sent_paused["tools"] == sent_inline["tools"]
    assert paused.status == inline.status
    assert paused.metadata.messages == inline.metadata.messages
    assert paused.metadata.tokens == inline.metadata.tokens
    assert paused.metadata.iterations == inline.metadata.iterations
    messages = cast("list[dict[str, Any]]", inline.metadata.messages)
    fetched = sum(  # the calls of the external tool the run reached: the inline run ran them itself
        block["name"] == "fetch"
        for message in messages
        if message["role"] == "assistant"
        for block in message["content"]
        if block["type"] == "tool_use"
    )
    assert paused.metadata.tool_calls == inline.metadata.tool_calls - fetched  # an external call runs elsewhere
    assert [(r.number, r.iterations, r.outcome) for r in paused.metadata.attempts] == [
        (r.number, r.iterations, r.outcome) for r in inline.metadata.attempts
    ]
    assert paused.metadata.pauses == pauses

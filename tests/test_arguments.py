"""The checks on ``execute_agent``'s arguments: each wrong argument is a clear error, raised before anything is sent."""

from __future__ import annotations

import copy
import pickle
import threading
from typing import Any

import anthropic
import httpx2
import pytest
from support import GOOD, Triage, triage_agent

from typedagent import OutputTool, RunContext, define_agent, execute_agent, tool
from typedagent._run.arguments import MISSING
from typedagent.testing import ScriptedClient, output_call, tool_call


async def _execute(client: Any = None, **kwargs: Any) -> ScriptedClient:
    """Execute with ``kwargs`` on a scripted client (or ``client``); return the scripted client."""
    scripted = ScriptedClient([output_call(GOOD)])
    await execute_agent(triage_agent(), "Ticket: VPN drops", client=scripted if client is None else client, **kwargs)
    return scripted


@pytest.mark.parametrize("event", [True, object(), "stop", threading.Lock()])
async def test_arguments_abort_event_must_be_an_event(event: object) -> None:
    """An abort_event that is not an event is a TypeError naming what to pass."""
    with pytest.raises(TypeError, match=r"abort_event must be a threading\.Event or an asyncio\.Event, got"):
        await _execute(abort_event=event)


async def test_arguments_abort_event_duck_typed_is_accepted() -> None:
    """Anything with an ``is_set()`` method (a multiprocessing event, say) is polled like a threading.Event."""

    class Flag:
        def is_set(self) -> bool:
            return False

    scripted = await _execute(abort_event=Flag())
    assert len(scripted.requests) == 1


@pytest.mark.parametrize(
    ("client", "message"),
    [
        (object(), r"client must have an async messages\.create\(\.\.\.\) \(an AsyncAnthropic"),
        (
            ScriptedClient,
            r"client is the class ScriptedClient: pass an instance, e\.g\. client=ScriptedClient\(\.\.\.\)",
        ),
        (42, r"client must have an async messages\.create"),
    ],
)
async def test_arguments_client_must_be_a_client_instance(client: object, message: str) -> None:
    """An object without messages.create, or a client class instead of an instance, is a TypeError."""
    with pytest.raises(TypeError, match=message):
        await _execute(client=client)


@pytest.mark.parametrize("kind", ["Anthropic", "beta"])
async def test_arguments_sync_anthropic_client_rejected_before_sending(kind: str) -> None:
    """A synchronous anthropic.Anthropic client is a TypeError saying to use AsyncAnthropic; nothing is sent."""
    sent: list[httpx2.Request] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        return httpx2.Response(500)

    client = anthropic.Anthropic(api_key="test-key", http_client=httpx2.Client(transport=httpx2.MockTransport(handle)))
    with pytest.raises(
        TypeError, match=r"synchronous Anthropic SDK client \((Anthropic|Beta)\): use anthropic\.AsyncAnthropic"
    ):
        await _execute(client=client if kind == "Anthropic" else client.beta)
    assert sent == []


@pytest.mark.parametrize(
    ("history", "error", "message"),
    [
        ([{"role": "user"}], TypeError, r"message_history\[0\] has no 'content'"),
        ([{"role": "user", "content": 42}], TypeError, r"message_history\[0\]\['content'\] must be a str or a list"),
        (["hello"], TypeError, r"message_history must be a list of Messages API messages"),
        ("hello", TypeError, r"message_history must be a list of Messages API messages"),
        (
            [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "toolu_hist", "name": "lookup", "input": {}}],
                },
            ],
            ValueError,
            r"message_history ends with an assistant turn whose tool_use 'toolu_hist' has no tool_result",
        ),
    ],
)
async def test_arguments_message_history_checked(history: Any, error: type[Exception], message: str) -> None:
    """A history entry without content, with odd content, or ending in an unanswered tool_use is refused at once."""
    scripted = ScriptedClient([output_call(GOOD)])
    with pytest.raises(error, match=message):
        await execute_agent(triage_agent(), "x", client=scripted, message_history=history)
    assert scripted.requests == []


async def test_arguments_history_ending_in_a_plain_assistant_turn_runs() -> None:
    """A history ending in an assistant turn without tool calls is valid and runs."""
    history: list[Any] = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
    ]
    scripted = await _execute(message_history=history)
    assert scripted.requests[0]["messages"][:2] == history


@pytest.mark.parametrize(
    "roundtrip",
    [
        lambda value: pickle.loads(pickle.dumps(value)),
        copy.copy,
        copy.deepcopy,
    ],
    ids=["pickle", "copy", "deepcopy"],
)
async def test_arguments_deps_not_passed_survives_pickling_and_copying(roundtrip: Any) -> None:
    """The "deps not passed" sentinel stays itself through pickle and copy (DBOS pickles a workflow's arguments).

    An agent without deps still sees ``ctx.deps is None``; one with a ``deps_type`` is still told to pass deps.
    """
    assert roundtrip(MISSING) is MISSING
    seen: list[object] = []

    @tool
    def peek(ctx: RunContext[None]) -> str:
        """Peek at the deps."""
        seen.append(ctx.deps)
        return "ok"

    agent = define_agent(name="peek", model="claude-sonnet-4-6", output=OutputTool(Triage), helpers=[peek])
    result = await execute_agent(
        agent,
        "Ticket: VPN drops",
        deps=roundtrip(MISSING),
        client=ScriptedClient([tool_call("peek", {}), output_call(GOOD)]),
    )
    assert result.ok is True
    assert seen == [None]
    with_deps = define_agent(name="with-deps", model="claude-sonnet-4-6", output=OutputTool(Triage), deps_type=int)
    with pytest.raises(TypeError, match=r"declares deps_type=int: pass execute_agent\(\.\.\., deps=\.\.\.\)"):
        await execute_agent(with_deps, "Ticket", deps=roundtrip(MISSING), client=ScriptedClient([output_call(GOOD)]))

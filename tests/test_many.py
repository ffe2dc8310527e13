"""``execute_many``: many executions, bounded, read lazily, in completion order, each callback knowing its input."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from support import GOOD, Triage, triage_agent

from typedagent import (
    AgentErrorCode,
    ExecuteCallbacks,
    ExecutionState,
    ManyResult,
    RunContext,
    RunInput,
    ToolCall,
    define_agent,
    execute_agent,
    execute_many,
    execute_many_sync,
    tool,
)
from typedagent.testing import (
    FakeAnthropicServer,
    FunctionClient,
    ScriptedClient,
    ScriptError,
    output_call,
    tool_call,
)


def prompt_of(request: dict[str, Any]) -> str:
    content = request["messages"][0]["content"]
    return content if isinstance(content, str) else content[0]["text"]


class Tracker:
    """A model that answers each prompt after a delay named in it, counting calls in flight."""

    def __init__(self, delays: dict[str, float] | None = None) -> None:
        self.delays = delays or {}
        self.in_flight = 0
        self.most = 0
        self.calls = 0
        self.cancelled = 0

    async def answer(self, request: dict[str, Any]) -> Any:
        self.calls += 1
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(self.delays.get(prompt_of(request), 0.001))
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.in_flight -= 1
        return output_call(Triage(severity=2, summary=prompt_of(request)))


async def collect(stream: AsyncIterator[ManyResult[Triage]]) -> list[ManyResult[Triage]]:
    return [result async for result in stream]


async def test_execute_many_yields_results_in_completion_order() -> None:
    """Each input's result comes as soon as it finishes, with its index, its key and its own output."""
    model = Tracker({"slow": 0.3, "medium": 0.15, "fast": 0.01})
    inputs = ["slow", RunInput("medium", key="m"), "fast"]
    # No limiter: with one, the first call goes alone (to learn the limits) and would finish first.
    stream = execute_many(triage_agent(), inputs, client=FunctionClient(model.answer), rate_limits=None)
    results = await collect(stream)
    assert [(r.index, r.key, r.resumed) for r in results] == [(2, "#2", False), (1, "m", False), (0, "#0", False)]
    assert [r.result.unwrap().summary for r in results] == ["fast", "medium", "slow"]
    alone = await execute_agent(triage_agent(), "fast", client=FunctionClient(model.answer))
    assert results[0].result.metadata.iterations == alone.metadata.iterations == 1
    assert results[0].result.metadata.messages[0] == alone.metadata.messages[0] == {"role": "user", "content": "fast"}


def test_execute_many_sync_returns_results_in_input_order() -> None:
    """The blocking form returns every result, in the order of the inputs."""
    model = Tracker({"a": 0.2, "b": 0.1, "c": 0.0})
    results = execute_many_sync(triage_agent(), ["a", "b", "c"], client=FunctionClient(model.answer))
    assert [(r.index, r.result.unwrap().summary) for r in results] == [(0, "a"), (1, "b"), (2, "c")]


async def test_execute_many_sync_refuses_a_running_loop() -> None:
    """Inside an event loop the blocking form says to use the async one."""
    with pytest.raises(RuntimeError, match="use `async for"):
        execute_many_sync(triage_agent(), ["a"], client=ScriptedClient([]))


@pytest.mark.parametrize("paced", [True, False])
async def test_execute_many_caps_executions_in_flight(paced: bool) -> None:
    """Never more than ``concurrency`` executions (so API calls) at once, limiter on or off."""
    model = Tracker()
    options: dict[str, Any] = {} if paced else {"rate_limits": None}
    inputs = [f"t{i}" for i in range(60)]
    results = await collect(
        execute_many(triage_agent(), inputs, client=FunctionClient(model.answer), concurrency=7, **options)
    )
    assert sorted(r.result.unwrap().summary for r in results) == sorted(inputs)
    assert model.most == 7


async def test_execute_many_reads_a_huge_input_lazily() -> None:
    """A million-input generator is read only as far as there is room.

    Read ahead of what was handed over: the executions in flight (``concurrency``) plus, at most, the
    results of one round of finished executions whose replacements started before they were yielded.
    """
    pulled = 0

    def inputs() -> Iterator[str]:
        nonlocal pulled
        for i in range(1_000_000):
            pulled += 1
            yield f"ticket {i}"

    model = Tracker()
    seen = 0
    async with contextlib.aclosing(
        execute_many(triage_agent(), inputs(), client=FunctionClient(model.answer), concurrency=8)
    ) as stream:
        async for _ in stream:
            seen += 1
            assert pulled <= seen + 2 * 8
            if seen == 200:
                break
    assert model.in_flight == 0  # stopping early cancelled the executions in flight
    assert pulled <= 200 + 2 * 8


async def test_execute_many_reads_an_async_source() -> None:
    """An async iterable is read one item at a time, as room frees up."""
    pulled = 0

    async def inputs() -> AsyncIterator[str | RunInput[None]]:
        nonlocal pulled
        for i in range(30):
            pulled += 1
            await asyncio.sleep(0)
            yield f"t{i}" if i % 2 else RunInput(f"t{i}", key=f"k{i}")

    model = Tracker()
    results = await collect(execute_many(triage_agent(), inputs(), client=FunctionClient(model.answer), concurrency=4))
    assert sorted(r.key for r in results) == sorted(f"k{i}" if i % 2 == 0 else f"#{i}" for i in range(30))
    assert model.most <= 4
    assert pulled == 30


async def test_execute_many_callbacks_know_their_input() -> None:
    """Every callback's state carries the key of the input its execution serves."""
    seen: list[tuple[str | None, str]] = []

    def on_tool_call(state: ExecutionState, event: ToolCall) -> None:
        seen.append((state.key, event.input["summary"]))

    model = Tracker({"a": 0.05})
    callbacks = ExecuteCallbacks(on_tool_call=on_tool_call)
    inputs = [RunInput("a", key="first"), "b"]
    await collect(execute_many(triage_agent(), inputs, client=FunctionClient(model.answer), callbacks=callbacks))
    assert sorted(seen, key=str) == [("#1", "b"), ("first", "a")]


@dataclass
class Account:
    owner: str


@tool
def lookup(ctx: RunContext[Account]) -> str:
    """Who owns this account."""
    return ctx.deps.owner


def account_agent() -> Any:
    return define_agent(
        name="accounts", model="claude-sonnet-4-6", output=triage_agent().output, helpers=[lookup], deps_type=Account
    )


async def test_execute_many_passes_each_input_its_deps() -> None:
    """``RunInput(deps=...)`` reaches that input's tools and nobody else's."""

    def model(request: dict[str, Any]) -> Any:
        messages = request["messages"]
        if len(messages) == 1:
            return tool_call("lookup", {})
        return output_call(Triage(severity=1, summary=messages[-1]["content"][0]["content"]))

    inputs = [RunInput(f"account {i}", deps=Account(owner=f"owner-{i}"), key=f"a{i}") for i in range(5)]
    results = await collect(execute_many(account_agent(), inputs, client=FunctionClient(model)))
    assert sorted((r.key, r.result.unwrap().summary) for r in results) == [(f"a{i}", f"owner-{i}") for i in range(5)]


async def test_execute_many_bad_input_stops_reading_and_raises_after_the_rest() -> None:
    """An unusable input stops the run once the executions in flight have finished and been yielded."""
    model = Tracker({"a": 0.1})
    yielded: list[str] = []
    stream = execute_many(triage_agent(), ["a", "b", 42, "never"], client=FunctionClient(model.answer))

    async def consume() -> None:
        async for result in stream:
            yielded.append(result.key)

    with pytest.raises(TypeError, match=r"input 2 is a int: each input must be a prompt"):
        await consume()
    assert sorted(yielded) == ["#0", "#1"]
    assert model.calls == 2


@pytest.mark.parametrize(
    ("inputs", "error", "message"),
    [
        (["ok", "  "], TypeError, "input 1 has an empty prompt"),
        ([RunInput("a", key="x"), RunInput("b", key="x")], ValueError, "key 'x' is used twice"),
        ([RunInput("a", key="#1"), "b"], ValueError, "key '#1' is used twice"),
    ],
)
async def test_execute_many_rejects_unusable_inputs(inputs: list[Any], error: type[Exception], message: str) -> None:
    """Empty prompts and duplicate keys are errors that name the input."""
    model = Tracker()
    with pytest.raises(error, match=message):
        await collect(execute_many(triage_agent(), inputs, client=FunctionClient(model.answer)))


async def test_execute_many_needs_deps_when_the_agent_does() -> None:
    """A bare prompt for an agent with ``deps_type`` is refused, naming what to pass."""
    stream = execute_many(account_agent(), ["no deps"], client=ScriptedClient([]))
    with pytest.raises(TypeError, match=r"input 0 has no deps, but agent 'accounts' declares deps_type=Account"):
        await collect(stream)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"agent": "triage"}, "needs an AgentDefinition"),
        ({"inputs": "one prompt"}, "inputs must be an iterable"),
        ({"inputs": 3}, "inputs must be an iterable"),
        ({"concurrency": 0}, "concurrency must be an int >= 1"),
        ({"concurrency": True}, "concurrency must be an int >= 1"),
        ({"rate_limits": {"requests_per_minute": 5}}, "rate_limits must be a RateLimits"),
        ({"limits": 5}, "limits must be an ExecutionLimits"),
        ({"callbacks": print}, "callbacks must be an ExecuteCallbacks"),
    ],
)
def test_execute_many_checks_its_arguments(kwargs: dict[str, Any], message: str) -> None:
    """Wrong argument types are reported when it is called, before anything runs."""
    arguments: dict[str, Any] = {"agent": triage_agent(), "inputs": ["a"], **kwargs}
    with pytest.raises(TypeError, match=message):
        execute_many(arguments.pop("agent"), arguments.pop("inputs"), **arguments)


def test_run_input_key_must_be_a_non_empty_string() -> None:
    """A key is a non-empty str (or None for a derived one)."""
    with pytest.raises(TypeError, match=r"RunInput\.key must be a non-empty str"):
        RunInput("a", key="")


@pytest.mark.parametrize("kind", ["asyncio", "threading"])
async def test_execute_many_abort_stops_new_inputs_and_cancels_the_rest(kind: str) -> None:
    """The abort event starts nothing more; executions in flight end as EXECUTION_CANCELLED."""
    abort: asyncio.Event | threading.Event = asyncio.Event() if kind == "asyncio" else threading.Event()
    model = Tracker({f"t{i}": 10.0 for i in range(2, 100)})
    codes: list[str] = []
    async for result in execute_many(
        triage_agent(), [f"t{i}" for i in range(100)], client=FunctionClient(model.answer), abort_event=abort
    ):
        codes.append("ok" if result.result.ok else str(result.result.error.code))
        if len(codes) == 2:
            abort.set()
    assert codes[:2] == ["ok", "ok"]
    assert set(codes[2:]) == {AgentErrorCode.EXECUTION_CANCELLED}
    # The default concurrency (64), plus the two that replaced the finished ones before the abort; nothing
    # starts after it (one replacement may be cancelled while still waiting for the limiter).
    assert len(codes) == 66
    assert 65 <= model.calls <= 66


async def test_execute_many_abort_while_waiting_for_an_async_source() -> None:
    """An abort also ends a run that is waiting on a slow async source."""
    abort = asyncio.Event()

    async def inputs() -> AsyncIterator[str]:
        yield "first"
        await asyncio.sleep(30)
        yield "never"

    async def stop_soon() -> None:
        await asyncio.sleep(0.2)
        abort.set()

    stopper = asyncio.ensure_future(stop_soon())
    model = Tracker()
    results = await asyncio.wait_for(
        collect(execute_many(triage_agent(), inputs(), client=FunctionClient(model.answer), abort_event=abort)), 5
    )
    await stopper
    assert [r.key for r in results] == ["#0"]


async def test_execute_many_test_double_errors_propagate() -> None:
    """A script that runs out is a test bug: it is raised, not turned into a result."""
    client = ScriptedClient([output_call(GOOD)])
    with pytest.raises(ScriptError):
        await collect(execute_many(triage_agent(), ["a", "b"], client=client, concurrency=1))


async def test_execute_many_default_client_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``client``, one ``AsyncAnthropic()`` from the environment serves every input."""
    async with FakeAnthropicServer([output_call(GOOD)], per_conversation=True) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        results = await collect(execute_many(triage_agent(), ["a", "b", "c"]))
    assert [r.result.unwrap() for r in results] == [GOOD] * 3
    assert server.requests_served == 3


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_execute_many_source_errors_surface_after_the_rest(kind: str) -> None:
    """An input source that raises stops reading; what was started finishes and is yielded, then it raises."""

    def sync_inputs() -> Iterator[str]:
        yield "a"
        yield "b"
        raise OSError("the input file went away")

    async def async_inputs() -> AsyncIterator[str]:
        for item in sync_inputs():
            yield item

    model = Tracker()
    yielded: list[str] = []
    source: Any = sync_inputs() if kind == "sync" else async_inputs()

    async def consume() -> None:
        async for result in execute_many(triage_agent(), source, client=FunctionClient(model.answer)):
            yielded.append(result.key)

    with pytest.raises(OSError, match="the input file went away"):
        await consume()
    assert sorted(yielded) == ["#0", "#1"]


async def test_execute_many_uses_the_client_of_use_client() -> None:
    """Without ``client``, execute_many serves every input from the client ``use_client`` set, and leaves it open."""
    from typedagent.testing import use_client

    client = ScriptedClient([output_call(GOOD)] * 3)
    with use_client(client):
        results = await collect(execute_many(triage_agent(), ["a", "b", "c"]))
    assert [r.result.unwrap() for r in results] == [GOOD] * 3
    assert len(client.requests) == 3

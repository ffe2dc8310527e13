"""Tool results rendered as part of the tool call: within its limits, off the loop when large, lazily for iterators."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import GOOD, results_of, run, triage_agent

from typedagent import AgentErrorCode, ExecutionLimits, execute_agent, tool
from typedagent._run.rendering import _render_large, render_result
from typedagent.testing import ScriptedClient, output_call, tool_call


@tool
def endless() -> Iterator[int]:
    """Returns an endless generator."""
    return itertools.count()


SLOW_RENDERS = threading.Semaphore(0)
"""Released once per slow row rendered: the abandoned renders run on in their worker threads."""


@pytest.fixture(autouse=True, scope="module")
def _abandoned_renders_finish() -> Iterator[None]:
    """Wait for the slow rows the tests abandoned to finish rendering before the module ends.

    A daemon thread still inside pydantic_core's serializer when the interpreter exits is torn down mid-call,
    which aborts the process ("FATAL: exception not rethrown") after every test has passed.
    """
    yield
    for _ in range(SLOW_ROWS_STARTED[0]):
        SLOW_RENDERS.acquire(timeout=5)


SLOW_ROWS_STARTED = [0]


@tool(timeout_s=0.1)
async def stalls_while_rendering() -> list[object]:
    """Returns rows that take half a second each to render (their str() is slow)."""

    class Slow:
        def __str__(self) -> str:
            time.sleep(0.5)
            SLOW_RENDERS.release()
            return "slow"

    SLOW_ROWS_STARTED[0] += 3
    return [Slow() for _ in range(3)]


@tool(name="stalls_while_rendering")
async def stalls_while_rendering_long() -> list[object]:
    """Like stalls_while_rendering, with no timeout of its own."""
    return await stalls_while_rendering.fn()


async def test_rendering_endless_generator_is_read_only_up_to_the_cap() -> None:
    """A generator is read lazily until the result passes max_tool_result_chars; the run goes on."""
    client = ScriptedClient([tool_call("endless"), output_call(GOOD)])
    result = await run(triage_agent(helpers=[endless], max_tool_result_chars=200), client)
    assert result.ok
    content = results_of(result.metadata.messages[2])[0][1]
    assert content.startswith("[0,1,2,3,")
    assert content.endswith("the iterator was not read further ...]")
    assert len(content) == 200


def test_rendering_large_values_stop_at_the_cap_and_say_so() -> None:
    """Large lists, dicts and iterators render item by item and stop at the cap, saying where; small ones whole."""
    assert _render_large(iter([1, 2, 3]), 100) == "[1,2,3]"
    assert _render_large({"a": 1, "b": [2]}, 100) == render_result({"a": 1, "b": [2]}) == '{"a":1,"b":[2]}'
    rows = _render_large(list(range(1_000_000)), 100)
    assert rows.startswith("[0,1,2,")
    assert rows.endswith("\n[... truncated at 100 characters: the rest was not rendered ...]")
    assert len(rows) == 100
    assert _render_large(range(10**12), 100).endswith("the rest was not rendered ...]")
    endless = _render_large(itertools.count(), 100)
    assert endless.endswith("\n[... truncated at 100 characters: the iterator was not read further ...]")


async def test_rendering_a_huge_result_does_not_block_the_loop() -> None:
    """Five million rows render off the loop and only as far as the cap: the loop keeps ticking every 10 ms."""
    rows = list(range(5_000_000))

    @tool
    async def huge() -> list[int]:
        """Returns five million rows."""
        return rows

    done = asyncio.Event()
    gaps: list[float] = []

    async def ticker() -> None:
        last = time.monotonic()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticking = asyncio.create_task(ticker())
    result = await run(triage_agent(helpers=[huge]), ScriptedClient([tool_call("huge"), output_call(GOOD)]))
    done.set()
    await ticking
    assert result.ok
    assert len(results_of(result.metadata.messages[2])[0][1]) == 100_000
    # Rendering all of it on the loop took about a second; what is left is the garbage collector walking the
    # five-million-element list (whoever holds it), which a loaded machine stretches.
    assert max(gaps) < 0.25


async def test_rendering_is_interrupted_by_abort_within_100_ms() -> None:
    """An abort while a result renders ends the run within 100 ms: rendering is part of the tool call."""
    stop = asyncio.Event()

    async def abort_soon() -> float:
        await asyncio.sleep(0.1)
        stop.set()
        return time.monotonic()

    aborting = asyncio.create_task(abort_soon())
    client = ScriptedClient([tool_call("stalls_while_rendering"), output_call(GOOD)])
    agent = triage_agent(helpers=[stalls_while_rendering_long])
    result = await execute_agent(agent, "go", client=client, abort_event=stop)
    returned = time.monotonic()
    assert not result.ok
    assert result.error.code is AgentErrorCode.EXECUTION_CANCELLED
    assert returned - await aborting < 0.1


async def test_rendering_counts_against_the_tools_own_timeout() -> None:
    """Rendering is part of the tool call: a result that cannot be rendered within timeout_s is abandoned."""
    client = ScriptedClient([tool_call("stalls_while_rendering"), output_call(GOOD)])
    started = time.monotonic()
    result = await run(triage_agent(helpers=[stalls_while_rendering]), client, limits=ExecutionLimits(timeout_s=30))
    assert result.ok
    assert time.monotonic() - started < 0.9
    assert results_of(result.metadata.messages[2]) == [
        ("toolu_01_001", "Error: tool 'stalls_while_rendering' did not finish within 0.1 s and was abandoned.", True)
    ]


@settings(max_examples=200, deadline=None)
@given(
    items=st.lists(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=1_200) | st.lists(st.integers()),
        max_size=80,
    )
)
def test_a_flat_list_seen_small_at_a_glance_is_small_by_the_walk_too(items: list[object]) -> None:
    """The shortcut for a short list of short scalars (most results) never renders inline what the walk would not."""
    from typedagent._run.rendering import _flat, _small

    if _flat(items):
        assert _small(tuple(items))  # a tuple takes the full walk
    assert _small(items) == (_flat(items) or _small(tuple(items)))

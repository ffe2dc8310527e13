"""Tool safety (issue 5, point 3).

Per-tool timeouts, the result-size cap, containment of user-code exceptions, and the
``BaseException``s that must propagate.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from typedagent import (
    AgentDefinition,
    AgentErrorCode,
    AttemptOutcome,
    ExecuteCallbacks,
    ExecuteResult,
    ExecutionLimits,
    HelperTool,
    OutputRejected,
    OutputTool,
    define_agent,
    execute_agent,
    execute_agent_sync,
    tool,
)
from typedagent.testing import (
    ScriptedClient,
    assert_valid_conversation,
    output_call,
    response,
    submit_call,
    tool_call,
)


class Out(BaseModel):
    n: int


GOOD = Out(n=1)


def agent(*helpers: Any, **overrides: Any) -> AgentDefinition[Out, None]:
    params: dict[str, Any] = {"name": "safety", "model": "claude-sonnet-4-5", "output": OutputTool(Out)}
    params.update(overrides)
    return define_agent(helpers=list(helpers), **params)


def reflecting(handler: Callable[[Out], Any]) -> OutputTool[Out]:
    return OutputTool(Out, reflection_handler=handler)


def results(result: ExecuteResult[Any], index: int) -> list[tuple[str, bool]]:
    """``(content, is_error)`` of every tool_result in message ``index``."""
    blocks: list[dict[str, Any]] = result.metadata.messages[index]["content"]  # type: ignore[assignment]
    return [(block["content"], block.get("is_error", False)) for block in blocks if block["type"] == "tool_result"]


async def run(definition: AgentDefinition[Out, None], script: list[Any], **kwargs: Any) -> ExecuteResult[Out]:
    result = await execute_agent(definition, "go", client=ScriptedClient(script), **kwargs)
    assert_valid_conversation(result.metadata.messages)
    return result


# -- per-tool timeout ----------------------------------------------------------------------------


async def test_tool_timeout_hung_async_handler_becomes_error_result_and_run_goes_on() -> None:
    """An async handler past its timeout_s is abandoned with an error result; its batch mates still answer."""
    never = asyncio.Event()

    @tool(timeout_s=0.05)
    async def hang() -> str:
        """Never returns."""
        await never.wait()
        return "unreachable"

    @tool
    async def quick() -> str:
        """Returns at once."""
        return "quick result"

    result = await run(agent(hang, quick), [response(tool_call("hang"), tool_call("quick")), output_call(GOOD)])
    assert result.ok
    assert result.output == GOOD
    assert results(result, 2) == [
        ("Error: tool 'hang' did not finish within 0.05 s and was abandoned.", True),
        ("quick result", False),
    ]


async def test_tool_timeout_hung_sync_handler_in_worker_thread() -> None:
    """A sync handler blocked in its worker thread is abandoned after timeout_s; the run completes."""
    release = threading.Event()

    @tool(timeout_s=0.05)
    def block() -> str:
        """Blocks its thread."""
        release.wait(10)
        return "late"

    try:
        result = await run(agent(block), [tool_call("block"), output_call(GOOD)])
    finally:
        release.set()
    assert result.ok
    assert results(result, 2) == [("Error: tool 'block' did not finish within 0.05 s and was abandoned.", True)]


async def test_tool_timeout_handler_that_swallows_cancellation_is_still_abandoned() -> None:
    """A handler ignoring CancelledError cannot hold the execution past its timeout (asyncio.wait_for would)."""
    release, finished = asyncio.Event(), asyncio.Event()
    swallowed: list[bool] = []

    @tool(timeout_s=0.05)
    async def stubborn() -> str:
        """Ignores cancellation until released."""
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            swallowed.append(True)
            await release.wait()  # keeps running after its cancellation: the loop must not wait for this
        finished.set()
        return "late"

    result = await asyncio.wait_for(run(agent(stubborn), [tool_call("stubborn"), output_call(GOOD)]), 5)
    assert result.ok
    assert results(result, 2) == [("Error: tool 'stubborn' did not finish within 0.05 s and was abandoned.", True)]
    assert swallowed == [True]
    assert not finished.is_set()
    release.set()
    await asyncio.wait_for(finished.wait(), 5)


async def test_tool_timeout_on_raw_helper_tool() -> None:
    """HelperTool(timeout_s=...) bounds a raw handler the same way."""
    never = asyncio.Event()

    async def handler(tool_input: dict[str, Any]) -> str:
        await never.wait()
        return "unreachable"

    raw = HelperTool(
        definition={"name": "raw", "description": "Hangs.", "input_schema": {"type": "object"}},
        handler=handler,
        timeout_s=0.05,
    )
    result = await run(agent(raw), [tool_call("raw"), output_call(GOOD)])
    assert result.ok
    assert results(result, 2) == [("Error: tool 'raw' did not finish within 0.05 s and was abandoned.", True)]


async def test_tool_timeout_error_raised_by_the_handler_itself_is_a_plain_error() -> None:
    """A TimeoutError the handler raises (an upstream call timing out) is its message, not 'abandoned'."""

    @tool(timeout_s=5)
    async def upstream() -> str:
        """Calls a slow service."""
        raise TimeoutError("the inventory service timed out")

    @tool
    def upstream_no_limit() -> str:
        """Same, without a timeout_s."""
        raise TimeoutError("the inventory service timed out")

    script = [response(tool_call("upstream"), tool_call("upstream_no_limit")), output_call(GOOD)]
    result = await run(agent(upstream, upstream_no_limit), script)
    assert results(result, 2) == [
        ("Error: the inventory service timed out", True),
        ("Error: the inventory service timed out", True),
    ]


async def test_tool_timeout_fast_handler_is_unaffected() -> None:
    """A handler finishing inside its timeout_s returns its value normally."""

    @tool(timeout_s=5)
    async def fast(x: int) -> int:
        """Doubles."""
        return 2 * x

    result = await run(agent(fast), [tool_call("fast", {"x": 21}), output_call(GOOD)])
    assert results(result, 2) == [("42", False)]


# -- result-size cap -----------------------------------------------------------------------------

LIMIT = 100
MARKER = "\n[... truncated: {cut} of {total} characters cut ...]"


def capped(text: str) -> str:
    return text[:LIMIT] + MARKER.format(cut=len(text) - LIMIT, total=len(text))


async def test_tool_result_cap_applies_to_results_and_error_messages() -> None:
    """Oversized results and oversized exception messages are both cut to the cap with a visible marker."""

    @tool
    def big() -> str:
        """Returns a lot."""
        return "r" * 1_000

    @tool
    def big_error() -> str:
        """Fails with a huge message."""
        raise ValueError("e" * 1_000_000)

    @tool
    def exact() -> str:
        """Returns exactly the cap."""
        return "x" * LIMIT

    script = [response(tool_call("big"), tool_call("big_error"), tool_call("exact")), output_call(GOOD)]
    result = await run(agent(big, big_error, exact, max_tool_result_chars=LIMIT), script)
    assert results(result, 2) == [
        (capped("r" * 1_000), False),
        (capped("Error: " + "e" * 1_000_000), True),
        ("x" * LIMIT, False),
    ]


async def test_tool_result_cap_applies_to_reflection_previews_and_their_errors() -> None:
    """The reflection handler's text, and its exception message, are capped like helper results."""
    calls: list[int] = []

    def preview(out: Out) -> str:
        calls.append(out.n)
        if out.n == 2:
            raise RuntimeError("p" * 10_000)
        return "v" * 5_000

    script = [output_call(Out(n=1)), output_call(Out(n=2)), submit_call()]
    result = await run(agent(output=reflecting(preview), max_tool_result_chars=LIMIT), script)
    assert result.ok
    assert result.output == Out(n=2)
    assert results(result, 2) == [(capped("v" * 5_000), False)]
    failed = (
        f"Error: the reflection handler failed ({'p' * 10_000}). Your output was kept as the candidate; call "
        "submit to have it validated, or call the output tool again to change it."
    )
    assert results(result, 4) == [(capped(failed), True)]
    assert calls == [1, 2]


# -- containment of user-code exceptions -----------------------------------------------------------


class BrokenStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("__str__ itself fails")


class Custom(Exception):
    pass


def _raiser(exc: BaseException) -> Callable[[], None]:
    def fail() -> None:
        raise exc

    return fail


ERRORS: list[tuple[BaseException, str]] = [
    (ValueError("bad value"), "Error: bad value"),
    (Custom(""), "Error: Custom"),
    (BrokenStr(), "Error: <exception str() failed>"),
    (OSError(5, "disk gone"), "Error: [Errno 5] disk gone"),
    (KeyError("missing"), "Error: 'missing'"),
    (RecursionError("too deep"), "Error: too deep"),
    (MemoryError(), "Error: MemoryError"),
]


@pytest.mark.parametrize(("exc", "expected"), ERRORS, ids=[type(e).__name__ for e, _ in ERRORS])
@pytest.mark.parametrize("flavour", ["sync", "async"])
async def test_tool_handler_exceptions_of_any_kind_become_error_results(
    exc: BaseException, expected: str, flavour: str
) -> None:
    """Whatever Exception a handler raises (even one whose __str__ fails) is an is_error result."""
    fail = _raiser(exc)
    if flavour == "sync":

        @tool
        def broken() -> str:
            """Fails."""
            fail()
            return "unreachable"

    else:

        @tool
        async def broken() -> str:
            """Fails."""
            fail()
            return "unreachable"

    result = await run(agent(broken), [tool_call("broken"), output_call(GOOD)])
    assert result.ok
    assert results(result, 2) == [(expected, True)]


async def test_tool_handler_stop_iteration_does_not_hang_the_run() -> None:
    """A sync handler raising StopIteration (a bare next() on an empty iterator) is an error result, not a hang."""

    @tool
    def first_match() -> str:
        """Finds nothing."""
        return str(next(iter([])))

    @tool
    async def first_match_async() -> str:
        """Finds nothing either."""
        raise StopIteration

    script = [response(tool_call("first_match"), tool_call("first_match_async")), output_call(GOOD)]
    result = await asyncio.wait_for(run(agent(first_match, first_match_async), script), 5)
    assert results(result, 2) == [
        ("Error: first_match raised StopIteration", True),
        ("Error: coroutine raised StopIteration", True),
    ]


async def test_tool_handler_unserialisable_result_becomes_error_result() -> None:
    """A result that cannot be rendered (a circular structure) is an error result, not a crash."""

    @tool
    def circular() -> Any:
        """Returns a cycle."""
        cycle: list[Any] = []
        cycle.append(cycle)
        return cycle

    result = await run(agent(circular), [tool_call("circular"), output_call(GOOD)])
    [(content, is_error)] = results(result, 2)
    assert is_error
    assert content.startswith("Error: ")
    assert "ircular reference" in content


@pytest.mark.parametrize(("exc", "expected"), ERRORS[:3], ids=[type(e).__name__ for e, _ in ERRORS[:3]])
async def test_reflection_handler_exceptions_are_contained(exc: BaseException, expected: str) -> None:
    """A failing reflection handler is an error result; the candidate is kept and submit validates it."""
    fail = _raiser(exc)

    def preview(out: Out) -> str:
        fail()
        return "unreachable"

    result = await run(agent(output=reflecting(preview)), [output_call(GOOD), submit_call()])
    assert result.ok
    assert result.output == GOOD
    message = expected.removeprefix("Error: ")
    assert results(result, 2) == [
        (
            f"Error: the reflection handler failed ({message}). Your output was kept as the candidate; call "
            "submit to have it validated, or call the output tool again to change it.",
            True,
        )
    ]


async def test_callbacks_exceptions_of_any_kind_are_recorded_on_every_hook() -> None:
    """Every hook, sync or async, may raise anything (even a broken __str__): recorded, the run goes on."""

    def sync_hook(state: Any, event: Any) -> None:
        raise BrokenStr()

    async def async_hook(state: Any, event: Any) -> None:
        raise Custom("async hook failed")

    callbacks = ExecuteCallbacks(
        on_attempt_start=sync_hook,
        on_model_response=async_hook,
        on_tool_call=sync_hook,
        on_tool_result=async_hook,
        on_validation_failure=sync_hook,
    )

    def reject_first(out: Out) -> None:
        if out.n == 0:
            raise OutputRejected("n must not be 0")

    script = [output_call(Out(n=0)), output_call(GOOD)]
    result = await run(agent(validators=[reject_first]), script, callbacks=callbacks)
    assert result.ok
    recorded = [(e.callback.split(" ")[0], e.error_type, e.message) for e in result.metadata.callback_errors]
    broken = "<exception str() failed>"
    assert recorded == [
        ("on_attempt_start", "BrokenStr", broken),
        ("on_model_response", "Custom", "async hook failed"),
        ("on_tool_call", "BrokenStr", broken),
        ("on_tool_result", "Custom", "async hook failed"),
        ("on_validation_failure", "BrokenStr", broken),
        ("on_attempt_start", "BrokenStr", broken),
        ("on_model_response", "Custom", "async hook failed"),
        ("on_tool_call", "BrokenStr", broken),
        ("on_tool_result", "Custom", "async hook failed"),
    ]


async def test_validator_exception_with_broken_str_fails_cleanly() -> None:
    """A validator crash whose message cannot be printed is still a VALIDATOR_ERROR result, not a raise."""

    def crashing(out: Out) -> None:
        raise BrokenStr()

    result = await run(agent(validators=[crashing]), [output_call(GOOD)])
    assert not result.ok
    assert result.error.code is AgentErrorCode.VALIDATOR_ERROR
    assert "raised BrokenStr: <exception str() failed>." in result.error.message
    assert result.error.last_output == {"n": 1}
    assert [a.outcome for a in result.metadata.attempts] == [AttemptOutcome.VALIDATOR_ERROR]


# -- BaseExceptions propagate --------------------------------------------------------------------


def _propagating_agents(exc_type: type[BaseException]) -> dict[str, tuple[AgentDefinition[Out, None], list[Any]]]:
    """One agent per place user code runs, each raising ``exc_type`` there."""

    def raise_it(out: Out) -> None:
        raise exc_type()

    @tool
    def sync_tool() -> str:
        """Raises."""
        raise exc_type()

    @tool
    async def async_tool() -> str:
        """Raises."""
        raise exc_type()

    return {
        "sync handler": (agent(sync_tool), [tool_call("sync_tool"), output_call(GOOD)]),
        "async handler": (agent(async_tool), [tool_call("async_tool"), output_call(GOOD)]),
        "reflection handler": (agent(output=reflecting(raise_it)), [output_call(GOOD), submit_call()]),
        "validator": (agent(validators=[raise_it]), [output_call(GOOD)]),
        "parallel batch": (
            agent(sync_tool, async_tool),
            [response(tool_call("async_tool"), tool_call("sync_tool")), output_call(GOOD)],
        ),
    }


@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit])
@pytest.mark.parametrize(
    "where", ["sync handler", "async handler", "reflection handler", "validator", "parallel batch"]
)
@pytest.mark.parametrize("guarded", [False, True], ids=["plain", "with-limits"])
def test_base_exceptions_from_user_code_propagate(exc_type: type[BaseException], where: str, guarded: bool) -> None:
    """KeyboardInterrupt and SystemExit raised by user code are never swallowed into a result."""
    definition, script = _propagating_agents(exc_type)[where]
    limits = ExecutionLimits(timeout_s=30) if guarded else None
    with pytest.raises(exc_type):
        execute_agent_sync(definition, "go", client=ScriptedClient(script), limits=limits)


@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit])
def test_base_exceptions_from_callbacks_and_clients_propagate(exc_type: type[BaseException]) -> None:
    """A callback or a client raising a BaseException propagates it too."""

    def hook(state: Any, event: Any) -> None:
        raise exc_type()

    class Raising:
        class messages:
            @staticmethod
            async def create(**params: Any) -> Any:
                raise exc_type()

    with pytest.raises(exc_type):
        execute_agent_sync(
            agent(),
            "go",
            client=ScriptedClient([output_call(GOOD)]),
            callbacks=ExecuteCallbacks(on_tool_call=hook),
        )
    with pytest.raises(exc_type):
        execute_agent_sync(agent(), "go", client=Raising())


class Hanging:
    """A client whose call never answers; records that it was cancelled."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = False
        self.messages = self

    async def create(self, **params: Any) -> Any:
        self.started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.cancelled = True
            raise


@pytest.mark.parametrize("guarded", [False, True], ids=["plain", "with-abort-event"])
async def test_task_cancellation_during_api_call_propagates(guarded: bool) -> None:
    """Cancelling the task running an execution raises CancelledError out of it and cancels the API call."""
    client = Hanging()
    abort = asyncio.Event() if guarded else None
    task = asyncio.create_task(execute_agent(agent(), "go", client=client, abort_event=abort))
    await asyncio.wait_for(client.started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()
    assert client.cancelled


@pytest.mark.parametrize("guarded", [False, True], ids=["plain", "with-timeout"])
async def test_task_cancellation_during_tool_propagates(guarded: bool) -> None:
    """Cancelling the task while helpers run raises CancelledError and cancels the running handlers."""
    started = asyncio.Event()
    cancelled: list[str] = []

    @tool
    async def slow(name: str) -> str:
        """Takes forever."""
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(name)
            raise
        return name

    client = ScriptedClient([response(tool_call("slow", {"name": "a"}), tool_call("slow", {"name": "b"}))])
    limits = ExecutionLimits(timeout_s=60) if guarded else None
    task = asyncio.create_task(execute_agent(agent(slow), "go", client=client, limits=limits))
    await asyncio.wait_for(started.wait(), 5)
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(3):
        await asyncio.sleep(0)
    assert sorted(cancelled) == ["a", "b"]

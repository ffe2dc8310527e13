"""Abort, timeout, token budget and task cancellation (SPEC §5 "Abort" and "Limits")."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from support import GOOD, Triage, assert_api_valid, results_of, run, triage_agent

from typedagent import (
    AgentErrorCode,
    AgentExecutionError,
    AttemptOutcome,
    CancelledContext,
    CostLimitContext,
    ExecuteCallbacks,
    ExecutionLimits,
    ExecutionState,
    ModelPrice,
    OutputTool,
    RequestLimitContext,
    TimeoutContext,
    TokenBudgetContext,
    ToolCall,
    ToolCallLimitContext,
    ValidationConfig,
    execute_agent,
    execute_agent_sync,
    register_price,
    tool,
)
from typedagent._run.feedback import ABANDONED
from typedagent.testing import (
    FunctionClient,
    ScriptedClient,
    delay,
    output_call,
    response,
    submit_call,
    tool_call,
    usage,
)


class HangingClient(FunctionClient):
    """Answers from ``script`` in order, but request number ``hang_on`` never answers."""

    def __init__(self, script: list[Any], hang_on: int) -> None:
        super().__init__(self._answer)
        self.script = script
        self.hang_on = hang_on
        self.started = asyncio.Event()
        self.cancelled = False

    async def _answer(self, request: dict[str, Any]) -> Any:
        call = len(self.requests)
        if call == self.hang_on:
            self.started.set()
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                self.cancelled = True
                raise
        return self.script[call - 1]


@tool
async def lookup(query: str) -> str:
    """Look up."""
    return query


async def test_abort_before_start() -> None:
    """An event set before the run starts cancels it in phase 'attempt' with no API call."""
    stop = asyncio.Event()
    stop.set()
    client = ScriptedClient([output_call(GOOD)])
    result = await execute_agent(triage_agent(), "x", client=client, abort_event=stop)
    assert not result.ok
    assert result.error.code is AgentErrorCode.EXECUTION_CANCELLED
    assert result.error.context == CancelledContext(phase="attempt", attempt=1, iteration=0)
    assert client.requests == []
    assert result.metadata.iterations == 0


async def test_abort_between_iterations() -> None:
    """An event set by a tool is seen before the next API call: phase 'iteration', tokens kept."""
    stop = threading.Event()

    @tool
    def stopper() -> str:
        """Stops the run."""
        stop.set()
        return "stopping"

    client = ScriptedClient([tool_call("stopper"), output_call(GOOD)])
    result = await run(triage_agent(helpers=[stopper]), client, abort_event=stop)
    assert not result.ok
    assert result.error.context == CancelledContext(phase="iteration", attempt=1, iteration=1)
    assert result.metadata.tokens.total == 15
    assert len(client.requests) == 1
    assert [a.outcome for a in result.metadata.attempts] == [AttemptOutcome.EXECUTION_CANCELLED]


@pytest.mark.parametrize("event_type", [asyncio.Event, threading.Event])
async def test_abort_interrupts_in_flight_call_within_100ms(event_type: type[Any]) -> None:
    """Setting the event during an API call interrupts it within 100 ms (asyncio and threading events)."""
    stop = event_type()
    client = HangingClient([tool_call("lookup", {"query": "a"})], hang_on=2)
    task = asyncio.create_task(execute_agent(triage_agent(helpers=[lookup]), "x", client=client, abort_event=stop))
    await asyncio.wait_for(client.started.wait(), 5)
    set_at = time.monotonic()
    stop.set()
    result = await asyncio.wait_for(task, 5)
    elapsed = time.monotonic() - set_at
    assert elapsed < 0.1
    assert client.cancelled
    assert not result.ok
    assert result.error.context == CancelledContext(phase="iteration", attempt=1, iteration=2)
    assert result.metadata.iterations == 2
    assert result.metadata.tokens.total == 15


@pytest.mark.parametrize("event_type", [asyncio.Event, threading.Event])
async def test_abort_during_tool_execution(event_type: type[Any]) -> None:
    """Setting the event while tools run interrupts them within 100 ms; every tool_use is still answered."""
    stop = event_type()
    started = asyncio.Event()

    @tool
    async def slow() -> str:
        """Slow."""
        started.set()
        await asyncio.sleep(3600)
        return "never"

    client = ScriptedClient([response(tool_call("slow"), tool_call("slow"))])
    task = asyncio.create_task(execute_agent(triage_agent(helpers=[slow]), "x", client=client, abort_event=stop))
    await asyncio.wait_for(started.wait(), 5)
    set_at = time.monotonic()
    stop.set()
    result = await asyncio.wait_for(task, 5)
    assert time.monotonic() - set_at < 0.1
    assert_api_valid(result, client)
    assert not result.ok
    assert result.error.context == CancelledContext(phase="tool", attempt=1, iteration=1)
    assert [c for _, c, _ in results_of(result.metadata.messages[2])] == [f"Error: {ABANDONED}"] * 2


async def test_abort_set_by_callback_before_tools_run() -> None:
    """An event set just before a tool batch stops it in phase 'tool' before any handler runs."""
    stop = asyncio.Event()
    ran: list[str] = []

    @tool
    def work() -> str:
        """Work."""
        ran.append("x")
        return "x"

    def on_call(state: ExecutionState, event: ToolCall) -> None:
        stop.set()

    client = ScriptedClient([tool_call("work")])
    result = await run(
        triage_agent(helpers=[work]), client, abort_event=stop, callbacks=ExecuteCallbacks(on_tool_call=on_call)
    )
    assert ran == []
    assert not result.ok
    assert result.error.context == CancelledContext(phase="tool", attempt=1, iteration=1)
    assert results_of(result.metadata.messages[2]) == [
        ("toolu_01_001", "Error: not run: the execution stopped before this tool ran.", True)
    ]


async def test_timeout_interrupts_in_flight_call() -> None:
    """timeout_s is a wall-clock deadline: a hanging API call is interrupted and the run fails with TIMEOUT."""
    client = HangingClient([], hang_on=1)
    started = time.monotonic()
    result = await execute_agent(triage_agent(), "x", client=client, limits=ExecutionLimits(timeout_s=0.05))
    assert time.monotonic() - started < 1
    assert not result.ok
    assert result.error.code is AgentErrorCode.TIMEOUT
    assert result.error.context == TimeoutContext(timeout_s=0.05, phase="iteration", attempt=1, iteration=1)


async def test_timeout_interrupts_tools() -> None:
    """A tool still running when the deadline passes is interrupted: TIMEOUT in phase 'tool'."""

    @tool
    async def slow() -> str:
        """Slow."""
        await asyncio.sleep(3600)
        return "never"

    client = ScriptedClient([tool_call("slow")])
    started = time.monotonic()
    result = await run(triage_agent(helpers=[slow]), client, limits=ExecutionLimits(timeout_s=0.1))
    assert time.monotonic() - started < 0.5
    assert not result.ok
    assert result.error.code is AgentErrorCode.TIMEOUT
    assert isinstance(result.error.context, TimeoutContext)
    assert result.error.context.phase == "tool"


async def test_timeout_checked_before_next_call() -> None:
    """A deadline that passes during a sync tool is noticed before the next API call."""

    @tool
    def sleepy() -> str:
        """Sleeps."""
        time.sleep(0.15)
        return "done"

    client = ScriptedClient([tool_call("sleepy"), output_call(GOOD)])
    result = await run(triage_agent(helpers=[sleepy]), client, limits=ExecutionLimits(timeout_s=0.1))
    assert not result.ok
    assert result.error.code is AgentErrorCode.TIMEOUT


async def test_token_budget_checked_before_each_call() -> None:
    """Once the total reaches max_total_tokens, the next call is not made: TOKEN_BUDGET_EXCEEDED."""
    client = ScriptedClient(
        [
            response(tool_call("lookup", {"query": "a"}), usage=usage(60, 10)),
            response(tool_call("lookup", {"query": "b"}), usage=usage(60, 10)),
            output_call(GOOD),
        ]
    )
    result = await run(triage_agent(helpers=[lookup]), client, limits=ExecutionLimits(max_total_tokens=100))
    assert not result.ok
    assert result.error.code is AgentErrorCode.TOKEN_BUDGET_EXCEEDED
    assert result.error.context == TokenBudgetContext(max_total_tokens=100, total_tokens=140, attempt=1, iteration=2)
    assert len(client.requests) == 2


async def test_task_cancellation_propagates() -> None:
    """Cancelling the task running execute_agent raises CancelledError; it is not swallowed."""
    client = HangingClient([], hang_on=1)
    task = asyncio.create_task(execute_agent(triage_agent(), "x", client=client, abort_event=asyncio.Event()))
    await asyncio.wait_for(client.started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert client.cancelled


async def test_task_cancellation_propagates_without_guard() -> None:
    """With no abort event or timeout, cancellation still propagates from the API call."""
    client = HangingClient([], hang_on=1)
    task = asyncio.create_task(execute_agent(triage_agent(), "x", client=client))
    await asyncio.wait_for(client.started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_unwrap_raises_execution_error() -> None:
    """unwrap() on a failure raises AgentExecutionError carrying the same error."""
    stop = asyncio.Event()
    stop.set()
    result = await execute_agent(triage_agent(), "x", client=ScriptedClient(), abort_event=stop)
    assert not result.ok
    with pytest.raises(AgentExecutionError) as caught:
        result.unwrap()
    assert caught.value.error is result.error
    assert caught.value.code is AgentErrorCode.EXECUTION_CANCELLED
    assert str(caught.value).startswith("EXECUTION_CANCELLED: The execution was cancelled")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_total_tokens": 0}, "max_total_tokens must be an int >= 1"),
        ({"max_total_tokens": True}, "max_total_tokens must be an int >= 1"),
        ({"timeout_s": 0}, "timeout_s must be a finite positive number"),
        ({"timeout_s": "5"}, "timeout_s must be a finite positive number"),
        ({"timeout_s": float("nan")}, "timeout_s must be a finite positive number"),
        ({"timeout_s": float("inf")}, r"timeout_s must be a finite positive number.*None for no deadline"),
        ({"timeout_s": float("-inf")}, "timeout_s must be a finite positive number"),
        ({"max_requests": 0}, "max_requests must be an int >= 1"),
        ({"max_requests": 2.0}, "max_requests must be an int >= 1"),
        ({"max_tool_calls": -1}, "max_tool_calls must be an int >= 0"),
        ({"max_tool_calls": False}, "max_tool_calls must be an int >= 0"),
        ({"max_cost_usd": 0}, "max_cost_usd must be a finite positive number of US dollars"),
        ({"max_cost_usd": float("inf")}, "max_cost_usd must be a finite positive number"),
        ({"max_cost_usd": "1"}, "max_cost_usd must be a finite positive number"),
    ],
)
def test_limits_reject_bad_values(kwargs: dict[str, Any], message: str) -> None:
    """ExecutionLimits rejects non-positive or wrongly typed limits at construction."""
    with pytest.raises(ValueError, match=message):
        ExecutionLimits(**kwargs)


async def test_abort_keeps_results_of_tools_that_finished() -> None:
    """Tools that finished before the abort keep their results (even empty ones); the rest are answered."""
    stop = asyncio.Event()

    @tool
    async def quick() -> str:
        """Returns an empty result at once."""
        return ""

    @tool
    async def stuck() -> str:
        """Never returns; sets the abort once quick is done."""
        await asyncio.sleep(0.01)
        stop.set()
        await asyncio.sleep(3600)
        return "never"

    client = ScriptedClient([response(tool_call("quick"), tool_call("stuck"))])
    result = await run(triage_agent(helpers=[quick, stuck]), client, abort_event=stop)
    assert not result.ok
    assert results_of(result.metadata.messages[2]) == [
        ("toolu_01_001", "", False),
        ("toolu_01_002", f"Error: {ABANDONED}", True),
    ]


async def _slow_preview(out: Any) -> str:
    await asyncio.sleep(3600)
    return "never"


async def _slow_validator(out: Any) -> None:
    await asyncio.sleep(3600)


@pytest.mark.parametrize("where", ["reflection handler", "validator"])
async def test_timeout_interrupts_output_checks(where: str) -> None:
    """A hung reflection handler or validator is interrupted by the deadline: TIMEOUT in phase 'tool'."""
    if where == "validator":
        agent = triage_agent(validators=[_slow_validator])
        client = ScriptedClient([output_call(GOOD)])
    else:
        agent = triage_agent(output=OutputTool(Triage, reflection_handler=_slow_preview))
        client = ScriptedClient([response(output_call(GOOD), submit_call())])
    started = time.monotonic()
    result = await run(agent, client, limits=ExecutionLimits(timeout_s=0.05))
    assert time.monotonic() - started < 0.5
    assert not result.ok
    assert result.error.code is AgentErrorCode.TIMEOUT
    assert result.error.context == TimeoutContext(timeout_s=0.05, phase="tool", attempt=1, iteration=1)
    contents = [c for _, c, _ in results_of(result.metadata.messages[2])]
    assert set(contents) == {"Error: not run: the execution stopped while the output was being checked."}


async def test_abort_interrupts_a_slow_validator_within_100ms() -> None:
    """Setting the abort event while a validator runs ends the run as cancelled within 100 ms, never a success."""
    stop = asyncio.Event()
    entered = asyncio.Event()

    async def slow(out: Any) -> None:
        entered.set()
        await asyncio.sleep(3600)

    client = ScriptedClient([output_call(GOOD)])
    task = asyncio.create_task(execute_agent(triage_agent(validators=[slow]), "x", client=client, abort_event=stop))
    await asyncio.wait_for(entered.wait(), 5)
    set_at = time.monotonic()
    stop.set()
    result = await asyncio.wait_for(task, 5)
    assert time.monotonic() - set_at < 0.1
    assert_api_valid(result, client)
    assert not result.ok
    assert result.error.context == CancelledContext(phase="tool", attempt=1, iteration=1)


async def test_abort_threading_event_shared_by_many_executions() -> None:
    """Many executions waiting on one threading.Event share one poller; setting it cancels them all."""
    from typedagent._shared.limits import _BRIDGES

    stop = threading.Event()
    clients = [HangingClient([], hang_on=1) for _ in range(50)]
    tasks = [
        asyncio.create_task(execute_agent(triage_agent(), "x", client=client, abort_event=stop)) for client in clients
    ]
    for client in clients:
        await asyncio.wait_for(client.started.wait(), 5)
    await asyncio.sleep(0)
    [bridge] = _BRIDGES[stop].values()
    assert bridge.waiters == 50
    set_at = time.monotonic()
    stop.set()
    results = await asyncio.wait_for(asyncio.gather(*tasks), 5)
    assert time.monotonic() - set_at < 0.1
    assert {r.error.code for r in results if not r.ok} == {AgentErrorCode.EXECUTION_CANCELLED}
    assert all(not r.ok for r in results)
    assert _BRIDGES.get(stop, {}) == {}


# -- abort events: causes, reuse across loops, clean-up ------------------------------------------


def test_abort_asyncio_event_reused_across_sync_runs() -> None:
    """An asyncio.Event bound to an earlier run's loop still works as the abort event of the next run."""
    stop = asyncio.Event()
    limits = ExecutionLimits(timeout_s=60)
    for _ in range(2):
        client = ScriptedClient([delay(0.05, output_call(GOOD))])
        result = execute_agent_sync(triage_agent(), "go", client=client, abort_event=stop, limits=limits)
        assert result.ok
    stop_at: list[float] = []

    def abort() -> None:
        stop_at.append(time.monotonic())
        stop.set()

    timer = threading.Timer(0.2, abort)
    timer.start()
    client = ScriptedClient([delay(30, output_call(GOOD))])
    result = execute_agent_sync(triage_agent(), "go", client=client, abort_event=stop, limits=limits)
    returned = time.monotonic()
    timer.join()
    assert not result.ok
    assert result.error.context == CancelledContext(phase="iteration", attempt=1, iteration=1)
    assert returned - stop_at[0] < 0.1


async def test_abort_set_and_cleared_during_a_call_is_a_cancellation() -> None:
    """An abort event set and cleared again while a call is in flight cancels it (the cause is not re-guessed)."""
    stop = asyncio.Event()

    async def pulse() -> None:
        await asyncio.sleep(0.05)
        stop.set()
        stop.clear()

    client = ScriptedClient([delay(30, output_call(GOOD))])
    pulser = asyncio.create_task(pulse())
    result = await execute_agent(
        triage_agent(), "go", client=client, abort_event=stop, limits=ExecutionLimits(timeout_s=60)
    )
    await pulser
    assert not result.ok
    assert result.error.code is AgentErrorCode.EXECUTION_CANCELLED
    assert result.error.context == CancelledContext(phase="iteration", attempt=1, iteration=1)


async def test_timeout_interruption_is_not_mistaken_for_an_abort() -> None:
    """With an abort event that is never set, a deadline passing mid-call is a TIMEOUT."""
    client = ScriptedClient([delay(30, output_call(GOOD))])
    result = await execute_agent(
        triage_agent(), "go", client=client, abort_event=asyncio.Event(), limits=ExecutionLimits(timeout_s=0.2)
    )
    assert not result.ok
    assert result.error.code is AgentErrorCode.TIMEOUT


async def test_abort_keeps_the_output_of_a_response_whose_tools_were_interrupted() -> None:
    """[slow helper, output call] interrupted during the helper: error.last_output still holds the output."""

    @tool
    async def slow() -> str:
        """Slow."""
        await asyncio.sleep(3600)
        return "never"

    client = ScriptedClient([response(tool_call("slow"), output_call(GOOD))])
    result = await run(triage_agent(helpers=[slow]), client, limits=ExecutionLimits(timeout_s=0.2))
    assert not result.ok
    assert result.error.code is AgentErrorCode.TIMEOUT
    assert result.error.last_output == GOOD.model_dump()


@pytest.mark.parametrize("interrupt", ["abort", "timeout"])
async def test_interrupted_async_tools_clean_up_before_the_result(interrupt: str) -> None:
    """Cancelled async tools get a short grace period: their finally blocks run before execute_agent returns."""
    stop = asyncio.Event()
    cleaned: list[str] = []

    @tool
    async def holds_a_resource() -> str:
        """Needs to release something when cancelled."""
        try:
            if interrupt == "abort":
                stop.set()
            await asyncio.sleep(3600)
        finally:
            await asyncio.sleep(0.01)  # e.g. closing a connection
            cleaned.append("released")
        return "never"

    client = ScriptedClient([tool_call("holds_a_resource")])
    limits = ExecutionLimits(timeout_s=0.2) if interrupt == "timeout" else None
    started = time.monotonic()
    result = await execute_agent(
        triage_agent(helpers=[holds_a_resource]), "go", client=client, abort_event=stop, limits=limits
    )
    assert not result.ok
    assert cleaned == ["released"]
    assert time.monotonic() - started < (0.2 if interrupt == "timeout" else 0.0) + 0.1


async def test_request_limit_counts_calls_across_attempts() -> None:
    """max_requests counts API calls over every attempt; the call after the last allowed one is not made."""
    client = ScriptedClient([output_call({"severity": 9}), tool_call("lookup", {"query": "x"}), output_call(GOOD)])
    agent = triage_agent(helpers=[lookup])
    result = await run(agent, client, limits=ExecutionLimits(max_requests=2))
    assert result.ok is False
    assert result.error.code is AgentErrorCode.REQUEST_LIMIT_EXCEEDED
    assert result.error.context == RequestLimitContext(max_requests=2, attempt=2, iteration=1)
    assert "made its 2 API call(s)" in result.error.message
    assert len(client.requests) == 2
    assert result.metadata.iterations == 2
    assert result.error.last_output == {"severity": 9}


async def test_request_limit_allows_exactly_that_many() -> None:
    """An execution that needs exactly max_requests calls succeeds."""
    client = ScriptedClient([tool_call("lookup", {"query": "x"}), output_call(GOOD)])
    result = await run(triage_agent(helpers=[lookup]), client, limits=ExecutionLimits(max_requests=2))
    assert result.ok is True
    assert len(client.requests) == 2


async def test_tool_call_limit_refuses_a_response_that_would_pass_it() -> None:
    """A response asking for more helper calls than are left runs none of them: TOOL_CALL_LIMIT_EXCEEDED."""
    ran: list[str] = []

    @tool
    def fetch(query: str) -> str:
        """Fetch."""
        ran.append(query)
        return query

    client = ScriptedClient(
        [
            tool_call("fetch", {"query": "a"}),
            response(tool_call("fetch", {"query": "b"}), tool_call("fetch", {"query": "c"}), output_call(GOOD)),
        ]
    )
    result = await run(triage_agent(helpers=[fetch]), client, limits=ExecutionLimits(max_tool_calls=2))
    assert result.ok is False
    assert result.error.code is AgentErrorCode.TOOL_CALL_LIMIT_EXCEEDED
    assert result.error.context == ToolCallLimitContext(
        max_tool_calls=2, tool_calls=1, requested=2, attempt=1, iteration=2
    )
    assert ran == ["a"]
    assert result.metadata.tool_calls == 1
    assert result.error.message == (
        "The model asked for 2 helper call(s) with 1 of ExecutionLimits.max_tool_calls=2 already used; none of "
        "them ran. Raise max_tool_calls, or say in the instructions how many lookups the task needs."
    )
    assert [content for _, content, _ in results_of(result.metadata.messages[-1])] == [
        "Error: not run: the execution stopped before this tool ran."
    ] * 3
    assert result.error.last_output == GOOD.model_dump()


async def test_tool_call_limit_does_not_count_output_calls() -> None:
    """Output and submit calls are not helper calls: max_tool_calls=0 still lets the model hand over its output."""
    result = await run(triage_agent(), ScriptedClient([output_call(GOOD)]), limits=ExecutionLimits(max_tool_calls=0))
    assert result.ok is True
    assert result.metadata.tool_calls == 0


async def test_cost_is_estimated_from_the_price_table() -> None:
    """metadata.cost_usd prices every response's four counters at the model's list prices."""
    client = ScriptedClient(
        [
            response(tool_call("lookup", {"query": "x"}), usage=usage(1_000_000, 100_000, 200_000, 2_000_000)),
            response(output_call(GOOD), usage=usage(10, 5)),
        ]
    )
    result = await run(triage_agent(model="claude-sonnet-4-6", helpers=[lookup]), client)
    # $3 input, $15 output, $3.75 cache writes, $0.30 cache reads per million tokens.
    expected = 3 + 1.5 + 0.75 + 0.6 + (10 * 3 + 5 * 15) / 1_000_000
    assert result.metadata.cost_usd == pytest.approx(expected)


async def test_cost_is_none_for_a_model_without_a_price() -> None:
    """An unknown model has no estimate (None), and no cost limit can be set for it."""
    agent = triage_agent(model="my-finetune")
    result = await run(agent, ScriptedClient([output_call(GOOD)]))
    assert result.metadata.cost_usd is None
    with pytest.raises(ValueError, match=r"max_cost_usd needs the price of model 'my-finetune'.*register_price"):
        await execute_agent(agent, "x", client=ScriptedClient(), limits=ExecutionLimits(max_cost_usd=1.0))


async def test_cost_limit_checked_before_each_call() -> None:
    """Once the estimated cost reaches max_cost_usd, the next call is not made: COST_LIMIT_EXCEEDED."""
    client = ScriptedClient(
        [
            response(tool_call("lookup", {"query": "a"}), usage=usage(100_000, 10_000)),
            response(tool_call("lookup", {"query": "b"}), usage=usage(100_000, 10_000)),
            output_call(GOOD),
        ]
    )
    limits = ExecutionLimits(max_cost_usd=0.5)
    result = await run(triage_agent(model="claude-sonnet-4-6", helpers=[lookup]), client, limits=limits)
    assert result.ok is False
    assert result.error.code is AgentErrorCode.COST_LIMIT_EXCEEDED
    assert result.error.context == CostLimitContext(
        max_cost_usd=0.5, cost_usd=pytest.approx(0.9), attempt=1, iteration=2
    )
    assert len(client.requests) == 2
    assert result.metadata.cost_usd == pytest.approx(0.9)
    assert result.error.message.startswith("The estimated cost reached the limit of $0.5 ($0.9000 spent). Raise")


async def test_cost_limit_with_a_registered_price(monkeypatch: pytest.MonkeyPatch) -> None:
    """A price registered for a model makes both the estimate and the cost limit work for it."""
    monkeypatch.setattr("typedagent._api.pricing._registered", {})
    monkeypatch.setattr("typedagent._api.pricing._looked_up", {})
    register_price("typedagent-test-model", ModelPrice(input=1, output=2, cache_write=0, cache_read=0))
    client = ScriptedClient(
        [response(tool_call("lookup", {"query": "a"}), usage=usage(2_000_000, 0)), output_call(GOOD)]
    )
    agent = triage_agent(model="typedagent-test-model", helpers=[lookup])
    result = await run(agent, client, limits=ExecutionLimits(max_cost_usd=2.0))
    assert result.ok is False
    assert result.error.code is AgentErrorCode.COST_LIMIT_EXCEEDED
    assert result.metadata.cost_usd == pytest.approx(2.0)


async def test_limits_keep_the_validation_config_limits() -> None:
    """The new limits sit beside max_attempts: a run within all of them succeeds and reports its counts."""
    client = ScriptedClient([tool_call("lookup", {"query": "a"}), output_call({"severity": 0}), output_call(GOOD)])
    limits = ExecutionLimits(max_requests=3, max_tool_calls=1, max_cost_usd=1.0, max_total_tokens=1000)
    agent = triage_agent(helpers=[lookup], validation=ValidationConfig(max_attempts=2))
    result = await run(agent, client, limits=limits)
    assert result.ok is True
    assert (result.metadata.iterations, result.metadata.tool_calls) == (3, 1)


@pytest.mark.parametrize("kind", ["slotted", "unhashable"])
async def test_abort_event_like_objects_that_cannot_be_weak_keys_are_polled(kind: str) -> None:
    """Any object with is_set() is a valid abort event, even one that is not hashable or weakly referable."""

    class Slotted:
        __slots__ = ("flag",)

        def __init__(self) -> None:
            self.flag = False

        def is_set(self) -> bool:
            return self.flag

    class Unhashable(Slotted):
        __slots__ = ()
        __hash__ = None  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]

    stop = Slotted() if kind == "slotted" else Unhashable()

    async def abort_soon() -> None:
        await asyncio.sleep(0.05)
        stop.flag = True

    aborting = asyncio.create_task(abort_soon())
    client = ScriptedClient([delay(30, output_call(GOOD))])
    result = await execute_agent(triage_agent(), "go", client=client, abort_event=stop)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    await aborting
    assert not result.ok
    assert result.error.context == CancelledContext(phase="iteration", attempt=1, iteration=1)

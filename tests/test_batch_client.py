"""``execute_many(transport="message_batches")``: every model call in a Message Batch, results as online."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from typedagent import (
    AgentDefinitionError,
    AgentErrorCode,
    ApiErrorContext,
    ExecuteFailure,
    JournalError,
    ManyResult,
    MessageBatches,
    OutputTool,
    execute_many,
    execute_many_sync,
)
from typedagent._api.batch_ledger import BatchLedger, ledger_path
from typedagent.testing import FakeAnthropicServer, ScriptedClient, api_error, conversation, output_call, tool_call
from typedagent.testing._server import sdk_client

TESTING = Path(__file__).resolve().parent / "testing"
sys.path.insert(0, str(TESTING))

from toolkit_support import PARIS, Answer, geo_agent  # noqa: E402

FAST = MessageBatches(poll_s=0.01, max_poll_s=0.05, gather_s=5)
PROMPTS = [f"How many people live in city {n}?" for n in range(5)]
SCENARIO = [tool_call("lookup", {"query": "Paris"}), output_call(PARIS)]


def _comparable(result: ManyResult[Any]) -> Any:
    """The parts of a result that must not depend on the transport (not latency, not cost)."""
    meta = dataclasses.replace(result.result.metadata, latency_ms=0.0, cost_usd=None, messages=[])
    return (result.index, result.key, result.result.ok, getattr(result.result, "output", None), meta)


def _renamed(messages: list[dict[str, Any]]) -> str:
    """A conversation with its tool-use ids renamed in order of appearance (the server numbers them by arrival)."""
    text = json.dumps(messages)
    for number, tool_id in enumerate(dict.fromkeys(re.findall(r"toolu_[0-9_]+", text))):
        text = text.replace(tool_id, f"tool_{number}")
    return text


def test_batch_client_results_equal_the_online_run() -> None:
    """Batch mode gives every execution the conversation and result of the online run, one batch per round."""
    with FakeAnthropicServer(SCENARIO, per_conversation=True) as server:
        online = execute_many_sync(geo_agent(), PROMPTS, client=server.client())
        online_requests = len(server.requests)
    with FakeAnthropicServer(SCENARIO, per_conversation=True) as server:
        batched = execute_many_sync(geo_agent(), PROMPTS, client=server.client(), transport=FAST)
    assert [_comparable(result) for result in batched] == [_comparable(result) for result in online]
    assert [_renamed(conversation(result.result)) for result in batched] == [
        _renamed(conversation(result.result)) for result in online
    ]
    assert server.batches.created == 2  # the five executions' first calls, then their second calls
    assert server.batches.submitted == online_requests == 10
    for batch, live in zip(batched, online, strict=True):
        assert batch.result.metadata.cost_usd == pytest.approx(live.result.metadata.cost_usd * 0.5)


def test_batch_client_string_transport_and_refusals() -> None:
    """``"message_batches"`` uses the defaults; a client without batches and a bad transport are refused."""
    with FakeAnthropicServer([output_call(PARIS)]) as server:
        [result] = execute_many_sync(geo_agent(), ["hi"], client=server.client(), transport="message_batches")
    assert result.result.ok
    with pytest.raises(TypeError, match=r"messages\.batches"):
        execute_many_sync(geo_agent(), ["hi"], client=ScriptedClient([]), transport="message_batches")
    with pytest.raises(TypeError, match='"online", "message_batches" or a MessageBatches'):
        execute_many_sync(geo_agent(), ["hi"], client=ScriptedClient([]), transport="batch")  # type: ignore[arg-type]
    with pytest.raises(AgentDefinitionError, match="max_submissions"):
        MessageBatches(max_submissions=0)
    with pytest.raises(AgentDefinitionError, match="poll_s"):
        MessageBatches(poll_s=-1)


def test_batch_client_transient_errors_and_expiry_are_resubmitted() -> None:
    """An overloaded_error result and an expired request go in the next batch; the execution succeeds."""
    with FakeAnthropicServer([api_error(529), output_call(PARIS)]) as server:
        server.batches.expire_requests = 1
        [result] = execute_many_sync(geo_agent(), ["hi"], client=server.client(), transport=FAST)
    assert result.result.ok
    assert server.batches.created == 3  # expired, then overloaded, then answered


def test_batch_client_a_real_api_error_fails_only_its_execution() -> None:
    """A request errored with invalid_request_error fails its execution as that error would online."""
    script = [api_error(400, "prompt is too long", request_id="req_bad"), output_call(PARIS)]
    with FakeAnthropicServer(script) as server:
        results = execute_many_sync(geo_agent(), ["first", "second"], client=server.client(), transport=FAST)
    failed, succeeded = results
    assert isinstance(failed.result, ExecuteFailure)
    assert failed.result.error.code == AgentErrorCode.API_ERROR
    context = failed.result.error.context
    assert isinstance(context, ApiErrorContext)
    assert (context.status_code, context.error_type, context.request_id) == (400, "invalid_request_error", "req_bad")
    assert succeeded.result.ok
    assert server.batches.created == 1


@pytest.mark.parametrize(
    ("status", "error_type"),
    [(409, "conflict_error"), (409, "memory_path_conflict_error"), (412, "memory_precondition_failed_error")],
)
def test_batch_client_an_error_keeps_the_status_of_its_type(status: int, error_type: str) -> None:
    """A result naming only its error type fails with that type's status, not as a server error (HTTP 500)."""
    with FakeAnthropicServer([api_error(status, "conflict", error_type=error_type)]) as server:
        [result] = execute_many_sync(geo_agent(), ["hi"], client=server.client(), transport=FAST)
    assert isinstance(result.result, ExecuteFailure)
    context = result.result.error.context
    assert isinstance(context, ApiErrorContext)
    assert (context.status_code, context.error_type) == (status, error_type)
    assert server.batches.created == 1


def test_batch_client_gives_up_after_max_submissions() -> None:
    """A request that expires in every batch fails its execution with the reason, after max_submissions."""
    with FakeAnthropicServer([]) as server:
        server.batches.expire_requests = 2
        settings = dataclasses.replace(FAST, max_submissions=2)
        [result] = execute_many_sync(geo_agent(), ["hi"], client=server.client(), transport=settings)
    assert isinstance(result.result, ExecuteFailure)
    context = result.result.error.context
    assert isinstance(context, ApiErrorContext)
    assert context.error_type == "BatchRequestNotRun"
    assert "expired this request in 2 batch(es)" in result.result.error.message
    assert server.batches.created == 2


async def _run_many(*args: Any, **kwargs: Any) -> list[ManyResult[Any]]:
    return [result async for result in execute_many(*args, **kwargs)]


async def test_batch_client_a_request_missing_from_its_results_is_submitted_max_submissions_times() -> None:
    """A request the API leaves out of every batch's results fails after max_submissions batches, not never."""
    async with FakeAnthropicServer([]) as server:
        server.batches.drop_requests = 100
        settings = dataclasses.replace(FAST, max_submissions=3)
        [result] = await asyncio.wait_for(
            _run_many(geo_agent(), ["hi"], client=server.client(), transport=settings), timeout=20
        )
    assert isinstance(result.result, ExecuteFailure)
    context = result.result.error.context
    assert isinstance(context, ApiErrorContext)
    assert context.error_type == "BatchRequestNotRun"
    assert "returned no result for this request in 3 batch(es)" in result.result.error.message
    assert server.batches.created == 3


async def test_batch_client_a_missing_result_is_submitted_again_and_answered() -> None:
    """A request missing once from its batch's results goes in the next batch and gets its answer."""
    async with FakeAnthropicServer([output_call(PARIS)]) as server:
        server.batches.drop_requests = 1
        [result] = await asyncio.wait_for(
            _run_many(geo_agent(), ["hi"], client=server.client(), transport=FAST), timeout=20
        )
    assert result.result.ok
    assert server.batches.created == 2


async def test_batch_client_an_unreadable_result_fails_its_execution_only() -> None:
    """An errored line with no error body fails that execution with a clear error; the others get their results."""
    async with FakeAnthropicServer([output_call(PARIS)], per_conversation=True) as server:
        server.batches.malformed_results = 1
        results = await asyncio.wait_for(
            _run_many(geo_agent(), ["first", "second"], client=server.client(), transport=FAST, concurrency=2),
            timeout=20,
        )
    failed = [result.result for result in results if isinstance(result.result, ExecuteFailure)]
    assert [result.result.ok for result in results].count(True) == 1
    assert len(failed) == 1
    context = failed[0].error.context
    assert isinstance(context, ApiErrorContext)
    assert context.error_type == "BatchResultUnreadable"
    assert "a result for this request that cannot be read" in failed[0].error.message
    assert server.batches.created == 1


async def test_batch_client_closes_the_results_download_when_reading_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """Results that cannot be read fail their executions, and the download is closed, not leaked."""
    from anthropic._decoders.jsonl import AsyncJSONLDecoder

    closed: list[object] = []
    close = AsyncJSONLDecoder.close

    async def counting_close(self: AsyncJSONLDecoder[Any]) -> None:
        closed.append(self)
        await close(self)

    monkeypatch.setattr(AsyncJSONLDecoder, "close", counting_close)
    async with FakeAnthropicServer([output_call(PARIS)]) as server:
        server.batches.unreadable_results = True
        [result] = await asyncio.wait_for(
            _run_many(geo_agent(), ["hi"], client=server.client(), transport=FAST), timeout=20
        )
    assert isinstance(result.result, ExecuteFailure)
    assert result.result.error.code == AgentErrorCode.API_ERROR
    assert len(closed) == 1


def test_batch_client_splits_at_the_request_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """More requests than a batch takes go in several batches submitted together."""
    monkeypatch.setattr("typedagent._api.batch_client.MAX_BATCH_REQUESTS", 2)
    with FakeAnthropicServer([output_call(PARIS)], per_conversation=True) as server:
        results = execute_many_sync(geo_agent(), PROMPTS, client=server.client(), transport=FAST)
    assert all(result.result.ok for result in results)
    assert server.batches.created == 3
    assert sorted(len(batch.requests) for batch in server.batches.batches.values()) == [1, 2, 2]


def test_batch_client_a_refused_batch_fails_its_executions() -> None:
    """When the API refuses the batch itself, each of its executions fails with that API error."""
    with FakeAnthropicServer([]) as server:
        client = sdk_client(f"{server.base_url}/nowhere", keep_alive=False, max_retries=0)
        [result] = execute_many_sync(geo_agent(), ["hi"], client=client, transport=FAST)
    assert isinstance(result.result, ExecuteFailure)
    context = result.result.error.context
    assert isinstance(context, ApiErrorContext)
    assert context.status_code == 404


_RUNNER = """
import sys
from anthropic import AsyncAnthropic
sys.path.insert(0, {testing!r})
from toolkit_support import geo_agent
from typedagent import MessageBatches, execute_many_sync
client = AsyncAnthropic(base_url={url!r}, api_key="test")
settings = MessageBatches(poll_s=0.01, max_poll_s=0.05, gather_s=5)
prompts = [f"city {{n}}" for n in range(4)]
results = execute_many_sync(geo_agent(), prompts, client=client, journal={journal!r}, transport=settings)
print(sum(1 for result in results if result.result.ok), sum(1 for result in results if result.resumed))
"""


def test_batch_client_a_killed_run_attaches_to_its_batches(tmp_path: Path) -> None:
    """Killed while its second batch runs, a run started again resubmits nothing and loses nothing."""
    journal = tmp_path / "results.jsonl"
    with FakeAnthropicServer(SCENARIO, per_conversation=True) as server:
        server.batches.processing_s = 0.5
        script = tmp_path / "run.py"
        script.write_text(_RUNNER.format(testing=str(TESTING), url=server.base_url, journal=str(journal)))
        process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        ledger_file = tmp_path / "results.jsonl.batches"
        while process.poll() is None and time.monotonic() < deadline:
            if ledger_file.exists() and ledger_file.read_bytes().count(b"\n") == 2:
                break
            time.sleep(0.005)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        assert server.batches.created == 2
        assert not journal.exists() or journal.read_text() == ""
        ledger = [json.loads(line) for line in ledger_file.read_text().splitlines()]
        assert len(ledger) == 2
        assert all(len(line["requests"]) == 4 for line in ledger)
        server.batches.processing_s = 0
        again = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
        assert again.stdout.split() == ["4", "0"]
        assert server.batches.created == 2  # attached to both batches: nothing submitted again
        assert server.batches.submitted == len(server.requests) == 8
        finished = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    assert finished.stdout.split() == ["4", "4"]  # every execution journaled once, read back
    keys = [json.loads(line)["key"] for line in journal.read_text().splitlines()]
    assert sorted(keys) == ["#0", "#1", "#2", "#3"]


def test_batch_client_abort_cancels_waiting_executions() -> None:
    """The abort event ends executions waiting on a batch; their batch keeps running at the API."""
    abort = threading.Event()
    with FakeAnthropicServer([output_call(PARIS)], per_conversation=True) as server:
        server.batches.processing_s = 60
        threading.Timer(0.5, abort.set).start()
        started = time.monotonic()
        results = execute_many_sync(geo_agent(), PROMPTS, client=server.client(), transport=FAST, abort_event=abort)
    assert time.monotonic() - started < 10
    assert [result.result.error.code for result in results if isinstance(result.result, ExecuteFailure)] == [
        AgentErrorCode.EXECUTION_CANCELLED
    ] * len(PROMPTS)
    assert server.batches.created == 1


def test_batch_client_a_batch_that_cannot_be_checked_fails_its_executions() -> None:
    """A batch whose status the API no longer gives (after five tries) fails its executions with that error."""
    with FakeAnthropicServer([output_call(PARIS)]) as server:
        server.batches.processing_s = 60
        client = server.client(max_retries=0)

        def forget() -> None:
            while not server.batches.batches:
                time.sleep(0.005)
            server.batches.batches.clear()

        threading.Thread(target=forget).start()
        [result] = execute_many_sync(geo_agent(), ["hi"], client=client, transport=FAST)
    assert isinstance(result.result, ExecuteFailure)
    context = result.result.error.context
    assert isinstance(context, ApiErrorContext)
    assert (context.status_code, context.error_type) == (404, "not_found_error")


def test_batch_client_refuses_beta_features() -> None:
    """An agent using beta parameters cannot run in batches: a TypeError says to run it online."""
    with FakeAnthropicServer([]) as server, pytest.raises(TypeError, match="beta features"):
        execute_many_sync(geo_agent(model_settings={"betas": ["x"]}), ["hi"], client=server.client(), transport=FAST)


def test_batch_ledger_records_reopens_and_cuts_a_torn_line(tmp_path: Path) -> None:
    """Recorded batches are found again after reopening; a torn last line is cut off; a bad line is refused."""
    path = tmp_path / "run.jsonl.batches"
    ledger = BatchLedger.open(path)
    asyncio.run(ledger.record("msgbatch_1", {"a-1-x": "#0", "b-1-y": "#1"}))
    asyncio.run(ledger.record("msgbatch_2", {"a-1-x": "#0"}))
    ledger.close()
    with path.open("ab") as file:
        file.write(b'{"batch_id": "msgbatch_3", "requ')
    reopened = BatchLedger.open(path)
    assert (reopened.batch_of("a-1-x"), reopened.batch_of("b-1-y"), reopened.batch_of("c")) == (
        "msgbatch_2",
        "msgbatch_1",
        None,
    )
    assert reopened.batches == 2
    reopened.close()
    assert path.read_bytes().endswith(b"}\n")
    path.write_text('{"batch_id": 3}\n')
    with pytest.raises(JournalError, match=r"run\.jsonl\.batches:1 is not a line of a typedagent batch ledger"):
        BatchLedger.open(path)
    assert ledger_path(tmp_path / "run.jsonl") == path


def test_batch_client_a_canceled_batch_is_submitted_again() -> None:
    """Requests of a batch canceled at the API (in the Console, say) go in the next batch."""
    import httpx2

    with FakeAnthropicServer([output_call(PARIS)], per_conversation=True) as server:
        # The first batch would take a minute, so the cancel always lands first however busy the machine is.
        server.batches.processing_s = 60.0

        def cancel_first() -> None:
            while not server.batches.batches:
                time.sleep(0.005)
            [batch_id] = list(server.batches.batches)
            httpx2.post(f"{server.base_url}/v1/messages/batches/{batch_id}/cancel")
            server.batches.processing_s = 0.1  # read at each poll: the batch submitted again ends soon

        threading.Thread(target=cancel_first).start()
        results = execute_many_sync(geo_agent(), PROMPTS[:2], client=server.client(), transport=FAST)
    assert all(result.result.ok for result in results)
    first, second = server.batches.batches.values()
    assert first.counts == {"canceled": 2}
    assert second.counts == {"succeeded": 2}


def test_batch_client_large_max_tokens_goes_in_a_batch_unstreamed() -> None:
    """A max_tokens that online would stream is sent as a plain batch request: batches have no streaming."""
    with FakeAnthropicServer(SCENARIO, per_conversation=True) as server:
        batched = execute_many_sync(geo_agent(max_tokens=64_000), PROMPTS[:2], client=server.client(), transport=FAST)
        assert all(result.result.ok for result in batched)
        assert server.batches.created == 2
        assert server.batches.submitted == 4
        assert all(request.get("max_tokens") == 64_000 and "stream" not in request for request in server.requests)


def test_batch_client_default_concurrency_puts_every_input_in_each_round() -> None:
    """With no concurrency given, batch mode runs far more than the online 64 at once: 70 inputs, one batch a round."""
    prompts = [f"How many people live in city {n}?" for n in range(70)]
    with FakeAnthropicServer(SCENARIO, per_conversation=True) as server:
        batched = execute_many_sync(geo_agent(), prompts, client=server.client(), transport=FAST)
        assert all(result.result.ok for result in batched)
        assert server.batches.created == 2
        assert server.batches.submitted == 140


def test_batch_client_sends_a_native_output_format_in_each_request() -> None:
    """A native-mode agent's requests each carry output_config.format (and the user's effort) in the batch."""
    agent = geo_agent(output=OutputTool(Answer, mode="native"), model_settings={"output_config": {"effort": "low"}})
    with FakeAnthropicServer(SCENARIO, per_conversation=True) as server:
        batched = execute_many_sync(agent, PROMPTS, client=server.client(), transport=FAST)
    assert [result.result.ok for result in batched] == [True] * len(PROMPTS)
    assert [result.result.unwrap() for result in batched] == [PARIS] * len(PROMPTS)
    assert server.batches.submitted == len(server.requests) == 2 * len(PROMPTS)
    for params in server.requests:
        assert params["output_config"]["effort"] == "low"
        assert params["output_config"]["format"]["type"] == "json_schema"
        assert params["output_config"]["format"]["schema"]["required"] == ["city", "population"]
        assert params["tool_choice"] == {"type": "auto"}
    assert conversation(batched[0].result)[-1]["content"] == [{"type": "text", "text": json.dumps(PARIS.model_dump())}]

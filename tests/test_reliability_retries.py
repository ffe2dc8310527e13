"""Retries are the SDK's, tested end to end over real HTTP with ``FakeAnthropicServer`` (issue 5, point 2).

typedagent never retries an API call itself: ``AsyncAnthropic(max_retries=...)`` does, inside one
``messages.create``. So one iteration may be several HTTP requests, and ``metadata.iterations``
counts iterations, not HTTP requests. Every fault the SDK gives up on ends as an ``API_ERROR``
result, never as an exception.
"""

from __future__ import annotations

import logging
import socket
import time
from typing import Any

import anthropic
import pytest
from pydantic import BaseModel

from typedagent import (
    AgentDefinition,
    AgentErrorCode,
    ApiErrorContext,
    ExecuteFailure,
    ExecuteResult,
    ExecutionLimits,
    OutputTool,
    TimeoutContext,
    TokenUsage,
    define_agent,
    execute_agent,
    tool,
)
from typedagent.testing import (
    FakeAnthropicServer,
    ScriptItem,
    api_error,
    assert_valid_conversation,
    delay,
    dropped_connection,
    malformed_body,
    output_call,
    tool_call,
)


class Out(BaseModel):
    n: int


GOOD = Out(n=1)
QUICK = 0.01
"""A retry-after short enough to keep tests fast (the SDK's own backoff starts at 0.5 s)."""


@tool
async def lookup(query: str) -> str:
    """Look up."""
    return f"found {query}"


def agent() -> AgentDefinition[Out, None]:
    return define_agent(name="retries", model="claude-sonnet-4-6", output=OutputTool(Out), helpers=[lookup])


async def run(
    script: list[ScriptItem], *, limits: ExecutionLimits | None = None, **client: Any
) -> tuple[ExecuteResult[Out], FakeAnthropicServer]:
    async with FakeAnthropicServer(script, strict=False) as server:
        result = await execute_agent(agent(), "go", client=server.client(**client), limits=limits)
    assert_valid_conversation(result.metadata.messages)
    return result, server


def retry_counts(server: FakeAnthropicServer) -> list[str]:
    """The SDK's ``x-stainless-retry-count`` of each HTTP request the server received."""
    return [headers["x-stainless-retry-count"] for headers in server.request_headers]


async def test_retries_529_twice_then_success_is_one_iteration() -> None:
    """Two 529s then an answer: the SDK retries inside one call; the run succeeds with one iteration."""
    script = [api_error(529, retry_after=QUICK), api_error(529, retry_after=QUICK), output_call(GOOD)]
    result, server = await run(script, max_retries=2)
    assert result.ok
    assert result.output == GOOD
    assert retry_counts(server) == ["0", "1", "2"]
    assert result.metadata.iterations == 1
    assert result.metadata.tokens == TokenUsage(input_tokens=10, output_tokens=5)


@pytest.mark.parametrize("status", [408, 409, 429, 500, 503, 529])
async def test_retries_every_retryable_status_then_success(status: int) -> None:
    """The SDK retries 408, 409, 429 and 5xx; the run never sees them."""
    result, server = await run([api_error(status, retry_after=QUICK), output_call(GOOD)], max_retries=1)
    assert result.ok
    assert retry_counts(server) == ["0", "1"]


async def test_retries_retry_after_is_honoured(caplog: pytest.LogCaptureFixture) -> None:
    """A 429's retry-after sets the SDK's wait before the retry (its log says so; the clock agrees)."""
    caplog.set_level(logging.INFO, logger="anthropic")
    started = time.monotonic()
    result, server = await run([api_error(429, retry_after=0.3), output_call(GOOD)], max_retries=1)
    elapsed = time.monotonic() - started
    assert result.ok
    assert retry_counts(server) == ["0", "1"]
    waits = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Retrying request")]
    assert waits == ["Retrying request to /v1/messages in 0.300000 seconds"]
    assert elapsed >= 0.3


async def test_retries_exhausted_end_as_api_error_with_the_last_response() -> None:
    """When max_retries runs out, the last status, type and request id are in the API_ERROR context."""
    script = [api_error(529, retry_after=QUICK, request_id=f"req_{n}") for n in range(3)]
    result, server = await run([*script, output_call(GOOD)], max_retries=2)
    assert isinstance(result, ExecuteFailure)
    assert result.error.code is AgentErrorCode.API_ERROR
    assert result.error.context == ApiErrorContext(
        status_code=529, error_type="overloaded_error", request_id="req_2", attempt=1, iteration=1
    )
    assert type(result.error.cause) is anthropic.OverloadedError
    assert retry_counts(server) == ["0", "1", "2"]
    assert result.metadata.iterations == 1


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
async def test_retries_client_errors_are_not_retried(status: int) -> None:
    """A 4xx other than 408/409/429 is final: one HTTP request, then API_ERROR."""
    result, server = await run([api_error(status, request_id="req_once"), output_call(GOOD)], max_retries=2)
    assert isinstance(result, ExecuteFailure)
    assert result.error.context == ApiErrorContext(
        status_code=status,
        error_type=result.error.context.error_type,  # type: ignore[union-attr]
        request_id="req_once",
        attempt=1,
        iteration=1,
    )
    assert retry_counts(server) == ["0"]


async def test_retries_server_can_forbid_a_retry() -> None:
    """x-should-retry: false on a 529 stops the SDK from retrying it."""
    script = [api_error(529, headers={"x-should-retry": "false"}), output_call(GOOD)]
    result, server = await run(script, max_retries=2)
    assert not result.ok
    assert retry_counts(server) == ["0"]


async def test_retries_malformed_body_ends_as_failure_not_exception() -> None:
    """A 200 whose body is broken JSON is API_ERROR 'malformed_response' (the SDK does not retry it)."""
    result, server = await run([malformed_body(), output_call(GOOD)], max_retries=2)
    assert isinstance(result, ExecuteFailure)
    assert result.error.context == ApiErrorContext(
        status_code=None, error_type="malformed_response", request_id=None, attempt=1, iteration=1
    )
    assert retry_counts(server) == ["0"]


async def test_retries_wrong_shape_body_ends_as_failure_not_exception() -> None:
    """A 200 with valid JSON that is not a Message (a proxy's answer) is API_ERROR, not an AttributeError."""
    result, _ = await run([malformed_body('{"status": "ok"}'), output_call(GOOD)], max_retries=0)
    assert isinstance(result, ExecuteFailure)
    assert result.error.context.error_type == "malformed_response"  # type: ignore[union-attr]


async def test_retries_dropped_connection_is_retried_by_the_sdk() -> None:
    """A connection closed without a response is retried (SDK backoff) and the run succeeds."""
    result, server = await run([dropped_connection(), output_call(GOOD)], max_retries=1)
    assert result.ok
    assert retry_counts(server) == ["0", "1"]


async def test_retries_dropped_connection_without_retries_is_api_error() -> None:
    """With max_retries=0 a dropped connection is API_ERROR connection_error, status None."""
    result, _ = await run([dropped_connection(), output_call(GOOD)], max_retries=0)
    assert isinstance(result, ExecuteFailure)
    assert result.error.context == ApiErrorContext(
        status_code=None, error_type="connection_error", request_id=None, attempt=1, iteration=1
    )


async def test_retries_refused_connection_ends_as_failure_not_exception() -> None:
    """Nothing listening on the port: API_ERROR connection_error, whatever the SDK retried."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = anthropic.AsyncAnthropic(api_key="test", base_url=f"http://127.0.0.1:{port}", max_retries=0)
    result = await execute_agent(agent(), "go", client=client)
    assert isinstance(result, ExecuteFailure)
    assert result.error.code is AgentErrorCode.API_ERROR
    assert result.error.context == ApiErrorContext(
        status_code=None, error_type="connection_error", request_id=None, attempt=1, iteration=1
    )
    assert type(result.error.cause) is anthropic.APIConnectionError
    await client.close()


async def test_retries_client_timeout_is_api_error() -> None:
    """A response slower than the client's timeout is API_ERROR timeout_error."""
    result, _ = await run([delay(2, output_call(GOOD))], timeout=0.1, max_retries=0)
    assert isinstance(result, ExecuteFailure)
    assert result.error.context == ApiErrorContext(
        status_code=None, error_type="timeout_error", request_id=None, attempt=1, iteration=1
    )


async def test_retries_execution_deadline_cuts_a_long_retry_after() -> None:
    """The SDK would obey retry-after: 30; ExecutionLimits.timeout_s interrupts the wait → TIMEOUT."""
    started = time.monotonic()
    result, server = await run(
        [api_error(429, retry_after=30), output_call(GOOD)], limits=ExecutionLimits(timeout_s=0.3), max_retries=2
    )
    assert time.monotonic() - started < 10
    assert isinstance(result, ExecuteFailure)
    assert result.error.code is AgentErrorCode.TIMEOUT
    assert result.error.context == TimeoutContext(timeout_s=0.3, phase="iteration", attempt=1, iteration=1)
    assert retry_counts(server) == ["0"]


async def test_retries_mid_run_fault_keeps_earlier_work() -> None:
    """A fault the SDK gives up on in iteration 2 keeps iteration 1's tokens and conversation."""
    script = [tool_call("lookup", {"query": "vpn"}), api_error(500, retry_after=QUICK), api_error(500)]
    result, server = await run(script, max_retries=1)
    assert isinstance(result, ExecuteFailure)
    assert result.error.context == ApiErrorContext(
        status_code=500, error_type="api_error", request_id=result.error.context.request_id, attempt=1, iteration=2
    )
    assert result.metadata.iterations == 2
    assert result.metadata.tokens == TokenUsage(input_tokens=10, output_tokens=5)
    assert [m["role"] for m in result.metadata.messages] == ["user", "assistant", "user"]
    assert retry_counts(server) == ["0", "0", "1"]

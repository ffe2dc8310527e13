"""``ServerRateLimits``: the fake server enforces the API's rate limits, with its headers and 429 bodies."""

from __future__ import annotations

import asyncio
import re
import time
from datetime import UTC, datetime
from typing import Any

import anthropic
import pytest

from typedagent.testing import (
    FakeAnthropicServer,
    FakeAnthropicServerProcess,
    ServerRateLimits,
    api_error,
    response,
    text,
    usage,
)

RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


async def call(client: anthropic.AsyncAnthropic, max_tokens: int = 100) -> Any:
    """One raw Messages API call; returns the raw response (headers and parsed body)."""
    return await client.messages.with_raw_response.create(
        model="claude-sonnet-4-6", max_tokens=max_tokens, messages=[{"role": "user", "content": "hi"}]
    )


def ratelimit_headers(headers: Any) -> dict[str, str]:
    return {name: value for name, value in headers.items() if name.startswith("anthropic-ratelimit-")}


async def test_server_ratelimit_headers_on_every_response() -> None:
    """A served response carries limit, remaining and an RFC 3339 reset for each configured limit."""
    limits = ServerRateLimits(requests_per_minute=600, input_tokens_per_minute=40_000, output_tokens_per_minute=8_000)
    script = [response(text("hi"), usage=usage(1_200, 30))]
    async with FakeAnthropicServer(script, rate_limits=limits) as server, server.client() as client:
        raw = await call(client, max_tokens=1_000)
    headers = ratelimit_headers(raw.headers)
    resets = {name: headers.pop(name) for name in list(headers) if name.endswith("-reset")}
    assert headers == {
        "anthropic-ratelimit-requests-limit": "600",
        "anthropic-ratelimit-requests-remaining": "599",
        "anthropic-ratelimit-input-tokens-limit": "40000",
        "anthropic-ratelimit-input-tokens-remaining": "39000",  # 38,800, rounded to the nearest thousand
        "anthropic-ratelimit-output-tokens-limit": "8000",
        "anthropic-ratelimit-output-tokens-remaining": "7000",  # max_tokens is charged at admission
        "anthropic-ratelimit-tokens-limit": "8000",  # the token limit closest to being hit
        "anthropic-ratelimit-tokens-remaining": "7000",
    }
    names = ("input-tokens", "output-tokens", "requests", "tokens")
    assert sorted(resets) == [f"anthropic-ratelimit-{name}-reset" for name in names]
    for value in resets.values():
        assert RFC3339.match(value)
        full_at = datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        # Refilled within seconds (the API's resets have whole seconds, so one may read up to 1 s early).
        assert -1 <= (full_at - datetime.now(UTC)).total_seconds() <= 10
    assert server.rate_limited == 0


async def test_server_ratelimit_refuses_with_the_api_429() -> None:
    """Past the request limit: a 429 rate_limit_error body, whole-second retry-after, the same headers."""
    limits = ServerRateLimits(requests_per_minute=60, capacity_s=1)  # a bucket of one request, one per second
    server = FakeAnthropicServer(["one", "two"], rate_limits=limits)
    async with server, server.client(max_retries=0) as client:
        await call(client)
        with pytest.raises(anthropic.RateLimitError) as caught:
            await call(client)
    error = caught.value
    assert error.status_code == 429
    assert error.body == {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "This request would exceed the rate limit for your organization of 60 requests per minute. "
            "You can see the response headers for current usage. Please reduce the prompt length or the maximum "
            "tokens requested, or try again later.",
        },
    }
    assert error.response.headers["retry-after"] == "1"
    assert error.response.headers["anthropic-ratelimit-requests-remaining"] == "0"
    assert error.request_id == "req_fake_000002"
    assert server.rate_limited == 1
    assert server.remaining == 1  # the refused request did not take its item


async def test_server_ratelimit_input_tokens_name_the_limit() -> None:
    """A request whose input tokens do not fit is refused, naming input tokens; cache reads do not count."""
    limits = ServerRateLimits(input_tokens_per_minute=6_000)
    cached = response(text("a"), usage=usage(100, 5, cache_read_input_tokens=50_000))
    big = response(text("b"), usage=usage(5_000, 5))
    server = FakeAnthropicServer([cached, big, big], rate_limits=limits)
    async with server, server.client(max_retries=0) as client:
        await call(client)
        await call(client)
        with pytest.raises(anthropic.RateLimitError, match="of 6,000 input tokens per minute"):
            await call(client)
    assert server.rate_limited == 1


async def test_server_ratelimit_gives_back_unused_output_tokens() -> None:
    """max_tokens is held while a request runs; what the response did not use is given back."""
    limits = ServerRateLimits(output_tokens_per_minute=8_000)
    script = [response(text("x"), usage=usage(10, 100))] * 4
    async with (
        FakeAnthropicServer(script, rate_limits=limits, latency_ms=300) as server,
        server.client(max_retries=0) as client,
    ):
        outcomes = await asyncio.gather(call(client, 4_096), call(client, 4_096), return_exceptions=True)
        assert sorted(type(o).__name__ for o in outcomes) == ["AsyncAPIResponse", "RateLimitError"]
        await call(client, 4_096)  # the first one gave back 3,996 unused tokens
        await call(client, 4_096)
    assert server.rate_limited == 1


async def test_server_ratelimit_refill_lets_the_sdk_retry_succeed() -> None:
    """The SDK's own retry after retry-after is admitted and served the item the refused request did not take."""
    limits = ServerRateLimits(requests_per_minute=60, capacity_s=1)
    async with FakeAnthropicServer(["one", "two"], rate_limits=limits) as server, server.client() as client:
        first = await call(client)
        started = time.monotonic()
        second = await call(client)
        waited = time.monotonic() - started
    assert [(await first.parse()).content[0].text, (await second.parse()).content[0].text] == ["one", "two"]
    assert 0.9 <= waited < 5
    assert server.rate_limited == 1
    assert server.requests_served == 3


async def test_server_ratelimit_faults_and_exhausted_scripts() -> None:
    """A scripted fault is served once admitted; a request past the script's end is still a 400 problem."""
    limits = ServerRateLimits(requests_per_minute=600)
    server = FakeAnthropicServer([api_error(500)], rate_limits=limits, strict=False)
    async with server, server.client(max_retries=0) as client:
        with pytest.raises(anthropic.InternalServerError) as fault:
            await call(client)
        with pytest.raises(anthropic.BadRequestError, match="the script has only 1 item"):
            await call(client)
    assert fault.value.response.headers["anthropic-ratelimit-requests-remaining"] == "599"
    assert len(server.problems) == 1


@pytest.mark.parametrize(
    ("field", "value"),
    [("requests_per_minute", 0), ("input_tokens_per_minute", True), ("capacity_s", 0), ("capacity_s", "1")],
)
def test_server_ratelimit_rejects_bad_settings(field: str, value: object) -> None:
    """Limits must be positive whole numbers, the capacity a positive number of seconds."""
    with pytest.raises(ValueError, match=f"ServerRateLimits.{field}"):
        ServerRateLimits(**{field: value})  # type: ignore[arg-type]


async def test_server_ratelimit_in_its_own_process() -> None:
    """The process variant passes the limits on and counts the 429s it sent."""
    limits = ServerRateLimits(requests_per_minute=60, input_tokens_per_minute=1_000_000, capacity_s=1)
    async with FakeAnthropicServerProcess(["one", "two"], rate_limits=limits) as server:
        async with server.client(max_retries=0) as client:
            await call(client)
            with pytest.raises(anthropic.RateLimitError):
                await call(client)
        stats = await asyncio.to_thread(server.stats)
    assert stats == {"requests_served": 2, "problems": [], "rate_limited": 1}
    assert "rate limited (429): 1" in server.stderr

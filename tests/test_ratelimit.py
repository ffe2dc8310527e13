"""The rate limiter of ``execute_many``: paced by the API's headers, 429s waited out, concurrency adapted."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any

import anthropic  # noqa: F401 - importing the SDK takes seconds: never inside a timed section below
import httpx2
import pytest
from support import GOOD, Triage, triage_agent

from typedagent import (
    AgentDefinitionError,
    AgentErrorCode,
    ApiErrorContext,
    ManyResult,
    RateLimits,
    execute_agent,
    execute_many,
)
from typedagent._api.ratelimit import Ticket, retry_after_s
from typedagent.testing import (
    FakeAnthropicServer,
    FunctionClient,
    ScriptedClient,
    ServerRateLimits,
    api_error,
    output_call,
    response,
    tool_call,
    usage,
)


async def run_all(*args: Any, **kwargs: Any) -> list[ManyResult[Triage]]:
    return [result async for result in execute_many(*args, **kwargs)]


async def test_rate_limiter_paces_to_the_request_limit() -> None:
    """Learning the limit from the headers, the limiter spreads calls out instead of drawing 429s."""
    limits = ServerRateLimits(requests_per_minute=1_200, capacity_s=0.5)  # 20 per second, bursts of 10
    server = FakeAnthropicServer([output_call(GOOD)], per_conversation=True, rate_limits=limits)
    async with server, server.client(max_retries=0) as client:
        started = time.monotonic()
        results = await run_all(triage_agent(), [f"t{i}" for i in range(40)], client=client, concurrency=40)
        wall = time.monotonic() - started
    assert all(result.result.ok for result in results)
    assert server.rate_limited <= 1  # pacing, not luck: the same burst unpaced draws about 30 429s
    assert wall >= (40 - 10) / 20 * 0.9  # never faster than the limit allows


async def test_rate_limiter_paces_to_token_limits() -> None:
    """Input tokens (the average per call, learned from usage) and max_tokens are paced like requests."""
    limits = ServerRateLimits(input_tokens_per_minute=60_000, output_tokens_per_minute=600_000, capacity_s=1)
    script = [response(tool_call("final_output", GOOD.model_dump()), usage=usage(200, 20))]
    server = FakeAnthropicServer(script, per_conversation=True, rate_limits=limits)
    async with server, server.client(max_retries=0) as client:
        started = time.monotonic()
        results = await run_all(triage_agent(), [f"t{i}" for i in range(30)], client=client, concurrency=30)
        wall = time.monotonic() - started
    # 1,000 input tokens per second in bursts of 1,000: 30 calls of 200 need 5 s at least, minus the burst.
    assert all(result.result.ok for result in results)
    assert server.rate_limited <= 2
    assert wall >= (30 * 200 - 1_000) / 1_000 * 0.9


async def test_rate_limiter_waits_out_a_429_without_failing_the_execution() -> None:
    """A 429 is waited out as retry-after says and sent again, without spending the SDK's max_retries."""
    script = [api_error(429, retry_after=0.2), output_call(GOOD)]
    async with FakeAnthropicServer(script) as server, server.client(max_retries=0) as client:
        [result] = await run_all(triage_agent(), ["a"], client=client)
    assert result.result.unwrap() == GOOD
    assert server.requests_served == 2
    async with FakeAnthropicServer(script) as server, server.client(max_retries=0) as client:
        alone = await execute_agent(triage_agent(), "a", client=client)
    assert not alone.ok
    assert isinstance(alone.error.context, ApiErrorContext)
    assert alone.error.context.error_type == "rate_limit_error"


async def test_rate_limiter_waits_out_a_429_from_a_client_without_middleware() -> None:
    """Clients that are not SDK clients raise their 429: it is waited out the same way."""
    client = ScriptedClient([api_error(429, retry_after=0.1), api_error(429, retry_after=0.1), output_call(GOOD)])
    started = time.monotonic()
    [result] = await run_all(triage_agent(), ["a"], client=client)
    assert result.result.unwrap() == GOOD
    assert time.monotonic() - started >= 0.2
    assert len(client.requests) == 3


async def test_rate_limiter_gives_up_after_max_wait() -> None:
    """Past ``max_wait_s`` the 429 goes to the client's own retries and then fails the execution."""
    client = ScriptedClient([api_error(429, retry_after=0.05)] * 3)
    [result] = await run_all(triage_agent(), ["a"], client=client, rate_limits=RateLimits(max_wait_s=0.1))
    assert not result.result.ok
    assert result.result.error.code == AgentErrorCode.API_ERROR
    assert len(client.requests) == 3


def _far_future_date() -> str:
    from email.utils import formatdate

    return formatdate(time.time() + 86_400, usegmt=True)


@pytest.mark.parametrize(
    "headers",
    [{"retry-after": "86400"}, {"retry-after-ms": "86400000"}, {"retry-after": "far-future date"}],
    ids=["seconds", "milliseconds", "http-date"],
)
async def test_rate_limiter_bounds_a_huge_retry_after_by_max_wait(headers: dict[str, str]) -> None:
    """A 429 asking for a day (seconds, ms or a date) goes to the SDK's retries at once; none waits past max_wait_s."""
    if headers.get("retry-after") == "far-future date":
        headers = {"retry-after": _far_future_date()}
    script = [api_error(429, headers=headers), output_call(GOOD)]
    started = time.monotonic()
    async with FakeAnthropicServer(script) as server, server.client(max_retries=1) as client:
        results = await asyncio.wait_for(
            run_all(triage_agent(), ["a"], client=client, rate_limits=RateLimits(max_wait_s=0.3)), timeout=20
        )
    assert [result.result.unwrap() for result in results] == [GOOD]
    assert server.requests_served == 2
    assert time.monotonic() - started < 10  # the SDK's own backoff, never the day asked for


async def test_rate_limiter_pause_of_every_call_is_bounded_by_max_wait() -> None:
    """A 429 asking for a day pauses the client's other calls for max_wait_s at most; the refused call fails."""
    client = ScriptedClient([api_error(429, retry_after=86_400), output_call(GOOD)])
    started = time.monotonic()
    results = await asyncio.wait_for(
        run_all(triage_agent(), ["a", "b"], client=client, rate_limits=RateLimits(max_wait_s=0.3)), timeout=20
    )
    elapsed = time.monotonic() - started
    failed = [result.result for result in results if not result.result.ok]
    assert [result.result.output for result in results if result.result.ok] == [GOOD]
    assert len(failed) == 1
    assert failed[0].error.code == AgentErrorCode.API_ERROR
    assert isinstance(failed[0].error.context, ApiErrorContext)
    assert failed[0].error.context.error_type == "rate_limit_error"
    assert 0.25 <= elapsed < 3


@pytest.mark.parametrize(
    "headers",
    [
        {"anthropic-ratelimit-requests-limit": "0.001", "anthropic-ratelimit-requests-remaining": "0"},
        {"anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "-100000"},
        {"anthropic-ratelimit-input-tokens-limit": "0.001", "anthropic-ratelimit-input-tokens-remaining": "0"},
        {"anthropic-ratelimit-output-tokens-limit": "1000", "anthropic-ratelimit-output-tokens-remaining": "-1e9"},
        {"anthropic-ratelimit-requests-limit": "10", "anthropic-ratelimit-requests-remaining": "1e12"},
    ],
    ids=["tiny-limit", "negative-remaining", "tiny-token-limit", "negative-tokens", "remaining-above-limit"],
)
async def test_rate_limiter_distrusts_malformed_rate_limit_headers(headers: dict[str, str]) -> None:
    """Rate-limit headers that cannot be true (a limit below 1, remaining outside 0..limit) never stall a call."""
    client = ScriptedClient([api_error(500, headers=headers), output_call(GOOD), output_call(GOOD)])
    started = time.monotonic()
    results = await asyncio.wait_for(run_all(triage_agent(), ["a", "b"], client=client, concurrency=1), timeout=20)
    assert [result.result.ok for result in results] == [False, True]
    assert len(client.requests) == 2
    assert time.monotonic() - started < 5


def test_rate_limiter_never_waits_more_than_a_minute_for_a_bucket() -> None:
    """However far below zero an estimate falls, a bucket refills within a minute: no wait is longer."""
    from typedagent._api.ratelimit import RateLimiter, Ticket

    limiter = RateLimiter(RateLimits(requests_per_minute=60, input_tokens_per_minute=1_000), concurrency=1)
    ticket = limiter.buckets["input-tokens"]
    ticket.level = -1e12
    assert limiter._delay(Ticket(0.0, 0.0)) == 60.0


class _Clocked:
    """A limiter on a clock the test moves (``advance``), and calls admitted as the dispatcher would."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, limits: RateLimits) -> None:
        from typedagent._api import ratelimit

        self.now = 100.0
        monkeypatch.setattr(ratelimit, "time", SimpleNamespace(monotonic=lambda: self.now))
        self.limiter = ratelimit.RateLimiter(limits, concurrency=10**6)
        self.limiter.window = 10**6

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def delay(self, output_cost: float = 0.0) -> float:
        return self.limiter._delay(Ticket(0.0, output_cost))

    def admit(self, output_cost: float = 0.0) -> Ticket:
        ticket = Ticket(0.0, output_cost)
        assert self.limiter._delay(ticket) == 0
        self.limiter._admit(ticket)
        return ticket


def test_rate_limiter_counts_a_travelling_call_as_arrived_after_a_second(monkeypatch: pytest.MonkeyPatch) -> None:
    """A full bucket does not refill for calls on their way; a second after sending (or on an answer) they count."""
    clocked = _Clocked(monkeypatch, RateLimits(requests_per_minute=60))  # 1 per second, a minute's worth held
    sent = [clocked.admit() for _ in range(58)]
    requests = clocked.limiter.buckets["requests"]
    assert (requests.level, requests.travelling) == (2, 58)
    clocked.advance(0.5)
    last = clocked.admit()  # 2 left: the reserve and one call
    clocked.advance(0.4)
    # Our clock says 0.9 s refilled almost a call, but the API's bucket stood full while all 59 travelled.
    assert clocked.delay() == pytest.approx(1.0)
    assert requests.level == 1  # not 1.4
    clocked.advance(0.2)
    # The first 58 count as arrived at 1.0 s, when they were due: the bucket refills from then on, not before.
    assert clocked.delay() == pytest.approx(0.9)
    assert requests.travelling == 1
    clocked.limiter.release(last, 200)
    assert clocked.delay() == pytest.approx(0.9)
    assert requests.travelling == 0
    assert all(not ticket.travelling for ticket in [*sent, last])


@pytest.mark.parametrize(("rpm", "burst"), [(60, 58), (6_000, 5_900)])
def test_rate_limiter_refills_the_same_whether_or_not_anything_looked(
    monkeypatch: pytest.MonkeyPatch, rpm: int, burst: int
) -> None:
    """What the estimate gains while calls travel does not depend on when the limiter was last asked."""
    levels = []
    for look_between in (False, True):
        clocked = _Clocked(monkeypatch, RateLimits(requests_per_minute=rpm))
        for _ in range(burst):
            clocked.admit()
        clocked.advance(0.9)
        if look_between:
            clocked.delay()
        clocked.advance(0.2)
        clocked.delay()
        levels.append(clocked.limiter.buckets["requests"].level)
    # Refilled only from 1.0 s, when the burst counted as arrived: 0.1 s of the rate on what was left.
    assert levels[0] == pytest.approx(levels[1])
    assert levels[0] == pytest.approx(rpm - burst + 0.1 * rpm / 60)


def test_rate_limiter_long_calls_hold_the_ceiling_for_a_second_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls that run 30 s (long generations) stop holding the ceiling a second after they were sent."""
    clocked = _Clocked(monkeypatch, RateLimits(output_tokens_per_minute=60_000))  # 1,000 a second
    first = clocked.admit(30_000)
    clocked.admit(30_000)
    clocked.advance(30)
    headers = {
        "anthropic-ratelimit-output-tokens-limit": "60000",
        "anthropic-ratelimit-output-tokens-remaining": "30000",
    }
    clocked.limiter.observe(first, headers)
    clocked.limiter.release(first, 200)
    # 29 of the 30 seconds refilled (the first second, the API's full bucket gained nothing): 1 s to wait.
    assert clocked.limiter.buckets["output-tokens"].level == pytest.approx(29_000)
    assert clocked.delay(30_000) == pytest.approx(1.0)


def test_rate_limiter_counts_calls_travelling_no_longer_than_the_bucket_takes_to_fill(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bucket holding half a second's worth counts a call as travelling half a second, and keeps most of its rate."""
    clocked = _Clocked(monkeypatch, RateLimits(requests_per_minute=1_200))  # 20 per second
    requests = clocked.limiter.buckets["requests"]
    requests.capacity = requests.level = 10  # learned from headers: the API holds half a second's worth
    admitted = 0
    for _ in range(10_000):  # 20 s of endless demand, every call answered after 30 s (none in this span)
        if clocked.now >= 120:
            break
        wait = clocked.delay()
        if wait:
            clocked.advance(wait)
        else:
            clocked.admit()
            admitted += 1
    assert clocked.now >= 120
    # The API allows 10 + 20 s x 20 = 410; counting calls as travelling a whole second would admit about 180.
    assert admitted >= 300
    assert clocked.limiter._travel.window() == 0.5


def test_rate_limiter_waits_for_travelling_calls_without_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cost just above what travelling calls leave waits for their arrival, not for a refill that cannot come."""
    clocked = _Clocked(monkeypatch, RateLimits(output_tokens_per_minute=60_000))  # 1,000 a second
    clocked.admit(30_000)
    clocked.advance(0.25)
    # 30,001 needs 1 token more than the 30,000 left: 1 ms of refill, which the full API bucket never gets.
    assert clocked.delay(30_001) == pytest.approx(0.75)
    assert clocked.delay(30_000) == 0


async def test_rate_limiter_other_errors_pass_through() -> None:
    """Errors other than 429 are the execution's own: the limiter lets them through unchanged."""
    client = ScriptedClient([api_error(500, "boom")])
    [result] = await run_all(triage_agent(), ["a"], client=client)
    assert not result.result.ok
    assert isinstance(result.result.error.context, ApiErrorContext)
    assert result.result.error.context.status_code == 500


async def test_rate_limiter_halves_concurrency_on_429s() -> None:
    """A backend that refuses more than 2 calls at once: the limiter backs off to what it accepts."""
    in_flight = 0
    refused = 0

    async def narrow(request: dict[str, Any]) -> Any:
        nonlocal in_flight, refused
        if in_flight >= 2:
            refused += 1
            return api_error(429, retry_after=0.01)
        in_flight += 1
        try:
            await asyncio.sleep(0.02)
        finally:
            in_flight -= 1
        return output_call(GOOD)

    results = await run_all(triage_agent(), [f"t{i}" for i in range(60)], client=FunctionClient(narrow), concurrency=32)
    assert all(result.result.ok for result in results)
    assert refused < 60  # unpaced, each of the 60 would be refused again and again
    unpaced = await run_all(
        triage_agent(), [f"t{i}" for i in range(10)], client=FunctionClient(narrow), concurrency=10, rate_limits=None
    )
    assert sum(not result.result.ok for result in unpaced) >= 7


async def test_rate_limiter_is_shared_by_runs_on_one_client() -> None:
    """Two runs on one client share its limiter: together they still stay under the limit."""
    limits = ServerRateLimits(requests_per_minute=1_200, capacity_s=0.5)
    server = FakeAnthropicServer([output_call(GOOD)], per_conversation=True, rate_limits=limits)
    async with server, server.client(max_retries=0) as client:
        both = await asyncio.gather(
            run_all(triage_agent(), [f"a{i}" for i in range(20)], client=client, concurrency=20),
            run_all(triage_agent(), [f"b{i}" for i in range(20)], client=client, concurrency=20),
        )
    assert all(result.result.ok for run in both for result in run)
    assert server.rate_limited <= 1


class _HeldInTransit(httpx2.AsyncBaseTransport):
    """A network that holds every request after the first for ``hold_s``, then delivers them together.

    What a client sees when its requests queue up on the way (a stalled event loop, a slow network): the
    API's bucket, full, gains nothing while they travel, though the client's clock says it refills.
    """

    def __init__(self, hold_s: float) -> None:
        self.inner = httpx2.AsyncHTTPTransport(limits=httpx2.Limits(max_keepalive_connections=0))
        self.hold_s = hold_s
        self.gate: asyncio.Future[None] | None = None
        self.seen = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.seen += 1
        if self.seen > 1:
            if self.gate is None:
                self.gate = asyncio.get_running_loop().create_future()
                asyncio.get_running_loop().call_later(self.hold_s, self.gate.set_result, None)
            await asyncio.shield(self.gate)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_rate_limiter_counts_requests_still_on_their_way() -> None:
    """Calls sent but not yet arrived hold their place in a full bucket: no refill is counted for them."""
    limits = ServerRateLimits(requests_per_minute=1_200, capacity_s=0.5)  # 20 per second, bursts of 10
    server = FakeAnthropicServer([output_call(GOOD)], per_conversation=True, rate_limits=limits)
    transport = _HeldInTransit(hold_s=0.4)
    async with server, server.client(max_retries=0, http_client=httpx2.AsyncClient(transport=transport)) as client:
        results = await run_all(triage_agent(), [f"t{i}" for i in range(20)], client=client, concurrency=20)
    assert all(result.result.ok for result in results)
    assert transport.seen - server.rate_limited == 20
    # Held 0.4 s, the client's clock gains 8 calls the API's full bucket never gains: counting them, the
    # client would send them into the held queue and draw about 8 429s.
    assert server.rate_limited == 0


async def test_rate_limiter_configured_limits_pace_a_client_without_headers() -> None:
    """``RateLimits(requests_per_minute=...)`` paces clients whose responses carry no headers."""
    client = ScriptedClient([output_call(GOOD)] * 8)
    started = time.monotonic()
    config = RateLimits(requests_per_minute=600)  # 10 per second, a minute's burst: 8 calls go at once
    results = await run_all(triage_agent(), [f"t{i}" for i in range(8)], client=client, rate_limits=config)
    assert len(results) == 8
    assert time.monotonic() - started < 1
    slow = ScriptedClient([output_call(GOOD)] * 3)
    started = time.monotonic()
    tight = RateLimits(requests_per_minute=1)  # one call, then one a minute: the third cannot start soon
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(run_all(triage_agent(), ["a", "b", "c"], client=slow, rate_limits=tight), 0.5)
    assert len(slow.requests) == 1


@pytest.mark.parametrize(
    ("field", "value"),
    [("requests_per_minute", 0), ("output_tokens_per_minute", 2.5), ("max_wait_s", 0), ("max_wait_s", True)],
)
def test_rate_limits_reject_bad_settings(field: str, value: object) -> None:
    """Limits are whole numbers >= 1; the longest wait a positive number of seconds."""
    with pytest.raises(AgentDefinitionError, match=f"RateLimits.{field}"):
        RateLimits(**{field: value})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after": "soon"}, 1.0),
        ({"retry-after": "-4"}, 1.0),
        ({"retry-after": "inf"}, 1.0),
        ({}, 1.0),
    ],
)
def test_rate_limiter_reads_retry_after(headers: dict[str, str], seconds: float) -> None:
    """retry-after-ms, retry-after in seconds; anything unreadable waits 1 s."""
    assert retry_after_s(headers) == seconds


def test_rate_limiter_reads_retry_after_dates() -> None:
    """retry-after may also be an HTTP date."""
    from email.utils import formatdate

    wait = retry_after_s({"retry-after": formatdate(time.time() + 30, usegmt=True)})
    assert 28 <= wait <= 31


class Unhashable(ScriptedClient):
    """A client that cannot be a dictionary key (it defines ``__eq__`` without ``__hash__``)."""

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = None  # type: ignore[assignment]


async def test_rate_limiter_for_clients_that_cannot_be_registered() -> None:
    """A client that cannot be registered gets a limiter of its own for the run."""
    client = Unhashable([api_error(429, retry_after=0.01), output_call(GOOD)])
    [result] = await run_all(triage_agent(), ["a"], client=client)
    assert result.result.unwrap() == GOOD
    assert len(client.requests) == 2


class OddMiddleware(ScriptedClient):
    """SDK-like, but its ``with_middleware`` does not take ours."""

    def with_middleware(self, *middleware: object) -> ScriptedClient:
        raise TypeError("this client's middleware is different")


async def test_rate_limiter_paces_around_a_client_whose_middleware_differs() -> None:
    """If a client's ``with_middleware`` refuses the limiter, calls are paced around ``messages.create``."""
    client = OddMiddleware([api_error(429, retry_after=0.01), output_call(GOOD)])
    [result] = await run_all(triage_agent(), ["a"], client=client)
    assert result.result.unwrap() == GOOD
    assert len(client.requests) == 2


async def test_rate_limiter_without_headers_paces_around_the_sdk_client() -> None:
    """Responses without rate-limit headers: later calls skip the middleware, and a 429 is still waited out."""
    script = [output_call(GOOD), api_error(429, retry_after=0.05), output_call(GOOD)]
    async with FakeAnthropicServer(script) as server, server.client(max_retries=0) as client:
        results = await run_all(triage_agent(), ["a", "b"], client=client, concurrency=1)
    assert [result.result.unwrap() for result in results] == [GOOD, GOOD]
    assert server.requests_served == 3

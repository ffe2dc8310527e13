"""``ServerRateLimits``: the Messages API's rate limits (token buckets, headers, 429s), for ``FakeAnthropicServer``."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal, TypeAlias

from ._items import Block, Delayed, ScriptedResponse, ScriptItem, as_response, error_body

__all__ = ["Admission", "RateLimitBuckets", "ServerRateLimits"]

Dimension: TypeAlias = Literal["requests", "input-tokens", "output-tokens"]

_LABELS: Final[dict[Dimension, str]] = {
    "requests": "requests",
    "input-tokens": "input tokens",
    "output-tokens": "output tokens",
}


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerRateLimits:
    """The rate limits a ``FakeAnthropicServer`` enforces, the way the Messages API does.

    Each limit is a token bucket that refills continuously at ``limit / 60`` per second up to its
    capacity and starts full. A request is admitted only when every bucket holds its cost: 1 request,
    its input tokens (the scripted response's ``input_tokens + cache_creation_input_tokens``; cache
    reads do not count) and its ``max_tokens`` of output tokens (the API's estimate at admission; the
    unused part is given back when the response is sent). Otherwise it gets a 429 ``rate_limit_error``
    with ``retry-after`` (whole seconds, as the API sends it) and is not served. Every response, 429s
    included, carries the ``anthropic-ratelimit-{requests,input-tokens,output-tokens,tokens}-{limit,
    remaining,reset}`` headers of the configured limits (token counts rounded to the nearest thousand,
    resets as RFC 3339 times, as the API does).

    Example:
        ``FakeAnthropicServer(script, rate_limits=ServerRateLimits(requests_per_minute=600))``
    """

    requests_per_minute: int | None = None
    """Requests per minute (RPM); None: unlimited."""
    input_tokens_per_minute: int | None = None
    """Input tokens per minute (ITPM); None: unlimited."""
    output_tokens_per_minute: int | None = None
    """Output tokens per minute (OTPM); None: unlimited."""
    capacity_s: float = 60.0
    """How many seconds of its rate a full bucket holds: the burst allowed after an idle spell. The API
    describes a minute's worth; it may also enforce limits over shorter intervals, which a smaller value
    simulates."""

    def __post_init__(self) -> None:
        for name in ("requests_per_minute", "input_tokens_per_minute", "output_tokens_per_minute"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"ServerRateLimits.{name} must be an int >= 1 or None, got {value!r}.")
        if isinstance(self.capacity_s, bool) or not isinstance(self.capacity_s, int | float) or self.capacity_s <= 0:
            raise ValueError(f"ServerRateLimits.capacity_s must be a positive number, got {self.capacity_s!r}.")


class _Bucket:
    __slots__ = ("capacity", "level", "limit", "rate", "stamp")

    def __init__(self, limit: int, capacity_s: float, now: float) -> None:
        self.limit = limit
        self.rate = limit / 60
        self.capacity = self.rate * capacity_s
        self.level = self.capacity
        self.stamp = now

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def shortfall_s(self, cost: float) -> float:
        """Seconds until ``cost`` fits (a cost above the capacity fits a full bucket)."""
        needed = min(cost, self.capacity)
        return 0.0 if self.level >= needed else (needed - self.level) / self.rate

    def headers(self, name: str, now: float, wall: datetime, tokens: bool) -> dict[str, str]:
        remaining = max(0, math.floor(self.level))
        if tokens:
            remaining = round(remaining, -3)
        full_in = (self.capacity - self.level) / self.rate
        reset = (wall + timedelta(seconds=full_in)).strftime("%Y-%m-%dT%H:%M:%SZ")
        prefix = f"anthropic-ratelimit-{name}"
        return {f"{prefix}-limit": str(self.limit), f"{prefix}-remaining": str(remaining), f"{prefix}-reset": reset}


@dataclass(frozen=True, slots=True)
class Admission:
    """The verdict on one request: its rate-limit headers, and a 429 body when it was refused."""

    headers: dict[str, str]
    rejected: dict[str, Any] | None = None
    output_charged: int = 0


class RateLimitBuckets:
    """The buckets of one server; not thread-safe (the server runs on one event loop)."""

    def __init__(self, limits: ServerRateLimits) -> None:
        now = time.monotonic()
        self.limits = limits
        self.buckets: dict[Dimension, _Bucket] = {}
        configured: list[tuple[Dimension, int | None]] = [
            ("requests", limits.requests_per_minute),
            ("input-tokens", limits.input_tokens_per_minute),
            ("output-tokens", limits.output_tokens_per_minute),
        ]
        for dimension, limit in configured:
            if limit is not None:
                self.buckets[dimension] = _Bucket(limit, limits.capacity_s, now)

    def admit(self, params: Mapping[str, Any], item: ScriptItem) -> Admission:
        """Charge the request's costs, or refuse it with a 429 when a bucket cannot hold them."""
        now = time.monotonic()
        max_tokens = params.get("max_tokens")
        costs: dict[Dimension, float] = {
            "requests": 1,
            "input-tokens": _input_tokens(item),
            "output-tokens": max_tokens if isinstance(max_tokens, int) and max_tokens > 0 else 0,
        }
        waits: list[tuple[float, Dimension]] = []
        for dimension, bucket in self.buckets.items():
            bucket.refill(now)
            wait = bucket.shortfall_s(costs[dimension])
            if wait > 0:
                waits.append((wait, dimension))
        if waits:
            wait, dimension = max(waits)
            headers = self._headers(now)
            headers["retry-after"] = str(max(1, math.ceil(wait)))
            limit = self.buckets[dimension].limit
            message = (
                f"This request would exceed the rate limit for your organization of {limit:,} "
                f"{_LABELS[dimension]} per minute. You can see the response headers for current usage. "
                "Please reduce the prompt length or the maximum tokens requested, or try again later."
            )
            return Admission(headers, rejected=error_body("rate_limit_error", message))
        for dimension, bucket in self.buckets.items():
            bucket.level -= costs[dimension]
        return Admission(self._headers(now), output_charged=int(costs["output-tokens"]))

    def settle(self, admission: Admission, output_tokens: int) -> None:
        """Give back the output tokens charged at admission but not produced."""
        bucket = self.buckets.get("output-tokens")
        unused = admission.output_charged - output_tokens
        if bucket is not None and unused > 0:
            bucket.refill(time.monotonic())
            bucket.level = min(bucket.capacity, bucket.level + unused)

    def _headers(self, now: float) -> dict[str, str]:
        wall = datetime.now(UTC)
        headers: dict[str, str] = {}
        for dimension, bucket in self.buckets.items():
            headers.update(bucket.headers(dimension, now, wall, tokens=dimension != "requests"))
        token_buckets = [bucket for dimension, bucket in self.buckets.items() if dimension != "requests"]
        if token_buckets:
            # The API's combined headers report whichever token limit is closest to being hit.
            tightest = min(token_buckets, key=lambda bucket: bucket.level)
            headers.update(tightest.headers("tokens", now, wall, tokens=True))
        return headers


def output_tokens(item: ScriptItem) -> int:
    """Output tokens a served item reports (0 for faults)."""
    return _usage(item).get("output_tokens", 0)


def _input_tokens(item: ScriptItem) -> int:
    usage = _usage(item)
    return usage.get("input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)


def _usage(item: ScriptItem) -> Mapping[str, int]:
    while isinstance(item, Delayed):
        item = item.item
    if isinstance(item, ScriptedResponse | Block | str):
        return as_response(item).usage
    return {}  # faults produce no tokens

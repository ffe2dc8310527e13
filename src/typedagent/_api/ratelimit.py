"""One rate limiter per client: paces Messages API calls by the API's rate-limit headers and waits out 429s.

The limiter mirrors the API's three token buckets (requests, input tokens, output tokens per minute).
It learns their sizes and levels from the ``anthropic-ratelimit-*`` headers of every response — the
SDK's own retries included, because for SDK clients it runs as client middleware, once per HTTP
attempt — and admits each request only when every bucket it knows holds the request's cost (1
request; the average input tokens per request seen so far; ``max_tokens``, which the API itself
reserves at admission). A 429 that still happens pauses every request of the client for as long as
``retry-after`` says (``max_wait_s`` at most), halves the number of requests allowed in flight, and sends the
refused request again without spending the SDK's ``max_retries``. Clients without these headers (the testing clients,
gateways) get the concurrency cap and the 429 handling alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import math
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from .._shared.errors import AgentDefinitionError
from .ratelimit_buckets import RESERVE, Bucket, Dimension, Ticket, Travel

if TYPE_CHECKING:
    from anthropic.types import Message


__all__ = ["RateLimiter", "RateLimits", "Ticket", "retry_after_s"]

_CONGESTED: Final = frozenset({503, 529})
_EWMA: Final = 0.1
_FALLBACK_WAIT_S: Final = 1.0


@dataclass(frozen=True, kw_only=True, slots=True)
class RateLimits:
    """How ``execute_many`` paces the API calls of one client.

    The API's own headers are the main source: nothing needs configuring for the Anthropic API. The
    limits here are a starting point for clients whose responses carry no ``anthropic-ratelimit-*``
    headers (a gateway, Bedrock, Vertex); headers, when present, win.

    Raises:
        AgentDefinitionError: a limit is not a whole number >= 1, or ``max_wait_s`` is not positive.
    """

    requests_per_minute: int | None = None
    """Requests per minute to stay under when the responses do not say."""
    input_tokens_per_minute: int | None = None
    """Input tokens per minute to stay under when the responses do not say."""
    output_tokens_per_minute: int | None = None
    """Output tokens per minute to stay under when the responses do not say (``max_tokens`` counts at
    admission, as the API counts it)."""
    max_wait_s: float = 600.0
    """How long one API call keeps waiting out 429s. A 429 whose ``retry-after`` would take it past this
    goes at once to the client's own retries (the SDK's ``max_retries``) and then fails the execution with
    ``API_ERROR``; and however long a ``retry-after`` asks, the client's other calls pause for this long at
    most."""

    def __post_init__(self) -> None:
        for name in ("requests_per_minute", "input_tokens_per_minute", "output_tokens_per_minute"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise AgentDefinitionError(f"RateLimits.{name} must be an int >= 1 or None, got {value!r}.")
        wait = self.max_wait_s
        if isinstance(wait, bool) or not isinstance(wait, int | float) or wait <= 0:
            raise AgentDefinitionError(f"RateLimits.max_wait_s must be a positive number, got {wait!r}.")


@dataclass(slots=True)
class _Stats:
    admitted: int = 0
    rate_limited: int = 0
    waited_s: float = 0.0


class RateLimiter:
    """Admits the API calls of one client, FIFO, at the pace its buckets and 429s allow."""

    def __init__(self, config: RateLimits, concurrency: int) -> None:
        self.config = config
        now = time.monotonic()
        self.buckets: dict[Dimension, Bucket] = {
            "requests": Bucket(config.requests_per_minute, now),
            "input-tokens": Bucket(config.input_tokens_per_minute, now),
            "output-tokens": Bucket(config.output_tokens_per_minute, now),
        }
        self.max_window = concurrency
        self.window = 1.0
        """Calls allowed in flight: one until the first answer tells the limits, then adapted (AIMD)."""
        self.probing = True
        self.in_flight = 0
        self.paused_until = 0.0
        self.input_estimate = 0.0
        """Input tokens charged per request: the average of those seen (0 until the first response)."""
        self.settled = False
        self.headers: bool | None = None
        """Whether the responses carry rate-limit headers (None until the first one says)."""
        self.stats = _Stats()
        self._queue: deque[tuple[Ticket, asyncio.Future[None]]] = deque()
        self._travel = Travel(self.buckets)
        self._wake = asyncio.Event()
        self._dispatcher: asyncio.Task[None] | None = None

    async def acquire(self, max_tokens: object, *, first: bool = False, max_pause: float | None = None) -> Ticket:
        """Wait for a turn; ``first`` puts a call refused with a 429 back at the head of the line.

        ``max_pause``: a pause after a 429 longer than this is not waited out by this call (it goes, and the API's
        answer decides): a fallback chain's call that another model can take.
        """
        ticket = Ticket(0.0, max_tokens if isinstance(max_tokens, int) and max_tokens > 0 else 0, max_pause=max_pause)
        if not self._queue and self._delay(ticket) == 0:
            self._admit(ticket)
            return ticket
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if first:
            self._queue.appendleft((ticket, turn))
        else:
            self._queue.append((ticket, turn))
        if self._dispatcher is None:
            self._dispatcher = asyncio.ensure_future(self._dispatch())
        self._wake.set()
        started = time.monotonic()
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.release(ticket, None)  # admitted just as the caller gave up
            raise
        self.stats.waited_s += time.monotonic() - started
        return ticket

    def _delay(self, ticket: Ticket) -> float:
        now = time.monotonic()
        if now < self.paused_until and (ticket.max_pause is None or self.paused_until - now <= ticket.max_pause):
            return self.paused_until - now
        if self.in_flight >= max(1, int(self.window)):
            return math.inf
        wait = 0.0
        arrival_s = self._travel.arrivals(now)
        costs = (1.0, self.input_estimate, ticket.output_cost)
        for bucket, cost, reserve in zip(self.buckets.values(), costs, RESERVE, strict=True):
            bucket.refill(now)
            wait = max(wait, bucket.wait_s(cost, reserve, arrival_s))
        return wait

    def _admit(self, ticket: Ticket) -> None:
        ticket.input_cost = self.input_estimate  # the estimate when it goes, not when it started waiting
        costs = ticket.costs()
        for (dimension, bucket), cost in zip(self.buckets.items(), costs, strict=True):
            if bucket.limit is not None:
                bucket.level -= cost
            bucket.taken += cost
            ticket.taken_after[dimension] = bucket.taken
        ticket.sent = time.monotonic()
        self._travel.sent(ticket)
        self.in_flight += 1
        self.stats.admitted += 1

    async def _dispatch(self) -> None:
        try:
            while self._queue:
                ticket, turn = self._queue[0]
                if turn.done():  # its caller gave up waiting
                    self._queue.popleft()
                    continue
                delay = self._delay(ticket)
                if delay == 0:
                    self._queue.popleft()
                    self._admit(ticket)
                    turn.set_result(None)
                    continue
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), None if delay == math.inf else delay)
        finally:
            self._dispatcher = None

    def observe(self, ticket: Ticket, headers: Mapping[str, str]) -> None:
        """Learn the buckets' sizes and levels from a response's ``anthropic-ratelimit-*`` headers.

        Headers that cannot be true (a limit below 1, ``remaining`` below 0 or above the limit: a broken
        proxy, a gateway's own notation) are not believed: that bucket keeps its estimate.
        """
        now = self._answered(ticket)
        seen = False
        for dimension, bucket in self.buckets.items():
            limit = _number(headers.get(f"anthropic-ratelimit-{dimension}-limit"))
            remaining = _number(headers.get(f"anthropic-ratelimit-{dimension}-remaining"))
            if limit is not None and remaining is not None and limit >= 1 and 0 <= remaining <= limit:
                bucket.observe(dimension, limit, remaining, ticket, now)
                seen = True
        if seen or self.headers is None:
            self.headers = seen

    def release(self, ticket: Ticket, status: int | None) -> None:
        """A call came back (``status`` None: no response at all); adapt the window and let the next go."""
        self.in_flight -= 1
        self._answered(ticket)
        if status in _CONGESTED:
            self._shrink()
        elif status is not None and self.probing:
            self.probing = False  # any answer told what there was to learn (headers, or that there are none)
            self.window = self.max_window
        elif status is not None and status < 400:
            self.window = min(self.max_window, self.window + 1 / self.window)
        self._wake.set()

    def _answered(self, ticket: Ticket) -> float:
        """The API has ``ticket``'s call (it answered): what was due before arrives first, then it. Returns the time."""
        now = time.monotonic()
        self._travel.arrivals(now)
        self._travel.arrived(ticket, now)
        return now

    def refused(self, ticket: Ticket, headers: Mapping[str, str]) -> float:
        """A call got a 429: give its charges back, pause everyone as the API asks (``max_wait_s`` at most).

        Returns the pause the API asked for.
        """
        self.in_flight -= 1
        self.stats.rate_limited += 1
        now = self._answered(ticket)
        for dimension, bucket in self.buckets.items():  # the API did not count it: neither do we
            cost = ticket.cost(dimension)
            bucket.refill(now)
            bucket.taken -= cost
            ticket.taken_after[dimension] -= cost
            if bucket.capacity is not None:
                bucket.level = min(bucket.capacity - bucket.travelling, bucket.level + cost)
        self.observe(ticket, headers)
        pause = retry_after_s(headers)
        # However long the API asks, no call of the client waits past max_wait_s for it.
        self.paused_until = max(self.paused_until, now + min(pause, self.config.max_wait_s))
        self._shrink()
        self._wake.set()
        return pause

    def gives_up(self, waited: float, pause: float) -> bool:
        """Whether a call that waited ``waited`` s for 429s hands the one asking ``pause`` s to the client's retries."""
        return waited + pause > self.config.max_wait_s

    def settle(self, ticket: Ticket, message: Message) -> None:
        """Correct the estimates with the response's real usage (the API gives unused max_tokens back)."""
        usage = getattr(message, "usage", None)
        if usage is None:
            return
        actual_in = (getattr(usage, "input_tokens", 0) or 0) + (getattr(usage, "cache_creation_input_tokens", 0) or 0)
        actual_out = getattr(usage, "output_tokens", 0) or 0
        if self.settled:
            self.input_estimate += _EWMA * (actual_in - self.input_estimate)
        else:
            self.input_estimate, self.settled = actual_in, True
        # Both corrections count as charges, so later headers are matched against them too.
        inputs, outputs = self.buckets["input-tokens"], self.buckets["output-tokens"]
        extra_in = actual_in - ticket.input_cost
        unused_out = max(0.0, ticket.output_cost - actual_out)
        inputs.taken += extra_in
        outputs.taken -= unused_out
        if inputs.limit is not None:
            inputs.level -= extra_in
        if outputs.capacity is not None:
            outputs.level = min(outputs.capacity - outputs.travelling, outputs.level + unused_out)

    def _shrink(self) -> None:
        self.probing = False
        self.window = max(1.0, self.window / 2)


def retry_after_s(headers: Mapping[str, str]) -> float:
    """Seconds a 429 asks to wait: ``retry-after-ms``, ``retry-after`` (seconds or an HTTP date), else 1 s."""
    milliseconds = _number(headers.get("retry-after-ms"))
    if milliseconds is not None and milliseconds >= 0:
        return milliseconds / 1000
    value = headers.get("retry-after")
    seconds = _number(value)
    if seconds is None and value:
        date = email.utils.parsedate_tz(value)
        if date is not None:
            seconds = email.utils.mktime_tz(date) - time.time()
    return _FALLBACK_WAIT_S if seconds is None or seconds < 0 else seconds


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None

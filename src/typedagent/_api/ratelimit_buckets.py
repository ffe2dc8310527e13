"""Our estimate of the API's rate-limit buckets, and the calls charged to them (for ``RateLimiter``)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias

__all__ = ["RESERVE", "Bucket", "Dimension", "Ticket", "Travel"]

Dimension: TypeAlias = Literal["requests", "input-tokens", "output-tokens"]
HEADER_SPAN: Final[dict[Dimension, tuple[float, float]]] = {
    "requests": (0.0, 1.0),
    "input-tokens": (500.0, 500.0),
    "output-tokens": (500.0, 500.0),
}
"""How far below and above a header's ``remaining`` the truth may be: requests are whole (a bucket holding
0.9 says 0), token counts are rounded to the nearest thousand. Syncing down to the header itself would
lose that fraction at every response and fall behind the limit."""
RESERVE: Final = (1.0, 0.0, 0.0)
"""Kept in each bucket (requests, input, output tokens) beyond a call's cost. A call is charged when it is
sent but counted by the API when it arrives; after a burst from a full bucket, the API's bucket (full,
so not refilling) lags ours by that delay's refill — under a request, which one request's reserve
absorbs (longer delays: ``TRANSIT_S``). It delays the first call after the bucket runs dry once, and
costs no throughput after that."""
TRANSIT_S: Final = 1.0
"""How long a charge counts as on its way to the API, unanswered (less when a bucket fills faster: ``Travel``). A
full API bucket gains nothing while calls travel (a stalled loop, a slow upload): our estimate never refills above
capacity less what travels."""
REFILL_S: Final = 60.0
"""How long an empty bucket takes to fill again: the longest any call waits for one."""


class Bucket:
    """Our estimate of one of the API's buckets; ``limit`` None until configured or seen in a header."""

    __slots__ = ("capacity", "level", "limit", "stamp", "taken", "travelling")

    def __init__(self, limit: int | None, now: float) -> None:
        self.limit: float | None = limit
        self.capacity: float | None = limit
        """How much the bucket holds: a minute's worth by the API's docs, but it may enforce shorter
        intervals, so a header-learned bucket holds the most it was ever seen to hold."""
        self.level: float = limit or 0.0
        self.stamp = now
        self.taken = 0.0
        """Everything ever charged: tells which charges a header has not seen yet."""
        self.travelling = 0.0  # charges that may not have reached the API yet (see TRANSIT_S)

    def refill(self, now: float) -> None:
        if now <= self.stamp:  # already counted up to a later time (an arrival is dated back to when it was due)
            return
        if self.limit is not None and self.capacity is not None:
            ceiling = self.capacity - self.travelling  # the API's bucket stops at its capacity before they arrive
            if self.level < ceiling:
                self.level = min(ceiling, self.level + (now - self.stamp) * self.limit / 60)
        self.stamp = now

    def wait_s(self, cost: float, reserve: float, arrival_s: float) -> float:
        """Seconds until ``cost`` (and ``reserve``) fits; ``arrival_s``: until the oldest travelling charge counts."""
        if self.limit is None or self.capacity is None:
            return 0.0
        needed = min(cost + reserve, self.capacity)
        # A shortfall of rounding (1e-14 of a request) is none: its wait would not move a clock, and would spin.
        wait = 0.0 if self.level >= needed - 1e-9 else (needed - self.level) * 60 / self.limit
        if wait and needed > self.capacity - self.travelling:  # no refill gets there before a travelling call arrives
            wait = max(wait, arrival_s)
        # The API's buckets refill completely within a minute: no estimate, however far off, waits longer.
        return min(REFILL_S, wait)

    def observe(self, dimension: Dimension, limit: float, remaining: float, ticket: Ticket, now: float) -> None:
        """Align with a response's headers; charges made after that request's admission are not in them."""
        self.refill(now)
        unseen = self.taken - ticket.taken_after[dimension]
        estimate = remaining + (now - ticket.sent) * limit / 60 - unseen
        held = remaining + ticket.cost(dimension)  # what the bucket held just before it admitted this request
        self.capacity = min(limit, max(self.capacity or 0.0, held))
        below, above = HEADER_SPAN[dimension]
        ceiling = self.capacity - self.travelling
        if self.limit is None:
            self.level = min(ceiling, estimate - below)  # the first sight: start on the safe side
        else:
            self.level = min(self.level, ceiling, estimate + above)
        self.limit = limit


@dataclass(slots=True)
class Ticket:
    """One admitted HTTP attempt: what it was charged, and when."""

    input_cost: float
    """Charged at admission: the average input tokens per call seen so far."""
    output_cost: float
    sent: float = 0.0
    taken_after: dict[Dimension, float] = field(default_factory=dict)
    max_pause: float | None = None
    """The longest 429 pause this call waits out (a fallback chain moves it on instead); None: any."""
    travelling: bool = False
    """Charged, and neither answered nor older than the travel window (``Travel.window``): maybe not counted yet."""

    def cost(self, dimension: Dimension) -> float:
        return 1.0 if dimension == "requests" else self.input_cost if dimension == "input-tokens" else self.output_cost

    def costs(self) -> tuple[float, float, float]:
        """What it was charged in each bucket: requests, input tokens, output tokens."""
        return (1.0, self.input_cost, self.output_cost)


class Travel:
    """The admitted calls that may not have reached the API yet, and their charges per bucket."""

    def __init__(self, buckets: dict[Dimension, Bucket]) -> None:
        self.buckets = buckets
        self.tickets: deque[Ticket] = deque()
        """Oldest first; answered ones leave when they reach the front."""

    def sent(self, ticket: Ticket) -> None:
        ticket.travelling = True
        for bucket, cost in zip(self.buckets.values(), ticket.costs(), strict=True):
            bucket.travelling += cost
        self.tickets.append(ticket)

    def arrived(self, ticket: Ticket, when: float) -> None:
        """The API has had the call since ``when`` (it answered, or had time to): it stops holding the ceiling.

        Each bucket first refills up to ``when`` under the ceiling the call still held, so what the estimate gains
        does not depend on when anything last looked at it.
        """
        if ticket.travelling:
            ticket.travelling = False
            for bucket, cost in zip(self.buckets.values(), ticket.costs(), strict=True):
                bucket.refill(when)
                bucket.travelling -= cost

    def window(self) -> float:
        """How long an unanswered call counts as travelling: ``TRANSIT_S``, or less for a bucket that fills faster.

        A bucket holding half a second's worth would otherwise admit only its capacity per second while long calls
        run (half its rate); with the window no longer than the bucket takes to fill, it admits close to its rate.
        """
        window = TRANSIT_S
        for bucket in self.buckets.values():
            if bucket.limit is not None and bucket.capacity is not None:
                window = min(window, bucket.capacity * 60 / bucket.limit)
        return window

    def arrivals(self, now: float) -> float:
        """Count the calls sent a ``window`` ago as arrived (when they were due); seconds until the next one is."""
        tickets = self.tickets
        window = self.window()
        while tickets:
            oldest = tickets[0]
            if oldest.travelling:
                due = oldest.sent + window
                if due > now:
                    return due - now
                self.arrived(oldest, due)
            tickets.popleft()
        for bucket in self.buckets.values():
            bucket.travelling = 0.0  # nothing travels: no rounding left over from the sums
        return 0.0

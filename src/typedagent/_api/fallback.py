"""Which failed calls move on to the next model of a fallback chain, and the circuit breakers that skip dead ones.

A model call moves on when the API (or the way to it) is the problem and another model or platform may answer:
overloaded (529), a server error (5xx), a connection error or timeout (all after the client's own retries), a
stream the API failed with one of those, and a rate limit whose ``retry-after`` asks for a longer wait than
the policy accepts. A request the API rejects (4xx), a client that is not configured, or a response that cannot
be read fails as it always did: another model would be sent the same wrong request.

A ``CircuitBreaker`` per model and client counts those failures in a row. Once ``threshold`` of them happened it
opens: calls skip that model for ``cooldown_s`` seconds. Then it is half-open: the next call that asks is let
through as a probe, and every other call keeps skipping it until the probe ends; an answer closes the breaker,
another failure opens it again. ``execute_many`` shares one ``Breakers`` among all its executions
(``SHARED_BREAKERS``), so a dead primary is probed once per cool-down, not once per execution.
"""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias

from .api_errors import ApiFailure

__all__ = [
    "SHARED_BREAKERS",
    "WAIT_CAP",
    "Breakers",
    "CircuitBreaker",
    "SharedFallback",
    "moves_on",
    "over_wait_cap",
    "requested_wait_s",
]

MOVING_ERROR_TYPES: Final = frozenset(
    {"overloaded_error", "api_error", "timeout_error", "connection_error", "service_unavailable_error"}
)
"""Error types that move a call on whatever their status: the API's own failures and the network's."""


def moves_on(failure: ApiFailure, max_retry_after_s: float) -> bool:
    """Whether ``failure`` moves the call on to the next model of the chain (see the module docstring)."""
    if not failure.sent:
        return False
    status = failure.status_code
    if status == 429:
        wait = requested_wait_s(failure)
        return wait is None or wait > max_retry_after_s
    if status is not None and status >= 500:
        return True
    if failure.error_type == "malformed_response":
        return False
    # No status: a connection error or timeout. Status 200: an error event in a stream that had started.
    return status in (None, 200) and failure.error_type in MOVING_ERROR_TYPES


def requested_wait_s(failure: ApiFailure) -> float | None:
    """The wait a rate limit asks for (``retry-after-ms``, ``retry-after`` in seconds or as a date), None if none."""
    response = getattr(failure.cause, "response", None)
    headers: Mapping[str, str] = getattr(response, "headers", None) or {}
    milliseconds = _number(headers.get("retry-after-ms"))
    if milliseconds is not None and milliseconds >= 0:
        return milliseconds / 1000
    value = headers.get("retry-after")
    seconds = _number(value)
    if seconds is None and value:
        date = email.utils.parsedate_tz(value)
        if date is not None:
            seconds = email.utils.mktime_tz(date) - time.time()
    return None if seconds is None else max(seconds, 0.0)


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


State: TypeAlias = Literal["closed", "open", "half_open"]


@dataclass(slots=True)
class CircuitBreaker:
    """The health of one model on one client, as the calls made to it found it."""

    threshold: int
    cooldown_s: float
    clock: Callable[[], float] = time.monotonic
    state: State = "closed"
    failures: int = 0
    """Failures in a row (of the kinds that move a call on)."""
    opened_at: float = 0.0
    probing: bool = False
    """A half-open breaker let one call through; the others skip until it ends."""
    last_error: str = ""
    """What the last failure was, for the calls that skip the model."""
    skipped: int = 0
    """Calls that skipped the model while the breaker was open (or probing)."""

    def allows(self) -> bool:
        """Whether a call may go to the model now; a half-open breaker lets exactly one through (the probe)."""
        if self.state == "closed":
            return True
        if self.state == "open" and self.clock() - self.opened_at >= self.cooldown_s:
            self.state = "half_open"
        if self.state == "half_open" and not self.probing:
            self.probing = True
            return True
        self.skipped += 1
        return False

    def succeeded(self) -> None:
        """The model answered: the breaker closes."""
        self.state, self.failures, self.probing = "closed", 0, False

    def failed(self, error: str) -> None:
        """A call failed in a way that moves on: count it; the threshold (or a failed probe) opens the breaker."""
        self.last_error = error
        self.failures += 1
        if self.probing or self.failures >= self.threshold:
            self.state, self.opened_at, self.probing = "open", self.clock(), False

    def released(self) -> None:
        """A call let through ended without telling anything (interrupted, or a failure that does not move on)."""
        if self.probing:
            self.probing = False


@dataclass(slots=True)
class Breakers:
    """The circuit breakers of the models an execution (or an ``execute_many`` run) calls, one per model and client."""

    threshold: int
    cooldown_s: float
    clock: Callable[[], float] = time.monotonic
    _by_key: dict[tuple[int, str], tuple[object, CircuitBreaker]] = field(default_factory=dict)

    def of(self, client: object, model: str) -> CircuitBreaker:
        """The breaker of ``model`` on ``client`` (made closed on first use)."""
        key = (id(client), model)
        found = self._by_key.get(key)
        if found is None:
            # The client is kept with its breaker: its id cannot be reused by another client meanwhile.
            found = (client, CircuitBreaker(self.threshold, self.cooldown_s, self.clock))
            self._by_key[key] = found
        return found[1]


@dataclass(slots=True)
class SharedFallback:
    """What the executions of one ``execute_many`` run share: the breakers, and each alternative's client as called.

    Each alternative's client is wrapped once (paced by its own rate limiter), as the run's own client is.
    """

    breakers: dict[int, tuple[object, Breakers]] = field(default_factory=dict)
    """By the id of the agent's policy (kept with them): executions of one agent share them."""
    wrap: Callable[[object], object] | None = None
    _wrapped: dict[int, tuple[object, object]] = field(default_factory=dict)

    def breakers_for(self, owner: object, threshold: int, cooldown_s: float) -> Breakers:
        """The breakers of the chain ``owner`` (an agent's fallback policy) describes."""
        found = self.breakers.get(id(owner))
        if found is None:
            found = self.breakers[id(owner)] = (owner, Breakers(threshold, cooldown_s))
        return found[1]

    def client(self, client: object) -> object:
        """``client`` as the run calls it (paced by its rate limiter), made once per client."""
        if self.wrap is None:
            return client
        found = self._wrapped.get(id(client))
        if found is None:
            found = self._wrapped[id(client)] = (client, self.wrap(client))
        return found[1]


SHARED_BREAKERS: ContextVar[SharedFallback | None] = ContextVar("typedagent_shared_fallback", default=None)
"""The fallback state ``execute_many`` shares among its executions (set in each execution's task)."""

WAIT_CAP: ContextVar[float | None] = ContextVar("typedagent_fallback_wait_cap", default=None)
"""Set by a fallback chain while another model can take the call: the longest a rate limiter (``execute_many``'s)
waits out a 429 before handing it back, so that a long ``retry-after`` moves the call on instead (None: no cap)."""


def over_wait_cap(pause: float) -> bool:
    """Whether a 429 asking for ``pause`` seconds goes back to the chain rather than being waited out."""
    cap = WAIT_CAP.get()
    return cap is not None and pause > cap

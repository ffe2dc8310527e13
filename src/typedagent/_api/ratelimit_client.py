"""How a client's calls reach its ``RateLimiter``: SDK middleware on every HTTP attempt, or around the call."""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, cast

from .api_errors import RefusedWhenCalled
from .beta import beta_messages
from .fallback import WAIT_CAP, over_wait_cap
from .ratelimit import RateLimiter, RateLimits, Ticket

if TYPE_CHECKING:
    from anthropic.types import Message

    from .client import MessagesClient, MessagesResource

__all__ = ["limited_client"]


_CALL: ContextVar[list[Ticket] | None] = ContextVar("typedagent_rate_limited_call", default=None)
"""The tickets of the ``messages.create`` call running in this task, filled by the middleware."""


class _Middleware:
    """SDK client middleware: runs once per HTTP attempt, inside the SDK's retry loop."""

    def __init__(self, limiter: RateLimiter) -> None:
        self.limiter = limiter
        self.__name__ = "typedagent_rate_limiter"

    async def __call__(self, request: Any, call_next: Any) -> Any:
        limiter = self.limiter
        body: object = request.json
        json_data: Mapping[str, Any] = cast("Mapping[str, Any]", body) if isinstance(body, Mapping) else {}
        waited = 0.0
        first = False
        while True:
            ticket = await limiter.acquire(json_data.get("max_tokens"), first=first, max_pause=WAIT_CAP.get())
            try:
                response = await call_next(request)
            except BaseException:
                limiter.release(ticket, None)
                raise
            headers = response.headers
            if response.status_code == 429:
                pause = limiter.refused(ticket, headers)
                if over_wait_cap(pause):
                    return response  # a fallback chain moves the call on: the API's retry-after as it is
                if limiter.gives_up(waited, pause):
                    # More than it may wait: the SDK's own retries take it from here, and the SDK waits as long
                    # as retry-after says. It is told to wait what is left of max_wait_s at most.
                    _bound_retry_after(response.headers, limiter.config.max_wait_s - waited)
                    return response
                waited += pause
                await response.close()
                first = True
                continue
            limiter.observe(ticket, headers)
            limiter.release(ticket, response.status_code)
            tickets = _CALL.get()
            if tickets is not None:
                tickets.append(ticket)
            return response


def _bound_retry_after(headers: Any, seconds: float) -> None:
    """Make a 429's ``retry-after`` headers (which ask for longer) ask for ``seconds`` (0: the SDK's own backoff)."""
    for name in ("retry-after", "retry-after-ms"):
        if name in headers:
            del headers[name]
    headers["retry-after-ms"] = f"{max(0.0, seconds) * 1000:.0f}"


class _LimitedMessages:
    def __init__(self, client: _LimitedClient, *, beta: bool = False) -> None:
        self._client = client
        self._beta = beta

    async def create(self, **params: Any) -> Message:
        return await self._client.create(params, beta=self._beta)


class _LimitedBeta:
    """``client.beta``: requests with beta parameters, paced by the same limiter."""

    def __init__(self, client: _LimitedClient) -> None:
        self.messages = _LimitedMessages(client, beta=True)


def _messages(client: object, beta: bool) -> MessagesResource:
    """The Messages resource a request goes through: ``client.messages``, or ``client.beta.messages``."""
    resource: MessagesResource = getattr(client, "beta").messages if beta else getattr(client, "messages")  # noqa: B009
    return resource


class _LimitedClient:
    """A ``MessagesClient`` whose calls go through a ``RateLimiter``."""

    def __init__(self, client: MessagesClient, limiter: RateLimiter, with_middleware: MessagesClient | None) -> None:
        self.client = client
        self.forwards_to = client
        """The client each ``messages.create`` goes to, parameters unchanged (``stream_call`` looks through it)."""
        self.limiter = limiter
        self.with_middleware = with_middleware
        self.messages = _LimitedMessages(self)
        self.beta = _LimitedBeta(self) if beta_messages(client) is not None else None
        """``client.beta``, when the wrapped client has one."""

    async def create(self, params: dict[str, Any], *, beta: bool = False) -> Message:
        # Middleware only while the responses may carry rate-limit headers: without them (a gateway, a test
        # server) pacing around the call does the same job without the SDK's middleware path.
        if self.with_middleware is not None and self.limiter.headers is not False:
            tickets: list[Ticket] = []
            token = _CALL.set(tickets)
            try:
                try:
                    call = _messages(self.with_middleware, beta).create(**params)
                except Exception as exc:
                    raise RefusedWhenCalled(exc) from exc
                message = await call
            finally:
                _CALL.reset(token)
            if tickets:
                self.limiter.settle(tickets[-1], message)
            return message
        return await self._paced(params, beta)

    async def _paced(self, params: dict[str, Any], beta: bool) -> Message:
        """The same pacing around a client without middleware: a 429 arrives as the exception it raises."""
        limiter = self.limiter
        waited = 0.0
        first = False
        while True:
            ticket = await limiter.acquire(params.get("max_tokens"), first=first, max_pause=WAIT_CAP.get())
            try:
                call = _messages(self.client, beta).create(**params)
            except Exception as exc:
                limiter.release(ticket, None)
                raise RefusedWhenCalled(exc) from exc
            try:
                message = await call
            except Exception as exc:
                status = getattr(exc, "status_code", None)
                response = getattr(exc, "response", None)
                headers: Mapping[str, str] = getattr(response, "headers", None) or {}
                if status == 429:
                    pause = limiter.refused(ticket, headers)
                    if over_wait_cap(pause) or limiter.gives_up(waited, pause):
                        raise
                    waited += pause
                    first = True
                    continue
                limiter.observe(ticket, headers)
                limiter.release(ticket, status if isinstance(status, int) else None)
                raise
            except BaseException:
                limiter.release(ticket, None)
                raise
            limiter.release(ticket, 200)
            limiter.settle(ticket, message)
            return message


_LIMITERS: weakref.WeakKeyDictionary[Any, tuple[asyncio.AbstractEventLoop, RateLimiter]] = weakref.WeakKeyDictionary()


def limiter_for(client: object, config: RateLimits, concurrency: int) -> RateLimiter:
    """The client's limiter on the running loop: one per client, shared by every ``execute_many`` using it."""
    loop = asyncio.get_running_loop()
    try:
        found = _LIMITERS.get(client)
    except TypeError:  # not weak-referenceable or not hashable: a limiter of its own
        return RateLimiter(config, concurrency)
    if found is not None and found[0] is loop and found[1].config == config:
        limiter = found[1]
        limiter.max_window = max(limiter.max_window, concurrency)
        return limiter
    limiter = RateLimiter(config, concurrency)
    with contextlib.suppress(TypeError):
        _LIMITERS[client] = (loop, limiter)
    return limiter


def limited_client(client: MessagesClient, config: RateLimits, concurrency: int) -> MessagesClient:
    """``client`` with its calls paced by its limiter; SDK clients get it as middleware (every HTTP attempt)."""
    limiter = limiter_for(client, config, concurrency)
    add_middleware = getattr(client, "with_middleware", None)
    if callable(add_middleware):
        try:
            inner = cast("MessagesClient", add_middleware(_Middleware(limiter)))
        except (TypeError, ValueError):  # an SDK-like client whose middleware differs: pace around it instead
            pass
        else:
            return _LimitedClient(client, limiter, inner)
    return _LimitedClient(client, limiter, None)

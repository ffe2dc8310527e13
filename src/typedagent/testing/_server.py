"""``FakeAnthropicServer``: a real Messages API endpoint on 127.0.0.1 that serves a script, faults included."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from .._shared.numbers import check_non_negative
from ._http import HttpReply, json_reply
from ._items import (
    ApiErrorSpec,
    Block,
    Delayed,
    MalformedBody,
    ScriptedResponse,
    ScriptError,
    ScriptItem,
    as_response,
    error_body,
)
from ._loopback import LoopbackServer
from ._prompt_cache import CacheRefusal, PromptCacheSimulator
from ._ratelimit import RateLimitBuckets, ServerRateLimits, output_tokens
from ._render import render_message
from ._server_batches import FakeBatches
from ._server_stream import sse_reply
from ._stream_script import StreamFault, recorded_message

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

__all__ = ["FakeAnthropicServer"]

_SOURCE = "FakeAnthropicServer"


def sdk_client(base_url: str, *, keep_alive: bool, **kwargs: Any) -> AsyncAnthropic:
    """An ``AsyncAnthropic`` for a local fake server (see ``FakeAnthropicServer.client``)."""
    import anthropic
    import httpx2

    kwargs.setdefault("api_key", "test")
    if not keep_alive and "http_client" not in kwargs:
        limits = httpx2.Limits(max_connections=1000, max_keepalive_connections=0)
        kwargs["http_client"] = anthropic.DefaultAsyncHttpxClient(limits=limits)
    return anthropic.AsyncAnthropic(base_url=base_url, **kwargs)


def _answers(item: ScriptItem) -> bool:
    while isinstance(item, Delayed | StreamFault):
        item = item.item
    return isinstance(item, ScriptedResponse | Block | str)


class FakeAnthropicServer(LoopbackServer):
    """A local Messages API server (HTTP/1.1 with keep-alive on 127.0.0.1) driven by a script.

    The real ``anthropic`` SDK talks to it over real sockets, so its retries, ``retry-after``
    handling, timeouts and error mapping run end to end. Script items are the same as for
    ``ScriptedClient``; faults are items too: ``api_error(429, retry_after=1)``, ``api_error(529)``,
    ``api_error(500)``, ``delay(seconds, item)``, ``malformed_body()``, ``dropped_connection()`` and
    ``api_error("timeout")`` (never answers). The Message Batches endpoints answer a batch's requests from
    the same script (``server.batches`` sets their processing time and expiry).

    Two ways to pick the item for a request:

    - default: one queue, served in arrival order to whoever asks;
    - ``per_conversation=True``: every conversation replays the script on its own. The request's
      position is the number of assistant turns in its ``messages``; faults before a response are
      served to the SDK's successive retries of that turn (``x-stainless-retry-count``). Use it for
      many concurrent executions of one scenario.

    A request the script cannot answer (script exhausted, unknown tool) gets a 400
    ``invalid_request_error`` with ``x-should-retry: false``, is listed in ``problems``, and leaving the
    ``with`` block raises ``ScriptError`` when ``strict``. A request that continues a server-held message thread
    (``thread``, what the SDK's tool runner sends by default) gets the 400 the API gives a request it cannot
    thread (``error_code`` ``thread_unsupported_request``), after which the SDK sends the whole conversation.

    With ``prompt_cache=True`` the server keeps a prompt cache, simulated from Anthropic's documented rules:
    each message's usage reports the input, cache-read and cache-write tokens (split by TTL in
    ``cache_creation``) the API would report, with tokens estimated from each block's JSON (3.5 bytes a token).
    Breakpoints are the blocks with ``cache_control`` and, with a top-level ``cache_control``, the last
    cacheable block; a read looks back 20 blocks from each breakpoint; a prefix below the model's minimum
    cacheable length is not cached; entries live 5 minutes or 1 hour from their last use; changing
    ``tool_choice``, thinking or images starts the messages' cache afresh. A request the API would refuse for
    its breakpoints (more than four, a 1-hour one after a 5-minute one) gets a 400. Output tokens stay the
    script's.

    Example:
        ``with FakeAnthropicServer([api_error(429, retry_after=0), output_call(out)]) as server:``
        ``    result = await execute_agent(agent, "hi", client=server.client())``

    Args:
        script: The items to serve.
        per_conversation: Replay the script independently for every conversation.
        latency_ms: Added before every reply (faults included).
        host: Interface to bind (loopback by default).
        port: Port to bind; 0 picks a free one.
        record_requests: Keep every request body and headers (turn off for long benchmarks).
        strict: Raise ``ScriptError`` on leaving the ``with`` block when a request was not answerable.
        rate_limits: Enforce the API's rate limits (requests, input and output tokens per minute) with its
            headers and 429s; see ``ServerRateLimits``.
        prompt_cache: Simulate the API's prompt cache in each message's usage (see above).
    """

    __test__ = False  # not a test class, whatever pytest's name patterns say

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        *,
        per_conversation: bool = False,
        latency_ms: float = 0,
        host: str = "127.0.0.1",
        port: int = 0,
        record_requests: bool = True,
        strict: bool = True,
        rate_limits: ServerRateLimits | None = None,
        prompt_cache: bool = False,
    ) -> None:
        super().__init__(host=host, port=port)
        self.script: list[ScriptItem] = list(script)
        self.per_conversation = per_conversation
        self.latency_ms = check_non_negative(latency_ms, "latency_ms")
        self.record_requests = record_requests
        self.strict = strict
        self.requests: list[dict[str, Any]] = []
        """Every request body received on ``POST /v1/messages``, parsed."""
        self.request_headers: list[dict[str, str]] = []
        """The headers of those requests (lower-case names), in the same order."""
        self.responses: list[dict[str, Any]] = []
        """Every message served (streamed or not) when ``record_requests``, in order: its JSON, usage included."""
        self.prompt_cache = PromptCacheSimulator() if prompt_cache else None
        """The simulated prompt cache (``prompt_cache=True``), else None."""
        self.requests_served = 0
        """``POST /v1/messages`` requests handled, faults included."""
        self.rate_limits = rate_limits
        self.rate_limited = 0
        """Requests refused with a 429 by ``rate_limits``."""
        self._buckets = None if rate_limits is None else RateLimitBuckets(rate_limits)
        self._next = 0
        self._ids = itertools.count(1)
        self._steps: list[tuple[list[ScriptItem], ScriptItem | None]] | None = None
        self.batches = FakeBatches(self)
        """The Message Batches endpoints (``/v1/messages/batches``): their settings and counters."""

    @property
    def remaining(self) -> int:
        """Items of the queue not served yet (default mode)."""
        return len(self.script) - self._next

    def add(self, *items: ScriptItem) -> FakeAnthropicServer:
        """Append items to the script; returns the server."""
        self.script.extend(items)
        self._steps = None
        return self

    def client(self, *, keep_alive: bool = False, **kwargs: Any) -> AsyncAnthropic:
        """An ``AsyncAnthropic`` pointed at this server, ``api_key="test"``; ``kwargs`` go to the client.

        By default its connections close after each response, so a test that never closes the client
        leaves no open socket behind (an unclosed one is a ``ResourceWarning``). Pass ``keep_alive=True``
        for the SDK's usual pooled connections (benchmarks), and close the client yourself.
        """
        return sdk_client(self.base_url, keep_alive=keep_alive, **kwargs)

    async def _answer(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> HttpReply:
        path = target.split("?", 1)[0]
        if method == "GET" and path == "/_fake/stats":
            stats: dict[str, Any] = {"requests_served": self.requests_served, "problems": self.problems}
            if self.rate_limits is not None:
                stats["rate_limited"] = self.rate_limited
            return json_reply(200, stats)
        if path.startswith("/v1/messages/batches"):
            return await self.batches.answer(method, target, body)
        if method != "POST" or path != "/v1/messages":
            message = f"{_SOURCE} serves POST /v1/messages only, not {method} {path}."
            return json_reply(404, error_body("not_found_error", message))
        try:
            parsed: object = json.loads(body)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            return json_reply(400, error_body("invalid_request_error", "The request body is not a JSON object."))
        params = cast("dict[str, Any]", parsed)
        if self.record_requests:
            self.requests.append(params)
            self.request_headers.append(dict(headers))
        self.requests_served += 1
        call = self.requests_served
        if params.get("thread") is not None:
            return json_reply(400, _thread_refusal(), {"request-id": f"req_fake_{call:06d}", "x-should-retry": "false"})
        if self._buckets is not None:
            return await self._answer_limited(self._buckets, params, headers, call)
        if self.latency_ms:
            await asyncio.sleep(self.latency_ms / 1000)
        try:
            return await self._render(self._pick(params, headers, call), params, call)
        except ScriptError as exc:
            self.problems.append(str(exc))
            headers = {"request-id": f"req_fake_{call:06d}", "x-should-retry": "false"}
            return json_reply(400, error_body("invalid_request_error", str(exc)), headers)

    async def _answer_limited(
        self, buckets: RateLimitBuckets, params: dict[str, Any], headers: Mapping[str, str], call: int
    ) -> HttpReply:
        """Admit the request at arrival, as the API does, then answer it (or refuse it with a 429) after the latency."""
        request_id = f"req_fake_{call:06d}"
        try:
            item = self._pick(params, headers, call)
        except ScriptError as exc:
            self.problems.append(str(exc))
            return json_reply(400, error_body("invalid_request_error", str(exc)), {"request-id": request_id})
        admission = buckets.admit(params, item)
        if admission.rejected is not None:
            if not self.per_conversation:
                self._next -= 1  # a refused request is not served: its item waits for the retry
            self.rate_limited += 1
        if self.latency_ms:
            await asyncio.sleep(self.latency_ms / 1000)
        if admission.rejected is not None:
            return json_reply(429, admission.rejected, {"request-id": request_id, **admission.headers})
        reply = await self._render(item, params, call)
        buckets.settle(admission, output_tokens(item) if reply.status == 200 else 0)
        reply.headers.update(admission.headers)
        return reply

    def _pick(self, params: Mapping[str, Any], headers: Mapping[str, str], call: int) -> ScriptItem:
        if not self.per_conversation:
            index, self._next = self._next, self._next + 1
            if index >= len(self.script):
                raise ScriptError(
                    f"{_SOURCE}: request {call} arrived but the script has only {len(self.script)} item(s). "
                    "Add a response for it (the client asked for more turns or retries than the script provides)."
                )
            return self.script[index]
        retry = int(headers.get("x-stainless-retry-count", "0") or "0")
        steps = self._conversation_steps()
        turn = _position(params.get("messages") or (), steps)
        if turn >= len(steps):
            raise ScriptError(
                f"{_SOURCE}: request {call} is turn {turn + 1} of its conversation, but the script has only "
                f"{len(steps)} turn(s). Add a response for it."
            )
        faults, answer = steps[turn]
        if retry < len(faults):
            return faults[retry]
        if answer is None:
            raise ScriptError(
                f"{_SOURCE}: request {call} (turn {turn + 1}, retry {retry}) has no response left: the script ends "
                "with faults. Add a response after them, or lower the client's max_retries."
            )
        return answer

    def _conversation_steps(self) -> list[tuple[list[ScriptItem], ScriptItem | None]]:
        if self._steps is None:
            self._steps = _steps_of(self.script)
        return self._steps

    async def _render(self, item: ScriptItem, params: Mapping[str, Any], call: int) -> HttpReply:
        fault: StreamFault | None = None
        while isinstance(item, Delayed | StreamFault):
            if isinstance(item, StreamFault):
                fault = item
            else:
                await asyncio.sleep(item.seconds)
            item = item.item
        if fault is not None and not params.get("stream"):
            raise ScriptError(f"{_SOURCE}: request {call} is not streamed, but its script item is a stream fault.")
        request_id = f"req_fake_{call:06d}"
        if isinstance(item, ApiErrorSpec):
            if item.status == "connection":
                return HttpReply(action="drop")
            if item.status == "timeout":
                return HttpReply(action="hang")
            headers = {"request-id": item.request_id or request_id, **item.headers}
            return json_reply(item.status, error_body(item.resolved_type, item.message), headers)
        if isinstance(item, MalformedBody):
            recorded = recorded_message(item.body) if params.get("stream") and item.status == 200 else None
            if recorded is not None:
                return HttpReply(stream=sse_reply(recorded, fault, request_id))
            return HttpReply(status=item.status, body=item.body.encode(), headers={"request-id": request_id})
        message = render_message(
            item,
            params,
            call=call,
            message_id=f"msg_fake_{call:06d}",
            new_id=lambda: f"toolu_{call:02d}_{next(self._ids):03d}",
            source=_SOURCE,
        )
        if self.prompt_cache is not None:
            try:
                message["usage"] = {**message["usage"], **self.prompt_cache.usage(params)}
            except CacheRefusal as exc:
                if not self.per_conversation:
                    self._next -= 1  # a refused request is not served: its item waits for the next request
                return json_reply(400, error_body("invalid_request_error", str(exc)), {"request-id": request_id})
        if self.record_requests:
            self.responses.append(message)
        if params.get("stream"):
            return HttpReply(stream=sse_reply(message, fault, request_id))
        return json_reply(200, message, {"request-id": request_id})


def _steps_of(script: Iterable[ScriptItem]) -> list[tuple[list[ScriptItem], ScriptItem | None]]:
    """The script as turns: the faults served to successive retries, then the answering item."""
    steps: list[tuple[list[ScriptItem], ScriptItem | None]] = []
    faults: list[ScriptItem] = []
    for item in script:
        if _answers(item):
            steps.append((faults, item))
            faults = []
        else:
            faults.append(item)
    if faults:
        steps.append((faults, None))
    return steps


def _thread_refusal() -> dict[str, Any]:
    """The API's answer to a ``thread`` it cannot serve: the SDK then resends the conversation unthreaded."""
    body = error_body("invalid_request_error", f"{_SOURCE} does not keep message threads: send the whole conversation.")
    body["error"]["details"] = {"error_code": "thread_unsupported_request", "unsupported": ["fake_server"]}
    return body


def _position(messages: Iterable[Mapping[str, Any]], steps: list[tuple[list[ScriptItem], ScriptItem | None]]) -> int:
    """How many scripted responses the conversation already holds.

    One per assistant turn; for a turn made of paused responses continued (``pause_turn``), one per response
    it merges.
    """
    position = 0
    for message in messages:
        if message.get("role") != "assistant":
            continue
        content = message.get("content")
        size = 1 if isinstance(content, str) else len(content or ())
        consumed = 0
        while True:
            scripted = _scripted(steps[position][1]) if position < len(steps) else None
            position += 1
            consumed += len(scripted.blocks) if scripted is not None else size
            if scripted is None or scripted.stop_reason != "pause_turn" or consumed >= size:
                break
    return position


def _scripted(item: ScriptItem | None) -> ScriptedResponse | None:
    while isinstance(item, Delayed):
        item = item.item
    return as_response(item) if item is not None else None

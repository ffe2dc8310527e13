"""The Message Batches transport: a client whose ``messages.create`` waits for its request's result in a batch.

Every execution calls it as it would call the API; the collector gathers the requests of the executions
waiting on the model, submits them as one Message Batch (split at the API's limits) when every execution
is waiting or the gather window has passed, polls each batch with growing intervals, and hands each result
to the execution that sent the request (``batch_results``). A ledger (``batch_ledger``) lets a resumed run
attach to the batches already submitted.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from .._shared.events import EXECUTION_KEY
from .batch_ledger import BatchLedger
from .batch_results import MAX_BATCH_BYTES, MAX_BATCH_REQUESTS, Outcome, custom_id, missing, outcome
from .client import MessagesClient

if TYPE_CHECKING:
    from anthropic.types import Message

    from .message_batches import MessageBatches

__all__ = ["BatchingClient"]

_CHECK_EVERY: Final = 0.02
"""Seconds between the collector's checks of whether every execution now waits on the model."""
_POLL_FAILURES: Final = 5
"""Polls of a batch that may fail in a row (after the client's own retries) before its requests fail."""


@dataclass(slots=True)
class _Request:
    custom_id: str
    key: str
    params: dict[str, Any]
    size: int
    future: asyncio.Future[Message]
    submissions: int = 0


class _BatchMessages:
    def __init__(self, client: BatchingClient) -> None:
        self._client = client

    async def create(self, **params: Any) -> Message:
        return await self._client.request(params)


class _NoBetaMessages:
    def create(self, **params: Any) -> Any:
        raise TypeError(
            "the Message Batches transport sends no beta features (MCP servers, context management, betas): "
            "run this agent with the online transport."
        )


class _NoBeta:
    messages = _NoBetaMessages()


class BatchingClient:
    """A ``MessagesClient`` for ``execute_many``'s executions that sends their requests in Message Batches."""

    def __init__(
        self, client: MessagesClient, settings: MessageBatches, ledger: BatchLedger | None, active: Callable[[], int]
    ) -> None:
        self.client: Any = client
        self.settings = settings
        self.ledger = ledger
        self.active = active
        """How many executions are running (each either waiting on the model or doing its own work)."""
        self.messages = _BatchMessages(self)
        self.beta = _NoBeta()
        self.pending: dict[str, _Request] = {}
        """Requests to submit in the next batch, by ``custom_id``."""
        self.waiting = 0
        """Requests whose execution waits for their result."""
        self.watched: dict[str, dict[str, _Request]] = {}
        """Batch id → the requests waiting on it."""
        self.calls: dict[str, int] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.collector: asyncio.Task[None] | None = None
        self.first_pending = 0.0

    async def request(self, params: dict[str, Any]) -> Message:
        """Wait for the result of one request, sent in a batch (or found in a batch already submitted)."""
        key = EXECUTION_KEY.get() or ""
        call = self.calls[key] = self.calls.get(key, 0) + 1
        body = json.dumps(params, sort_keys=True, default=str).encode()
        request = _Request(
            custom_id(key, call, body), key, params, len(body) + 100, asyncio.get_running_loop().create_future()
        )
        self.waiting += 1
        batch_id = None if self.ledger is None else self.ledger.batch_of(request.custom_id)
        if batch_id is not None:
            request.submissions = 1
            self._watch(batch_id, {request.custom_id: request})
        else:
            self._enqueue(request)
        try:
            return await asyncio.shield(request.future)
        finally:
            if not request.future.done():  # the execution was cancelled: nobody waits for this result now
                request.future.cancel()
                self.waiting -= 1
                self.pending.pop(request.custom_id, None)

    def _enqueue(self, request: _Request) -> None:
        if not self.pending:
            self.first_pending = time.monotonic()
        self.pending[request.custom_id] = request
        if self.collector is None or self.collector.done():
            self.collector = asyncio.ensure_future(self._collect())

    def _settle(self, request: _Request, value: Message | Exception) -> None:
        if request.future.done():
            return
        self.waiting -= 1
        if isinstance(value, Exception):
            request.future.set_exception(value)
        else:
            request.future.set_result(value)

    async def _collect(self) -> None:
        """Submit the pending requests whenever every execution waits on the model, or the window has passed."""
        while self.pending:
            everyone_waits = self.waiting >= self.active()
            if not everyone_waits and time.monotonic() - self.first_pending < self.settings.gather_s:
                await asyncio.sleep(_CHECK_EVERY)
                continue
            chunks = _split(list(self.pending.values()))
            self.pending = {}
            for chunk in chunks:
                await self._submit(chunk)

    async def _submit(self, chunk: list[_Request]) -> None:
        chunk = [request for request in chunk if not request.future.done()]
        if not chunk:
            return
        requests = [{"custom_id": request.custom_id, "params": request.params} for request in chunk]
        try:
            batch = await self.client.messages.batches.create(requests=requests)
        except Exception as exc:  # the batch was refused (after the client's retries): so is each request
            for request in chunk:
                self._settle(request, exc)
            return
        if self.ledger is not None:
            await self.ledger.record(batch.id, {request.custom_id: request.key for request in chunk})
        for request in chunk:
            request.submissions += 1
        self._watch(batch.id, {request.custom_id: request for request in chunk})

    def _watch(self, batch_id: str, requests: dict[str, _Request]) -> None:
        watched = self.watched.get(batch_id)
        if watched is not None:
            watched.update(requests)
            return
        self.watched[batch_id] = dict(requests)
        task = asyncio.ensure_future(self._follow(batch_id))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _follow(self, batch_id: str) -> None:
        """Poll the batch until it ended, then hand its results out (again for requests attached meanwhile)."""
        requests = self.watched[batch_id]
        most = self.settings.max_submissions
        try:
            await self._until_ended(batch_id)
            while requests:
                wanted = dict(requests)
                lines = await self._results(batch_id)
                found = {line.custom_id: line.result for line in lines if line.custom_id in requests}
                for name, result in found.items():
                    request = requests.pop(name)
                    self._route(request, outcome(result, request.submissions, most))
                for name in wanted.keys() - found.keys():
                    if name in requests:  # not in the results at all: the API lost it, so it goes again (or fails)
                        request = requests.pop(name)
                        self._route(request, missing(request.submissions, most))
        except Exception as exc:
            for request in requests.values():
                self._settle(request, exc)
        finally:
            del self.watched[batch_id]

    async def _results(self, batch_id: str) -> list[Any]:
        """Every line of the batch's results; the download is closed however reading ends."""
        stream = await self.client.messages.batches.results(batch_id)
        try:
            return [line async for line in stream]
        finally:
            await stream.close()

    async def _until_ended(self, batch_id: str) -> None:
        interval = self.settings.poll_s
        failures = 0
        while True:
            try:
                batch = await self.client.messages.batches.retrieve(batch_id)
            except Exception:
                failures += 1
                if failures >= _POLL_FAILURES:
                    raise
            else:
                failures = 0
                if batch.processing_status == "ended":
                    return
            await asyncio.sleep(interval)
            interval = min(interval * 1.5, self.settings.max_poll_s)

    def _route(self, request: _Request, result: Outcome) -> None:
        if result.value == "resubmit":
            if not request.future.done():
                self._enqueue(request)
            return
        assert not isinstance(result.value, str)
        self._settle(request, result.value)

    async def aclose(self) -> None:
        """Stop collecting and polling (batches already submitted keep running at the API)."""
        tasks = [*self.tasks, *([self.collector] if self.collector is not None else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.ledger is not None:
            self.ledger.close()


def _split(requests: list[_Request]) -> list[list[_Request]]:
    """The requests in batches within the API's limits on requests and bytes per batch."""
    chunks: list[list[_Request]] = [[]]
    size = 0
    for request in requests:
        if chunks[-1] and (len(chunks[-1]) >= MAX_BATCH_REQUESTS or size + request.size > MAX_BATCH_BYTES):
            chunks.append([])
            size = 0
        chunks[-1].append(request)
        size += request.size
    return chunks

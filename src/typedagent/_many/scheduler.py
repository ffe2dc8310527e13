"""One ``execute_many`` run: executions in flight, their results journaled and yielded as they finish."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Generic, cast

from typing_extensions import TypeVar

from .._agent.definition import AgentDefinition
from .._api.batch_client import BatchingClient
from .._api.client import CLIENT_IN_CONTEXT, MessagesClient, close_client, default_client
from .._api.fallback import SHARED_BREAKERS, SharedFallback
from .._api.message_batches import MessageBatches
from .._api.ratelimit import RateLimits
from .._api.ratelimit_client import limited_client
from .._api.transport import batching_client
from .._run.execute import execute
from .._shared.errors import AgentErrorCode, JournalError
from .._shared.events import EXECUTION_KEY, ExecuteCallbacks
from .._shared.generics import subscriptable
from .._shared.limits import AbortEvent, ExecutionLimits, Guard
from .._shared.pausing import PausableResult
from .._shared.results import ExecuteFailure, ExecuteSuccess
from .inputs import Input, Source, fingerprint, prepare
from .journal import Journal
from .records import record_line, result_of

__all__ = ["ManyResult", "drive"]

OutputT_co = TypeVar("OutputT_co", covariant=True)
ResultT_co = TypeVar("ResultT_co", covariant=True, default=ExecuteSuccess[OutputT_co] | ExecuteFailure)

_YIELD_EVERY: Final = 256
"""Resumed results read back in a row before the event loop gets a turn (signals, progress)."""


@subscriptable
@dataclass(frozen=True, kw_only=True, slots=True)
class ManyResult(Generic[OutputT_co, ResultT_co]):
    """The result of one input of ``execute_many``.

    ``ManyResult[Output]``'s ``result`` is an ``ExecuteResult[Output]``; with ``execute_many(..., pausable=True)``
    it is ``ManyResult[Output, PausableResult[Output]]``, whose ``result`` may be an ``ExecutePaused``.
    """

    index: int
    """The input's position (0-based) in ``inputs``."""
    key: str
    """The input's key (``RunInput.key``, or ``#<index>`` when it had none)."""
    result: ResultT_co
    """The execution's result, exactly as ``execute_agent`` returns it."""
    resumed: bool = False
    """Read back from the journal (finished, or paused, in an earlier run), not executed now. Its
    ``metadata.messages`` is empty: the journal does not keep conversations, except a paused execution's (its
    ``state`` holds the conversation, so the journal does)."""


async def _run_one(
    agent: AgentDefinition[Any, Any],
    job: Input,
    client: MessagesClient,
    limits: ExecutionLimits | None,
    callbacks: ExecuteCallbacks | None,
    abort_event: AbortEvent | None,
    pausable: bool,
    shared: SharedFallback,
) -> PausableResult[Any]:
    EXECUTION_KEY.set(job.key)  # this task's own context: its callbacks see the key
    SHARED_BREAKERS.set(shared)  # and its fallback chain's circuit breakers are the run's
    return await execute(
        agent,
        job.prompt,
        deps=job.deps,
        client=client,
        limits=limits,
        callbacks=callbacks,
        abort_event=abort_event,
        pausable=pausable,
    )


class _Batch:
    """The state of one ``execute_many`` run: the source, the executions in flight, the journal."""

    def __init__(
        self,
        agent: AgentDefinition[Any, Any],
        source: Source,
        concurrency: int,
        client: MessagesClient,
        limits: ExecutionLimits | None,
        callbacks: ExecuteCallbacks | None,
        abort_event: AbortEvent | None,
        journal: Journal | None,
        pausable: bool = False,
    ) -> None:
        self.agent = agent
        self.pausable = pausable
        self.source = source
        self.concurrency = concurrency
        self.client = client
        self.limits = limits
        self.callbacks = callbacks
        self.abort_event = abort_event
        self.journal = journal
        self.running: dict[asyncio.Future[Any], Input] = {}
        self.reading: asyncio.Future[tuple[int, object] | None] | None = None
        self.exhausted = False
        self.input_error: BaseException | None = None
        self.failure: BaseException | None = None
        """An execution that crashed (a bug, not a failure result): the run stops and raises it."""
        self.keys_seen: set[str] = set()
        """Every key of this run (not the inputs themselves), to refuse duplicates."""
        self.resumed: list[ManyResult[Any, Any]] = []
        self.fingerprints: dict[str, str] = {}
        self.done: list[asyncio.Future[Any]] = []
        self.wake = asyncio.Event()
        self.shared = SharedFallback()
        """What the executions share of their fallback chains: circuit breakers, the alternatives' clients."""

    def on_done(self, future: asyncio.Future[Any]) -> None:
        """Done-callback of every execution, read and abort watcher: O(1) per completion, however many run."""
        self.done.append(future)
        self.wake.set()

    async def next_done(self) -> list[asyncio.Future[Any]]:
        """Wait until something finished (an execution, a read, the abort); return everything that did."""
        while not self.done:
            self.wake.clear()
            await self.wake.wait()
        done, self.done = self.done, []
        return done

    def aborted(self) -> bool:
        return self.abort_event is not None and self.abort_event.is_set()

    def accepting(self) -> bool:
        return not (self.exhausted or self.input_error is not None or self.aborted())

    async def fill(self) -> None:
        """Start executions until ``concurrency`` run (sync sources) or start one read (async sources)."""
        while (
            self.accepting()
            and len(self.running) < self.concurrency
            and len(self.resumed) < _YIELD_EVERY
            and self.reading is None
        ):
            if self.source.aiter is not None:
                self.reading = asyncio.ensure_future(self.source.next())
                self.reading.add_done_callback(self.on_done)
                return
            try:
                item = await self.source.next()
            except Exception as exc:
                self.input_error = exc
                return
            self.take(item)

    def take(self, item: tuple[int, object] | None) -> None:
        """Start an execution for one item read, or read its result back from the journal."""
        if item is None:
            self.exhausted = True
            return
        index, raw = item
        try:
            job = prepare(raw, index, self.agent)
            record = self._journaled(job)
        except Exception as exc:
            self.input_error = exc
            return
        if record is not None:
            self.resumed.append(ManyResult(index=index, key=job.key, result=record, resumed=True))
            return
        task = asyncio.ensure_future(
            _run_one(
                self.agent, job, self.client, self.limits, self.callbacks, self.abort_event, self.pausable, self.shared
            )
        )
        task.add_done_callback(self.on_done)
        self.running[task] = job
        if self.journal is not None:
            self.fingerprints[job.key] = fingerprint(job.prompt, job.deps)

    def stop_reading_if_aborted(self) -> None:
        """Once aborted, read no further input (executions in flight finish as cancelled)."""
        if self.reading is not None and self.aborted():
            self.reading.remove_done_callback(self.on_done)
            self.reading.cancel()
            self.reading = None

    def collect(self, done: list[asyncio.Future[Any]]) -> list[ManyResult[Any, Any]]:
        """Take the input just read and the executions just finished; a crashed execution sets ``failure``."""
        reading = self.reading
        if reading is not None and reading in done:
            self.reading = None
            try:
                self.take(reading.result())
            except Exception as exc:
                self.input_error = exc
        finished: list[ManyResult[Any, Any]] = []
        for task in done:
            job = self.running.pop(task, None)
            if job is None:
                continue
            if task.exception() is not None:
                self.failure = self.failure or task.exception()
                continue
            finished.append(ManyResult(index=job.index, key=job.key, result=task.result()))
        return finished

    async def shutdown(self, watcher: asyncio.Future[Any] | None) -> None:
        """Cancel whatever is still running or reading, and wait for it to end."""
        pending = [*self.running, *([self.reading] if self.reading is not None else [])]
        for task in pending:
            task.cancel()
        if watcher is not None:
            watcher.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        if isinstance(self.client, BatchingClient):
            await self.client.aclose()  # its batches keep running at the API: a resumed run attaches to them

    def _journaled(self, job: Input) -> PausableResult[Any] | None:
        if job.key in self.keys_seen:
            raise ValueError(f"input {job.index}: key {job.key!r} is used twice; every input needs a key of its own.")
        self.keys_seen.add(job.key)
        journal = self.journal
        record = None if journal is None else journal.lookup(job.key)
        if journal is None or record is None:
            return None
        if job.derived and record.get("input_sha256") != fingerprint(job.prompt, job.deps):
            raise JournalError(
                f"input {job.index} is not the input journaled under {job.key!r} in {journal.path}: the inputs "
                "changed order or content since. Give the inputs their own keys (RunInput(key=...)), or use a new "
                "journal."
            )
        return result_of(record, self.agent, pausable=self.pausable)


async def drive(
    agent: AgentDefinition[Any, Any],
    source: Source,
    *,
    concurrency: int,
    client: MessagesClient | None,
    rate_limits: RateLimits | None,
    limits: ExecutionLimits | None,
    callbacks: ExecuteCallbacks | None,
    abort_event: AbortEvent | None,
    journal_path: str | os.PathLike[str] | None,
    transport: MessageBatches | None = None,
    pausable: bool = False,
) -> AsyncGenerator[ManyResult[Any, Any], None]:
    journal = None if journal_path is None else await asyncio.to_thread(Journal.open, Path(journal_path), agent)
    given = client if client is not None else CLIENT_IN_CONTEXT.get()
    base = given if given is not None else default_client()
    batch = _Batch(agent, source, concurrency, base, limits, callbacks, abort_event, journal, pausable)
    try:
        batch.client = await _shared_client(batch, rate_limits, transport, journal_path)
    except BaseException:
        if journal is not None:
            await journal.close()
        if given is None:
            await close_client(base)
        raise
    watcher = None if abort_event is None else asyncio.ensure_future(Guard(abort_event, None)._wait_abort())
    if watcher is not None:
        watcher.add_done_callback(batch.on_done)
    try:
        while True:
            await batch.fill()
            if batch.resumed:
                ready, batch.resumed = batch.resumed, []
                for result in ready:
                    yield result
                await asyncio.sleep(0)  # a long run of read-back results still lets signals and progress through
                continue
            batch.stop_reading_if_aborted()
            if not batch.running and batch.reading is None:
                break
            finished = batch.collect(await batch.next_done())
            if batch.failure is None:
                await batch.fill()  # replacements start before the journal write is awaited
            if journal is not None:
                await asyncio.gather(*(_journal(journal, agent, batch, result) for result in finished))
            for result in finished:
                yield result
            if batch.failure is not None:
                break
    finally:
        await batch.shutdown(watcher)
        if journal is not None:
            await journal.close()
        if given is None:
            await close_client(base)  # the default client is this run's own
    if batch.failure is not None:
        raise batch.failure
    if batch.input_error is not None:
        raise batch.input_error


async def _shared_client(
    batch: _Batch,
    rate_limits: RateLimits | None,
    transport: MessageBatches | None,
    journal_path: str | os.PathLike[str] | None,
) -> MessagesClient:
    """The client every execution calls: the one given, paced by the rate limiter, or sending Message Batches."""
    if transport is not None:
        return await batching_client(batch.client, transport, journal_path, lambda: len(batch.running))
    if rate_limits is not None:
        # Each alternative of the agent's fallback chain on a client of its own is paced by that client's limiter.
        concurrency = batch.concurrency
        batch.shared.wrap = lambda client: limited_client(cast("MessagesClient", client), rate_limits, concurrency)
        return limited_client(batch.client, rate_limits, batch.concurrency)
    return batch.client


async def _journal(
    journal: Journal, agent: AgentDefinition[Any, Any], batch: _Batch, result: ManyResult[Any, Any]
) -> None:
    outcome = result.result
    job_fingerprint = batch.fingerprints.pop(result.key)
    if isinstance(outcome, ExecuteFailure) and outcome.error.code == AgentErrorCode.EXECUTION_CANCELLED:
        return  # stopped by the abort event, not finished: a resumed run executes it again
    line = record_line(key=result.key, index=result.index, fingerprint=job_fingerprint, agent=agent, result=outcome)
    await journal.append(result.key, line)

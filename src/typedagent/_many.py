"""``execute_many()``: many executions on one client, bounded, rate-limit aware, resumable, in completion order."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Generic, TypeAlias, cast, overload

import pydantic
import pydantic_core
from typing_extensions import TypeVar

from ._callbacks import EXECUTION_KEY, ExecuteCallbacks
from ._client import MessagesClient, close_client, default_client
from ._definition import AgentDefinition
from ._errors import AgentErrorCode, JournalError
from ._journal import Journal, record_line, result_of
from ._limits import AbortEvent, ExecutionLimits, Guard
from ._loop import execute_agent
from ._ratelimit import RateLimits, limited_client
from ._results import ExecuteFailure, ExecuteResult

if TYPE_CHECKING:
    import os

    from anthropic.types import ContentBlockParam

__all__ = ["ManyResult", "RunInput", "execute_many", "execute_many_sync"]

OutputT = TypeVar("OutputT", bound=pydantic.BaseModel)
OutputT_co = TypeVar("OutputT_co", covariant=True)
DepsT = TypeVar("DepsT", default=None)

DEFAULT_CONCURRENCY: Final = 64
_DEFAULT_RATE_LIMITS: Final = RateLimits()
_YIELD_EVERY: Final = 256
"""Resumed results read back in a row before the event loop gets a turn (signals, progress)."""


@dataclass(frozen=True, slots=True)
class RunInput(Generic[DepsT]):
    """One input of ``execute_many``: a prompt, its run-time deps, and the key that identifies it.

    Example:
        ``RunInput("Ticket 17: VPN drops", deps=Account(id=17), key="ticket-17")``
    """

    prompt: str | Sequence[ContentBlockParam]
    """The user's input: a string or a list of content blocks."""
    _: KW_ONLY
    deps: DepsT = None  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]
    """Run-time dependencies (required when the agent declares ``deps_type``)."""
    key: str | None = None
    """Identifies the input in results and in the journal; derived from the position when omitted."""

    def __post_init__(self) -> None:
        if self.key is not None and (not isinstance(self.key, str) or not self.key):
            raise TypeError(f"RunInput.key must be a non-empty str or None, got {self.key!r}.")


@dataclass(frozen=True, kw_only=True, slots=True)
class ManyResult(Generic[OutputT_co]):
    """The result of one input of ``execute_many``."""

    index: int
    """The input's position (0-based) in ``inputs``."""
    key: str
    """The input's key (``RunInput.key``, or ``#<index>`` when it had none)."""
    result: ExecuteResult[OutputT_co]
    """The execution's result, exactly as ``execute_agent`` returns it."""
    resumed: bool = False
    """Read back from the journal (finished in an earlier run), not executed now. Its ``metadata.messages``
    is empty: the journal does not keep conversations."""


@dataclass(frozen=True, slots=True)
class _Input:
    index: int
    key: str
    derived: bool
    prompt: str | Sequence[ContentBlockParam]
    deps: Any


def derived_key(index: int) -> str:
    """The key of an input given without one: its position, as ``#<index>``."""
    return f"#{index}"


def fingerprint(prompt: object, deps: object) -> str:
    """A short hash of an input (its prompt, and its deps when they serialise to JSON), to spot changed inputs."""
    digest = hashlib.sha256(json.dumps(prompt, sort_keys=True, default=str).encode())
    # Deps like a database pool do not serialise: the prompt alone identifies such an input.
    with contextlib.suppress(pydantic_core.PydanticSerializationError):
        digest.update(pydantic_core.to_json(deps))
    return digest.hexdigest()[:16]


def _prepare(item: object, index: int, agent: AgentDefinition[Any, Any]) -> _Input:
    prompt: object
    if isinstance(item, RunInput):
        run_input = cast("RunInput[Any]", item)  # type: ignore[redundant-cast]  # pyright leaves it partly Unknown
        prompt, deps, key = run_input.prompt, run_input.deps, run_input.key
    else:
        prompt, deps, key = item, None, None
    where = f"input {index}" if key is None else f"input {index} (key {key!r})"
    kind = type(prompt).__name__
    if not isinstance(prompt, str) and not (
        isinstance(prompt, Sequence) and all(isinstance(block, dict) for block in cast("Sequence[object]", prompt))
    ):
        raise TypeError(
            f"{where} is a {kind}: each input must be a prompt (a str or a list of content blocks) or a RunInput."
        )
    if not (prompt.strip() if isinstance(prompt, str) else prompt):
        raise TypeError(f"{where} has an empty prompt: give the model something to work on, or leave it out.")
    if agent.deps_type is not None and deps is None:
        raise TypeError(
            f"{where} has no deps, but agent {agent.name!r} declares deps_type={agent.deps_type.__name__}: "
            "pass RunInput(prompt, deps=...)."
        )
    text = cast("str | Sequence[ContentBlockParam]", prompt)
    if key is None:
        return _Input(index, derived_key(index), True, text, deps)
    return _Input(index, key, False, text, deps)


class _Source:
    """Reads the inputs one at a time, only when there is room for another execution."""

    def __init__(self, inputs: Iterable[Any] | AsyncIterable[Any]) -> None:
        self.sync: Iterator[Any] | None = None
        self.aiter: AsyncIterator[Any] | None = None
        if isinstance(inputs, AsyncIterable):
            self.aiter = aiter(inputs)
        else:
            self.sync = iter(inputs)
        self.index = 0

    async def next(self) -> tuple[int, object] | None:
        """The next item and its index, or None at the end."""
        try:
            if self.sync is not None:
                item = next(self.sync)
            else:
                assert self.aiter is not None
                item = await anext(self.aiter)
        except (StopIteration, StopAsyncIteration):
            return None
        index, self.index = self.index, self.index + 1
        return index, item


async def _run_one(
    agent: AgentDefinition[Any, Any],
    job: _Input,
    client: MessagesClient,
    limits: ExecutionLimits | None,
    callbacks: ExecuteCallbacks | None,
    abort_event: AbortEvent | None,
) -> ExecuteResult[Any]:
    EXECUTION_KEY.set(job.key)  # this task's own context: its callbacks see the key
    return await execute_agent(
        agent, job.prompt, deps=job.deps, client=client, limits=limits, callbacks=callbacks, abort_event=abort_event
    )


class _Batch:
    """The state of one ``execute_many`` run: the source, the executions in flight, the journal."""

    def __init__(
        self,
        agent: AgentDefinition[Any, Any],
        source: _Source,
        concurrency: int,
        client: MessagesClient,
        limits: ExecutionLimits | None,
        callbacks: ExecuteCallbacks | None,
        abort_event: AbortEvent | None,
        journal: Journal | None,
    ) -> None:
        self.agent = agent
        self.source = source
        self.concurrency = concurrency
        self.client = client
        self.limits = limits
        self.callbacks = callbacks
        self.abort_event = abort_event
        self.journal = journal
        self.running: dict[asyncio.Future[Any], _Input] = {}
        self.reading: asyncio.Future[tuple[int, object] | None] | None = None
        self.exhausted = False
        self.input_error: BaseException | None = None
        self.keys_seen: set[str] = set()
        """Every key of this run (not the inputs themselves), to refuse duplicates."""
        self.resumed: list[ManyResult[Any]] = []
        self.fingerprints: dict[str, str] = {}
        self.done: list[asyncio.Future[Any]] = []
        self.wake = asyncio.Event()

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
            job = _prepare(raw, index, self.agent)
            record = self._journaled(job)
        except Exception as exc:
            self.input_error = exc
            return
        if record is not None:
            self.resumed.append(ManyResult(index=index, key=job.key, result=record, resumed=True))
            return
        task = asyncio.ensure_future(
            _run_one(self.agent, job, self.client, self.limits, self.callbacks, self.abort_event)
        )
        task.add_done_callback(self.on_done)
        self.running[task] = job
        if self.journal is not None:
            self.fingerprints[job.key] = fingerprint(job.prompt, job.deps)

    def _journaled(self, job: _Input) -> ExecuteResult[Any] | None:
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
        return result_of(record, self.agent)


def _check_arguments(
    agent: object,
    inputs: object,
    concurrency: object,
    rate_limits: object,
    limits: object,
    callbacks: object,
) -> None:
    if not isinstance(agent, AgentDefinition):
        raise TypeError(f"execute_many() needs an AgentDefinition from define_agent(), got {type(agent).__name__}.")
    if isinstance(inputs, str | bytes) or not isinstance(inputs, Iterable | AsyncIterable):
        raise TypeError(
            f"inputs must be an iterable or async iterable of prompts or RunInput, got {type(inputs).__name__}."
        )
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise TypeError(f"concurrency must be an int >= 1, got {concurrency!r}.")
    if rate_limits is not None and not isinstance(rate_limits, RateLimits):
        raise TypeError(f"rate_limits must be a RateLimits or None, got {type(rate_limits).__name__}.")
    if limits is not None and not isinstance(limits, ExecutionLimits):
        raise TypeError(f"limits must be an ExecutionLimits, got {type(limits).__name__}.")
    if callbacks is not None and not isinstance(callbacks, ExecuteCallbacks):
        raise TypeError(f"callbacks must be an ExecuteCallbacks, got {type(callbacks).__name__}.")


async def _drive(
    agent: AgentDefinition[Any, Any],
    source: _Source,
    *,
    concurrency: int,
    client: MessagesClient | None,
    rate_limits: RateLimits | None,
    limits: ExecutionLimits | None,
    callbacks: ExecuteCallbacks | None,
    abort_event: AbortEvent | None,
    journal_path: str | os.PathLike[str] | None,
) -> AsyncGenerator[ManyResult[Any], None]:
    journal = None if journal_path is None else await asyncio.to_thread(Journal.open, Path(journal_path), agent)
    base = client if client is not None else default_client()
    shared = base if rate_limits is None else limited_client(base, rate_limits, concurrency)
    batch = _Batch(agent, source, concurrency, shared, limits, callbacks, abort_event, journal)
    watcher = None if abort_event is None else asyncio.ensure_future(Guard(abort_event, None)._wait_abort())
    if watcher is not None:
        watcher.add_done_callback(batch.on_done)
    failure: BaseException | None = None
    try:
        while True:
            await batch.fill()
            if batch.resumed:
                ready, batch.resumed = batch.resumed, []
                for result in ready:
                    yield result
                await asyncio.sleep(0)  # a long run of read-back results still lets signals and progress through
                continue
            if batch.reading is not None and batch.aborted():
                batch.reading.remove_done_callback(batch.on_done)
                batch.reading.cancel()
                batch.reading = None
            if not batch.running and batch.reading is None:
                break
            done = await batch.next_done()
            reading = batch.reading
            if reading is not None and reading in done:
                batch.reading = None
                try:
                    batch.take(reading.result())
                except Exception as exc:
                    batch.input_error = exc
            finished: list[ManyResult[Any]] = []
            for task in done:
                job = batch.running.pop(task, None)
                if job is None:
                    continue
                if task.exception() is not None:
                    failure = failure or task.exception()
                    continue
                finished.append(ManyResult(index=job.index, key=job.key, result=task.result()))
            if failure is None:
                await batch.fill()  # replacements start before the journal write is awaited
            if journal is not None:
                await asyncio.gather(*(_journal(journal, agent, batch, result) for result in finished))
            for result in finished:
                yield result
            if failure is not None:
                break
    finally:
        pending = [*batch.running, *([batch.reading] if batch.reading is not None else [])]
        for task in pending:
            task.cancel()
        if watcher is not None:
            watcher.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        if journal is not None:
            await journal.close()
        if client is None:
            await close_client(base)
    if failure is not None:
        raise failure
    if batch.input_error is not None:
        raise batch.input_error


async def _journal(journal: Journal, agent: AgentDefinition[Any, Any], batch: _Batch, result: ManyResult[Any]) -> None:
    outcome = result.result
    job_fingerprint = batch.fingerprints.pop(result.key)
    if isinstance(outcome, ExecuteFailure) and outcome.error.code == AgentErrorCode.EXECUTION_CANCELLED:
        return  # stopped by the abort event, not finished: a resumed run executes it again
    line = record_line(key=result.key, index=result.index, fingerprint=job_fingerprint, agent=agent, result=outcome)
    await journal.append(result.key, line)


PromptInput: TypeAlias = "str | Sequence[ContentBlockParam] | RunInput[None]"
"""An input of an agent without deps: a prompt, or a ``RunInput`` (for its key)."""


@overload
def execute_many(
    agent: AgentDefinition[OutputT, None],
    inputs: Iterable[PromptInput] | AsyncIterable[PromptInput],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    client: MessagesClient | None = None,
    rate_limits: RateLimits | None = ...,
    limits: ExecutionLimits | None = None,
    callbacks: ExecuteCallbacks | None = None,
    abort_event: AbortEvent | None = None,
    journal: str | os.PathLike[str] | None = None,
) -> AsyncGenerator[ManyResult[OutputT], None]: ...
@overload
def execute_many(
    agent: AgentDefinition[OutputT, DepsT],
    inputs: Iterable[RunInput[DepsT]] | AsyncIterable[RunInput[DepsT]],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    client: MessagesClient | None = None,
    rate_limits: RateLimits | None = ...,
    limits: ExecutionLimits | None = None,
    callbacks: ExecuteCallbacks | None = None,
    abort_event: AbortEvent | None = None,
    journal: str | os.PathLike[str] | None = None,
) -> AsyncGenerator[ManyResult[OutputT], None]: ...
def execute_many(
    agent: AgentDefinition[OutputT, Any],
    inputs: Iterable[Any] | AsyncIterable[Any],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    client: MessagesClient | None = None,
    rate_limits: RateLimits | None = _DEFAULT_RATE_LIMITS,
    limits: ExecutionLimits | None = None,
    callbacks: ExecuteCallbacks | None = None,
    abort_event: AbortEvent | None = None,
    journal: str | os.PathLike[str] | None = None,
) -> AsyncGenerator[ManyResult[OutputT], None]:
    """Run the agent on every input, at most ``concurrency`` at a time, yielding results as they finish.

    Inputs are read lazily, one when there is room for another execution, so a generator over a huge
    file never sits in memory. All executions share one client, and its API calls go through one rate
    limiter (see ``RateLimits``): it paces them by the API's rate-limit headers and waits out 429s
    instead of failing executions. With ``journal``, every finished execution is appended to that JSONL
    file before it is yielded; run again with the same journal and inputs, and finished inputs are read
    back instead of executed.

    Use it with ``async for`` (wrap it in ``contextlib.aclosing`` to stop early cleanly); stopping early
    cancels the executions in flight. Like ``execute_agent``, it never raises for run-time failures:
    each input's ``ExecuteFailure`` is yielded like a success.

    Args:
        agent: The agent, from ``define_agent()``.
        inputs: An iterable or async iterable of prompts, or of ``RunInput`` (for deps and keys).
        concurrency: Most executions in flight at once.
        client: Shared by every execution; default ``AsyncAnthropic()`` (closed at the end).
        rate_limits: How the limiter paces the client's calls; None turns pacing and 429 handling off
            (the concurrency cap stays).
        limits: Token budget and timeout of each execution.
        callbacks: Hooks for every execution; ``state.key`` says which input an event belongs to.
        abort_event: Stops the run: no new input starts, executions in flight end as
            ``EXECUTION_CANCELLED`` within 100 ms and are yielded but not journaled.
        journal: A JSONL file recording every finished execution; reused to resume.

    Yields:
        ``ManyResult`` per input (index, key, result), in completion order.

    Raises:
        TypeError: wrong argument types, or an input that is not a prompt or ``RunInput``, has an empty
            prompt, or lacks the deps its agent needs (raised once the executions in flight finished).
        ValueError: two inputs with the same key.
        JournalError: the journal belongs to another agent, is damaged, or its derived keys no longer
            match the inputs.
    """
    _check_arguments(agent, inputs, concurrency, rate_limits, limits, callbacks)
    return _drive(
        agent,
        _Source(inputs),
        concurrency=concurrency,
        client=client,
        rate_limits=rate_limits,
        limits=limits,
        callbacks=callbacks,
        abort_event=abort_event,
        journal_path=journal,
    )


@overload
def execute_many_sync(
    agent: AgentDefinition[OutputT, None],
    inputs: Iterable[PromptInput] | AsyncIterable[PromptInput],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    client: MessagesClient | None = None,
    rate_limits: RateLimits | None = ...,
    limits: ExecutionLimits | None = None,
    callbacks: ExecuteCallbacks | None = None,
    abort_event: AbortEvent | None = None,
    journal: str | os.PathLike[str] | None = None,
) -> list[ManyResult[OutputT]]: ...
@overload
def execute_many_sync(
    agent: AgentDefinition[OutputT, DepsT],
    inputs: Iterable[RunInput[DepsT]] | AsyncIterable[RunInput[DepsT]],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    client: MessagesClient | None = None,
    rate_limits: RateLimits | None = ...,
    limits: ExecutionLimits | None = None,
    callbacks: ExecuteCallbacks | None = None,
    abort_event: AbortEvent | None = None,
    journal: str | os.PathLike[str] | None = None,
) -> list[ManyResult[OutputT]]: ...
def execute_many_sync(
    agent: AgentDefinition[OutputT, Any],
    inputs: Iterable[Any] | AsyncIterable[Any],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    client: MessagesClient | None = None,
    rate_limits: RateLimits | None = _DEFAULT_RATE_LIMITS,
    limits: ExecutionLimits | None = None,
    callbacks: ExecuteCallbacks | None = None,
    abort_event: AbortEvent | None = None,
    journal: str | os.PathLike[str] | None = None,
) -> list[ManyResult[OutputT]]:
    """Blocking ``execute_many``: same arguments; returns every result, in input order.

    Raises:
        RuntimeError: called inside a running event loop (use ``execute_many`` there).
        TypeError: as ``execute_many``.
        ValueError: as ``execute_many``.
        JournalError: as ``execute_many``.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            "execute_many_sync() cannot run inside a running event loop: use `async for ... in execute_many(...)`."
        )
    stream = execute_many(
        agent,
        inputs,
        concurrency=concurrency,
        client=client,
        rate_limits=rate_limits,
        limits=limits,
        callbacks=callbacks,
        abort_event=abort_event,
        journal=journal,
    )

    async def collect() -> list[ManyResult[OutputT]]:
        async with contextlib.aclosing(stream):
            results = [result async for result in stream]
        return sorted(results, key=lambda result: result.index)

    return asyncio.run(collect())

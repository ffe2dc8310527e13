"""Many executions over a Ray cluster: ``execute_many_ray()`` (install ``typedagent[ray]``).

The inputs are cut into shards; each shard goes to an async Ray actor that runs ``execute_many`` on it with
its own event loop and its own client (built on the worker by ``client_factory``, a picklable callable).
Each result is streamed back and yielded as soon as its execution finishes. With ``journal``, the driver
journals every result before yielding it, exactly as ``execute_many`` does, and reads finished inputs back
on a later run. A worker that dies (its node lost, the actor killed) has its shard run again on a new
worker, with only the inputs whose results had not come back: none is lost, none is reported twice.

Example:
    ``ray.init(address="auto")``

    ``async for item in execute_many_ray(agent, prompts, workers=8, journal="out.jsonl"): ...``
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

import pydantic
from typing_extensions import TypeVar

from ._agent.definition import AgentDefinition
from ._api.transport import Transport, check_transport, default_concurrency
from ._many.inputs import Input, RunInput, fingerprint, prepare
from ._many.journal import Journal
from ._many.many import execute_many, in_input_order
from ._many.records import record_line, result_of
from ._many.scheduler import ManyResult
from ._run.arguments import check_tools_can_wait
from ._run.sync import refuse_running_loop, run_blocking
from ._shared.errors import AgentErrorCode, JournalError
from ._shared.limits import AbortEvent, ExecutionLimits, Guard
from ._shared.results import ExecuteFailure

if TYPE_CHECKING:
    from ._api.client import MessagesClient

__all__ = ["ClientFactory", "execute_many_ray", "execute_many_ray_sync"]

OutputT = TypeVar("OutputT", bound=pydantic.BaseModel)

ClientFactory = Callable[[], "MessagesClient"]
"""Builds a worker's client (``anthropic.AsyncAnthropic`` by default); it must be picklable."""

_MAX_SHARD_RUNS: Final = 3
"""Runs of a shard (the first and its retries after a worker died) before the whole run fails."""


@dataclass(frozen=True, kw_only=True, slots=True)
class _Job:
    """What a worker needs to run one shard: the agent and the run's settings."""

    agent: AgentDefinition[Any, Any]
    client_factory: ClientFactory | None
    concurrency: int
    limits: ExecutionLimits | None
    transport: Transport


class _Worker:
    """A Ray actor (made remote lazily): runs shards with ``execute_many`` on its own loop and client."""

    def __init__(self, client_factory: ClientFactory | None) -> None:
        self.client: Any = None
        self.client_factory = client_factory

    async def run(self, job: _Job, shard: list[tuple[int, RunInput[Any]]]) -> AsyncIterator[ManyResult[Any]]:
        """Run the shard; yield each result as it finishes (Ray streams them to the driver)."""
        if self.client is None:
            if self.client_factory is None:
                from anthropic import AsyncAnthropic

                self.client = AsyncAnthropic()
            else:
                self.client = self.client_factory()
        indexes = {run_input.key: index for index, run_input in shard}
        stream = execute_many(
            job.agent,
            [run_input for _, run_input in shard],
            client=self.client,
            concurrency=job.concurrency,
            limits=job.limits,
            transport=job.transport,
        )
        async with contextlib.aclosing(stream):
            async for item in stream:
                yield ManyResult(index=indexes[item.key], key=item.key, result=item.result)


@dataclass(frozen=True, kw_only=True, slots=True)
class _Ended:
    """How a shard's run ended: done, its worker dead (with the inputs it did not finish), or crashed."""

    task: asyncio.Task[None] | None
    actor: Any
    left: list[tuple[int, RunInput[Any]]]
    runs: int
    error: BaseException | None = None
    died: bool = False


def _ray(address: str | None) -> tuple[Any, bool]:
    """Ray, connected to a cluster (joined or started at ``address`` when not yet), and whether it was joined here."""
    try:
        ray: Any = importlib.import_module("ray")
    except ImportError:
        raise ImportError("typedagent.ray needs Ray: pip install 'typedagent[ray]'.") from None
    if ray.is_initialized():
        return ray, False
    ray.init(address=address, include_dashboard=False, log_to_driver=False)
    return ray, True


class _Run:
    """The driver's side of one run: shards out, results in, journaled, yielded."""

    def __init__(
        self, job: _Job, workers: int, journal: Journal | None, address: str | None, abort_event: AbortEvent | None
    ) -> None:
        self.ray, self.joined = _ray(address)
        self.abort_event = abort_event
        self.watcher = None if abort_event is None else asyncio.ensure_future(Guard(abort_event, None)._wait_abort())
        self.job = job
        self.journal = journal
        self.remote = self.ray.remote(_Worker)
        self.idle = [self.remote.remote(job.client_factory) for _ in range(workers)]
        self.busy: dict[asyncio.Task[None], Any] = {}
        """The task following each shard running, and its worker."""
        self.events: asyncio.Queue[ManyResult[Any] | _Ended] = asyncio.Queue()
        self.fingerprints: dict[str, str] = {}
        self.keys: set[str] = set()

    def stop(self) -> None:
        """End every worker (a shard still running is abandoned: the run was stopped early)."""
        for task in self.busy:
            task.cancel()
        for actor in [*self.idle, *self.busy.values()]:
            self.ray.kill(actor)
        self.idle = []
        self.busy = {}
        if self.watcher is not None:
            self.watcher.cancel()
        if self.joined:
            self.ray.shutdown()

    def aborted(self) -> bool:
        return self.abort_event is not None and self.abort_event.is_set()

    def start(self, actor: Any, shard: list[tuple[int, RunInput[Any]]], runs: int) -> None:
        task = asyncio.ensure_future(self._follow(actor, shard, runs))
        self.busy[task] = actor

    async def _follow(self, actor: Any, shard: list[tuple[int, RunInput[Any]]], runs: int) -> None:
        """Pass the shard's results on as they stream in, then how the shard ended."""
        task = asyncio.current_task()
        received: set[str] = set()
        try:
            async for reference in actor.run.remote(self.job, shard):
                result: ManyResult[Any] = await reference
                received.add(result.key)
                self.events.put_nowait(result)
        except self.ray.exceptions.RayActorError as error:
            left = [(index, item) for index, item in shard if item.key not in received]
            self.events.put_nowait(_Ended(task=task, actor=actor, left=left, runs=runs, error=error, died=True))
        except Exception as error:
            self.events.put_nowait(_Ended(task=task, actor=actor, left=[], runs=runs, error=error))
        else:
            self.events.put_nowait(_Ended(task=task, actor=actor, left=[], runs=runs))

    async def finished(self) -> list[ManyResult[Any]]:
        """Wait for results; every one arrived so far (none when aborted), after handling the shards that ended."""
        events: list[ManyResult[Any] | _Ended] = []
        if self.events.empty():
            getter = asyncio.ensure_future(self.events.get())
            waiting = [getter, *([self.watcher] if self.watcher is not None else [])]
            done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if getter not in done:
                getter.cancel()
                return []
            events.append(getter.result())
        while not self.events.empty():
            events.append(self.events.get_nowait())
        results: list[ManyResult[Any]] = []
        for event in events:
            if isinstance(event, ManyResult):
                results.append(event)
            else:
                self._ended(event)
        return results

    def _ended(self, end: _Ended) -> None:
        """A shard ended: its worker goes back to work; a dead one is replaced and the unfinished inputs rerun."""
        if end.task is not None:
            self.busy.pop(end.task, None)
        if end.error is None:
            self.idle.append(end.actor)
            return
        if not end.died:
            cause = getattr(end.error, "cause", None)
            raise cause if isinstance(cause, BaseException) else end.error
        if end.runs >= _MAX_SHARD_RUNS:
            raise RuntimeError(
                f"a shard lost its Ray worker {end.runs} times ({end.error}); the results finished so far are "
                "journaled: run again to resume."
            ) from end.error
        replacement = self.remote.remote(self.job.client_factory)
        if end.left:
            self.start(replacement, end.left, end.runs + 1)
        else:
            self.idle.append(replacement)

    def journaled(self, job: Input) -> ManyResult[Any] | None:
        """The journaled result of ``job``, read back; None when it must run."""
        if job.key in self.keys:
            raise ValueError(f"input {job.index}: key {job.key!r} is used twice; every input needs a key of its own.")
        self.keys.add(job.key)
        if self.journal is None:
            return None
        record = self.journal.lookup(job.key)
        if record is None:
            self.fingerprints[job.key] = fingerprint(job.prompt, job.deps)
            return None
        if job.derived and record.get("input_sha256") != fingerprint(job.prompt, job.deps):
            raise JournalError(
                f"input {job.index} is not the input journaled under {job.key!r} in {self.journal.path}: the inputs "
                "changed since. Give the inputs their own keys (RunInput(key=...)), or use a new journal."
            )
        return ManyResult(index=job.index, key=job.key, result=result_of(record, self.job.agent), resumed=True)

    async def record(self, result: ManyResult[Any]) -> None:
        outcome = result.result
        if self.journal is None:
            return
        if isinstance(outcome, ExecuteFailure) and outcome.error.code == AgentErrorCode.EXECUTION_CANCELLED:
            return
        line = record_line(
            key=result.key,
            index=result.index,
            fingerprint=self.fingerprints.pop(result.key),
            agent=self.job.agent,
            result=outcome,
        )
        await self.journal.append(result.key, line)


def _shards(run: _Run, inputs: Iterable[Any], size: int) -> Iterator[ManyResult[Any] | list[tuple[int, RunInput[Any]]]]:
    """The inputs in shards of ``size`` to run, and the journaled ones read back, in input order."""
    shard: list[tuple[int, RunInput[Any]]] = []
    for index, item in enumerate(inputs):
        job = prepare(item, index, run.job.agent)
        resumed = run.journaled(job)
        if resumed is not None:
            yield resumed
            continue
        shard.append((index, RunInput(job.prompt, deps=job.deps, key=job.key)))
        if len(shard) == size:
            yield shard
            shard = []
    if shard:
        yield shard


async def execute_many_ray(
    agent: AgentDefinition[OutputT, Any],
    inputs: Iterable[Any],
    *,
    workers: int = 2,
    shard_size: int = 64,
    concurrency: int | None = None,
    client_factory: ClientFactory | None = None,
    limits: ExecutionLimits | None = None,
    journal: str | os.PathLike[str] | None = None,
    transport: Transport = "online",
    address: str | None = None,
    abort_event: AbortEvent | None = None,
) -> AsyncGenerator[ManyResult[OutputT], None]:
    """Run the agent on every input over the Ray cluster this process is connected to, yielding results.

    Runs on the cluster ``ray.init(...)`` joined, or else joins the one at ``address`` (None: the one this
    machine belongs to, if any, else a new local one) and leaves it at the end. ``workers`` async actors each
    run ``execute_many`` on one shard at a time (at most ``concurrency`` executions at once) on their own
    event loop, with a client built there by ``client_factory``. Inputs (prompts, deps) and the agent are
    shipped to the workers, so they must be picklable; each result comes back as it finishes, journaled
    first when there is a ``journal``.

    Args:
        agent: The agent, from ``define_agent()`` (its module must be importable on the workers).
        inputs: Prompts or ``RunInput`` values, read lazily.
        workers: Ray actors running shards at once.
        shard_size: Inputs per shard (a dead worker's unfinished inputs run again on a new worker).
        concurrency: Most executions in flight on each worker; None: 64 online, 10,000 with Message Batches.
        client_factory: A picklable callable returning the client each worker uses; default
            ``anthropic.AsyncAnthropic()`` (the workers need ``ANTHROPIC_API_KEY``).
        limits: Token budget and timeout of each execution.
        journal: A JSONL file (on the driver) recording every finished execution; reused to resume.
        transport: ``"online"`` or a Message Batches transport, used by every worker.
        address: The cluster to join when this process has not joined one (``ray.init(address=...)``).
        abort_event: Stops the run: no new shard starts, and the shards running are abandoned (their
            inputs are not journaled, so a resumed run executes them again).

    Yields:
        ``ManyResult`` per input (index, key, result), in completion order.

    Raises:
        RuntimeError: a shard lost its worker three times.
        ImportError: Ray is not installed.
        TypeError: wrong argument types, or an input that is not a prompt or ``RunInput``.
        ValueError: two inputs with the same key.
        JournalError: as ``execute_many``.
    """
    _check(agent, inputs, workers, shard_size, concurrency)
    check_transport(transport)
    in_flight = default_concurrency(transport) if concurrency is None else concurrency
    job = _Job(agent=agent, client_factory=client_factory, concurrency=in_flight, limits=limits, transport=transport)
    opened = None if journal is None else await asyncio.to_thread(Journal.open, Path(journal), agent)
    try:
        async for result in _drive(job, workers, opened, inputs, shard_size, address, abort_event):
            yield result
    finally:
        if opened is not None:
            await opened.close()


async def _drive(
    job: _Job,
    workers: int,
    journal: Journal | None,
    inputs: Iterable[Any],
    shard_size: int,
    address: str | None,
    abort_event: AbortEvent | None,
) -> AsyncGenerator[ManyResult[Any], None]:
    """Keep every worker busy with a shard; yield journaled results read back, and each shard's as it ends."""
    run = _Run(job, workers, journal, address, abort_event)
    try:
        shards = _shards(run, inputs, shard_size)
        exhausted = False
        while True:
            while run.idle and not exhausted and not run.aborted():
                shard = next(shards, None)
                if shard is None:
                    exhausted = True
                elif isinstance(shard, ManyResult):
                    yield shard  # a journaled result, read back
                else:
                    run.start(run.idle.pop(), shard, 1)
            if not run.busy or run.aborted():
                break
            for result in await run.finished():
                await run.record(result)
                yield result
    finally:
        run.stop()


def _check(agent: object, inputs: object, workers: object, shard_size: object, concurrency: object) -> None:
    if not isinstance(agent, AgentDefinition):
        raise TypeError(f"execute_many_ray() needs an AgentDefinition from define_agent(), got {type(agent).__name__}.")
    if isinstance(inputs, str | bytes | AsyncIterable) or not isinstance(inputs, Iterable):
        kind: str = type(cast("object", inputs)).__name__  # type: ignore[redundant-cast]  # pyright: partly Unknown
        raise TypeError(f"inputs must be an iterable of prompts or RunInput, got {kind}.")
    checked = [("workers", workers), ("shard_size", shard_size)]
    for name, value in checked if concurrency is None else [*checked, ("concurrency", concurrency)]:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise TypeError(f"{name} must be an int >= 1, got {value!r}.")
    # Executions on Ray cannot pause (their state would be stranded on a worker): tools that wait are refused here.
    check_tools_can_wait(cast("AgentDefinition[Any, Any]", agent), False)  # type: ignore[redundant-cast]  # pyright: Unknown


def execute_many_ray_sync(
    agent: AgentDefinition[OutputT, Any], inputs: Iterable[Any], **options: Any
) -> list[ManyResult[OutputT]]:
    """Blocking ``execute_many_ray``: same arguments; returns every result, in input order.

    Raises:
        RuntimeError: called inside a running event loop (use ``execute_many_ray`` there).
    """
    refuse_running_loop("execute_many_ray_sync()", "`async for ... in execute_many_ray(...)`")
    return run_blocking(in_input_order(execute_many_ray(agent, inputs, **options)))

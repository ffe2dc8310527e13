"""``execute_many()``: many executions on one client, bounded, rate-limit aware, resumable, in completion order."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, overload

import pydantic
from typing_extensions import TypeVar

from .._agent.definition import AgentDefinition
from .._api.client import MessagesClient
from .._api.ratelimit import RateLimits
from .._api.transport import ONLINE_CONCURRENCY, Transport, check_transport, default_concurrency
from .._run.arguments import check_tools_can_wait
from .._run.sync import refuse_running_loop, run_blocking
from .._shared.events import ExecuteCallbacks
from .._shared.limits import AbortEvent, ExecutionLimits
from .._shared.pausing import PausableResult
from .inputs import RunInput, Source
from .scheduler import ManyResult, drive

if TYPE_CHECKING:
    import os

    from anthropic.types import ContentBlockParam

__all__ = ["ManyResult", "RunInput", "execute_many", "execute_many_sync"]

OutputT = TypeVar("OutputT", bound=pydantic.BaseModel)
DepsT = TypeVar("DepsT", default=None)

DEFAULT_CONCURRENCY: Final = ONLINE_CONCURRENCY
_DEFAULT_RATE_LIMITS: Final = RateLimits()


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
    if concurrency is not None and (
        isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1
    ):
        raise TypeError(f"concurrency must be an int >= 1 (or None for the transport's default), got {concurrency!r}.")
    if rate_limits is not None and not isinstance(rate_limits, RateLimits):
        raise TypeError(f"rate_limits must be a RateLimits or None, got {type(rate_limits).__name__}.")
    if limits is not None and not isinstance(limits, ExecutionLimits):
        raise TypeError(f"limits must be an ExecutionLimits, got {type(limits).__name__}.")
    if callbacks is not None and not isinstance(callbacks, ExecuteCallbacks):
        raise TypeError(f"callbacks must be an ExecuteCallbacks, got {type(callbacks).__name__}.")


PromptInput: TypeAlias = "str | Sequence[ContentBlockParam] | RunInput[None]"
"""An input of an agent without deps: a prompt, or a ``RunInput`` (for its key)."""


@overload
def execute_many(
    agent: AgentDefinition[OutputT, None],
    inputs: Iterable[PromptInput] | AsyncIterable[PromptInput],
    *,
    concurrency: int | None = None,
    client: MessagesClient | None = None,
    rate_limits: RateLimits | None = ...,
    limits: ExecutionLimits | None = None,
    callbacks: ExecuteCallbacks | None = None,
    abort_event: AbortEvent | None = None,
    journal: str | os.PathLike[str] | None = None,
    transport: Transport = "online",
    pausable: Literal[False] = False,
) -> AsyncGenerator[ManyResult[OutputT], None]: ...
@overload
def execute_many(
    agent: AgentDefinition[OutputT, None],
    inputs: Iterable[PromptInput] | AsyncIterable[PromptInput],
    *,
    concurrency: int | None = None,
    client: MessagesClient | None = None,
    rate_limits: RateLimits | None = ...,
    limits: ExecutionLimits | None = None,
    callbacks: ExecuteCallbacks | None = None,
    abort_event: AbortEvent | None = None,
    journal: str | os.PathLike[str] | None = None,
    transport: Transport = "online",
    pausable: bool,
) -> AsyncGenerator[ManyResult[OutputT, PausableResult[OutputT]], None]: ...
@overload
def execute_many(
    agent: AgentDefinition[OutputT, DepsT],
    inputs: Iterable[RunInput[DepsT]] | AsyncIterable[RunInput[DepsT]],
    *,
    concurrency: int | None = None,
    client: MessagesClient | None = None,
    rate_limits: RateLimits | None = ...,
    limits: ExecutionLimits | None = None,
    callbacks: ExecuteCallbacks | None = None,
    abort_event: AbortEvent | None = None,
    journal: str | os.PathLike[str] | None = None,
    transport: Transport = "online",
    pausable: Literal[False] = False,
) -> AsyncGenerator[ManyResult[OutputT], None]: ...
@overload
def execute_many(
    agent: AgentDefinition[OutputT, DepsT],
    inputs: Iterable[RunInput[DepsT]] | AsyncIterable[RunInput[DepsT]],
    *,
    concurrency: int | None = None,
    client: MessagesClient | None = None,
    rate_limits: RateLimits | None = ...,
    limits: ExecutionLimits | None = None,
    callbacks: ExecuteCallbacks | None = None,
    abort_event: AbortEvent | None = None,
    journal: str | os.PathLike[str] | None = None,
    transport: Transport = "online",
    pausable: bool,
) -> AsyncGenerator[ManyResult[OutputT, PausableResult[OutputT]], None]: ...
def execute_many(
    agent: AgentDefinition[OutputT, Any],
    inputs: Iterable[Any] | AsyncIterable[Any],
    *,
    concurrency: int | None = None,
    client: MessagesClient | None = None,
    rate_limits: RateLimits | None = _DEFAULT_RATE_LIMITS,
    limits: ExecutionLimits | None = None,
    callbacks: ExecuteCallbacks | None = None,
    abort_event: AbortEvent | None = None,
    journal: str | os.PathLike[str] | None = None,
    transport: Transport = "online",
    pausable: bool = False,
) -> AsyncGenerator[ManyResult[OutputT, Any], None]:
    """Run the agent on every input, at most ``concurrency`` at a time, yielding results as they finish.

    Inputs are read lazily, one when there is room for another execution. All executions share one
    client, paced by one rate limiter (``RateLimits``: the API's rate-limit headers, 429s waited out).
    With ``journal``, every finished execution is appended to that JSONL file before it is yielded; run
    again with the same journal and inputs, and finished inputs are read back instead of executed.

    Use it with ``async for`` (``contextlib.aclosing`` stops it early cleanly). It never raises for run-time
    failures: each input's ``ExecuteFailure`` is yielded like a success.

    Args:
        agent: The agent, from ``define_agent()``.
        inputs: An iterable or async iterable of prompts, or of ``RunInput`` (for deps and keys).
        concurrency: Most executions in flight at once; None: 64 online, 10,000 with Message Batches.
        client: Shared by every execution; default ``AsyncAnthropic()`` (closed at the end).
        rate_limits: How the limiter paces the client's calls; None turns pacing and 429 handling off
            (the concurrency cap stays).
        limits: Token budget and timeout of each execution.
        callbacks: Hooks for every execution; ``state.key`` says which input an event belongs to.
        abort_event: Stops the run: no new input starts, executions in flight end as
            ``EXECUTION_CANCELLED`` within 100 ms and are yielded but not journaled.
        journal: A JSONL file recording every finished execution; reused to resume.
        transport: ``"online"``, or ``"message_batches"`` / ``MessageBatches(...)``: every model call goes
            in a Message Batch (half the token price; the journal's run resumes into its batches).
        pausable: Executions may pause at tool calls waiting for a decision: each is yielded as an
            ``ExecutePaused`` and journaled with its whole state (conversation included), so running the batch
            again with the same journal reads it back paused instead of executing it again.

    Yields:
        ``ManyResult`` per input (index, key, result), in completion order.

    Raises:
        TypeError: wrong argument types (a batch transport needs ``client.messages.batches``), or an input
            that is not a prompt or ``RunInput`` or lacks its deps (raised once the executions end).
        ValueError: two inputs with the same key.
        JournalError: the journal is another agent's, damaged, or its derived keys no longer fit the inputs.
    """
    _check_arguments(agent, inputs, concurrency, rate_limits, limits, callbacks)
    check_tools_can_wait(agent, pausable)
    return drive(
        agent,
        Source(inputs),
        concurrency=default_concurrency(transport) if concurrency is None else concurrency,
        client=client,
        rate_limits=rate_limits,
        limits=limits,
        callbacks=callbacks,
        abort_event=abort_event,
        journal_path=journal,
        transport=check_transport(transport),
        pausable=pausable,
    )


@overload
def execute_many_sync(
    agent: AgentDefinition[OutputT, None],
    inputs: Iterable[PromptInput] | AsyncIterable[PromptInput],
    *,
    concurrency: int | None = None,
    client: MessagesClient | None = None,
    rate_limits: RateLimits | None = ...,
    limits: ExecutionLimits | None = None,
    callbacks: ExecuteCallbacks | None = None,
    abort_event: AbortEvent | None = None,
    journal: str | os.PathLike[str] | None = None,
    transport: Transport = "online",
    pausable: Literal[False] = False,
) -> list[ManyResult[OutputT]]: ...
@overload
def execute_many_sync(
    agent: AgentDefinition[OutputT, None],
    inputs: Iterable[PromptInput] | AsyncIterable[PromptInput],
    *,
    concurrency: int | None = None,
    client: MessagesClient | None = None,
    rate_limits: RateLimits | None = ...,
    limits: ExecutionLimits | None = None,
    callbacks: ExecuteCallbacks | None = None,
    abort_event: AbortEvent | None = None,
    journal: str | os.PathLike[str] | None = None,
    transport: Transport = "online",
    pausable: bool,
) -> list[ManyResult[OutputT, PausableResult[OutputT]]]: ...
@overload
def execute_many_sync(
    agent: AgentDefinition[OutputT, DepsT],
    inputs: Iterable[RunInput[DepsT]] | AsyncIterable[RunInput[DepsT]],
    *,
    concurrency: int | None = None,
    client: MessagesClient | None = None,
    rate_limits: RateLimits | None = ...,
    limits: ExecutionLimits | None = None,
    callbacks: ExecuteCallbacks | None = None,
    abort_event: AbortEvent | None = None,
    journal: str | os.PathLike[str] | None = None,
    transport: Transport = "online",
    pausable: Literal[False] = False,
) -> list[ManyResult[OutputT]]: ...
@overload
def execute_many_sync(
    agent: AgentDefinition[OutputT, DepsT],
    inputs: Iterable[RunInput[DepsT]] | AsyncIterable[RunInput[DepsT]],
    *,
    concurrency: int | None = None,
    client: MessagesClient | None = None,
    rate_limits: RateLimits | None = ...,
    limits: ExecutionLimits | None = None,
    callbacks: ExecuteCallbacks | None = None,
    abort_event: AbortEvent | None = None,
    journal: str | os.PathLike[str] | None = None,
    transport: Transport = "online",
    pausable: bool,
) -> list[ManyResult[OutputT, PausableResult[OutputT]]]: ...
def execute_many_sync(
    agent: AgentDefinition[OutputT, Any],
    inputs: Iterable[Any] | AsyncIterable[Any],
    *,
    concurrency: int | None = None,
    client: MessagesClient | None = None,
    rate_limits: RateLimits | None = _DEFAULT_RATE_LIMITS,
    limits: ExecutionLimits | None = None,
    callbacks: ExecuteCallbacks | None = None,
    abort_event: AbortEvent | None = None,
    journal: str | os.PathLike[str] | None = None,
    transport: Transport = "online",
    pausable: bool = False,
) -> list[ManyResult[OutputT, Any]]:
    """Blocking ``execute_many``: same arguments; returns every result, in input order.

    Raises:
        RuntimeError: called inside a running event loop (use ``execute_many`` there).
        TypeError: as ``execute_many``.
        ValueError: as ``execute_many``.
        JournalError: as ``execute_many``.
    """
    refuse_running_loop("execute_many_sync()", "`async for ... in execute_many(...)`")
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
        transport=transport,
        pausable=pausable,
    )
    return run_blocking(in_input_order(stream))


async def in_input_order(stream: AsyncGenerator[ManyResult[OutputT, Any], None]) -> list[ManyResult[OutputT, Any]]:
    """Every result of ``stream`` (closed however reading ends), sorted back into input order."""
    async with contextlib.aclosing(stream):
        results = [result async for result in stream]
    return sorted(results, key=lambda result: result.index)

"""``execute_agent()``: its arguments checked, the execution built (or a paused one rebuilt), and the loop run.

The overloads make the result type honest: ``ExecuteResult[Output]`` by default, ``PausableResult[Output]`` (which
adds ``ExecutePaused``) with ``pausable=True`` and on ``resume=``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Final, Literal, cast, overload

from typing_extensions import TypeVar

from .._agent.definition import AgentDefinition
from .._api.client import CLIENT_IN_CONTEXT, MessagesClient, close_client, default_client
from .._shared.decisions import Decision
from .._shared.events import ExecuteCallbacks
from .._shared.limits import AbortEvent, ExecutionLimits, Guard
from .._shared.pausing import Approver, PausableResult, PausedState
from .._shared.results import ExecuteResult
from .arguments import MISSING, check_arguments, check_pausing
from .conversation import Conversation
from .execution import Execution
from .loop import run
from .observe import observers
from .pause import as_json
from .request import build_messages
from .resume import Resumed, check_decisions, check_fingerprint, restore

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, MessageParam

__all__ = ["execute", "execute_agent"]

OutputT = TypeVar("OutputT")
DepsT = TypeVar("DepsT")


@overload
async def execute_agent(
    agent: AgentDefinition[OutputT, None],
    prompt: str | Sequence[ContentBlockParam],
    *,
    deps: None = None,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    message_history: Sequence[MessageParam] | None = None,
    pausable: Literal[False] = False,
    approve: Approver | None = None,
) -> ExecuteResult[OutputT]: ...
@overload
async def execute_agent(
    agent: AgentDefinition[OutputT, DepsT],
    prompt: str | Sequence[ContentBlockParam],
    *,
    deps: DepsT,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    message_history: Sequence[MessageParam] | None = None,
    pausable: Literal[False] = False,
    approve: Approver | None = None,
) -> ExecuteResult[OutputT]: ...
@overload
async def execute_agent(
    agent: AgentDefinition[OutputT, None],
    prompt: str | Sequence[ContentBlockParam],
    *,
    deps: None = None,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    message_history: Sequence[MessageParam] | None = None,
    pausable: bool,
    approve: Approver | None = None,
) -> PausableResult[OutputT]: ...
@overload
async def execute_agent(
    agent: AgentDefinition[OutputT, DepsT],
    prompt: str | Sequence[ContentBlockParam],
    *,
    deps: DepsT,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    message_history: Sequence[MessageParam] | None = None,
    pausable: bool,
    approve: Approver | None = None,
) -> PausableResult[OutputT]: ...
@overload
async def execute_agent(
    agent: AgentDefinition[OutputT, None],
    *,
    resume: PausedState,
    decisions: Mapping[str, Decision],
    deps: None = None,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    approve: Approver | None = None,
) -> PausableResult[OutputT]: ...
@overload
async def execute_agent(
    agent: AgentDefinition[OutputT, DepsT],
    *,
    resume: PausedState,
    decisions: Mapping[str, Decision],
    deps: DepsT,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    approve: Approver | None = None,
) -> PausableResult[OutputT]: ...
async def execute_agent(
    agent: AgentDefinition[OutputT, Any],
    prompt: str | Sequence[ContentBlockParam] | None = None,
    *,
    deps: Any = MISSING,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    message_history: Sequence[MessageParam] | None = None,
    pausable: bool = False,
    approve: Approver | None = None,
    resume: PausedState | None = None,
    decisions: Mapping[str, Decision] | None = None,
) -> PausableResult[OutputT]:
    """Run an agent until it hands over a valid output or a limit is hit.

    It never raises for run-time failures: API errors, limits, cancellation by ``abort_event`` and
    validation failures come back as ``ExecuteFailure``. Task cancellation
    (``asyncio.CancelledError``) propagates.

    Args:
        agent: The agent, from ``define_agent()``.
        prompt: The user's input: a string or a list of content blocks (text, images, documents).
        deps: Run-time dependencies for tools, validators and instructions (required when the agent
            declares ``deps_type``).
        client: Anything with an async ``messages.create``; default: the client of an enclosing
            ``typedagent.testing.use_client(...)``, else ``AsyncAnthropic()``.
        abort_event: A ``threading.Event`` or ``asyncio.Event``; setting it cancels the execution,
            interrupting an API call or tool in flight within 100 ms.
        callbacks: Observability hooks.
        limits: Token budget and wall-clock timeout (on resume: replaces the paused execution's limits).
        message_history: Earlier Messages API turns to continue from (e.g. a previous
            ``metadata.messages``).
        pausable: Pause at tool calls that wait for a decision (approval, an external tool's result), returning
            ``ExecutePaused`` with the state to resume from.
        approve: Decides each call that needs approval as it comes (sync or async, given a ``PendingCall``,
            returning ``Approve()`` or ``Deny(reason)``): such calls then never pause.
        resume: The state of a paused execution (``ExecutePaused.state``) to go on with, instead of a prompt.
        decisions: With ``resume``: a decision for every pending call, by call id.

    Returns:
        ``ExecuteSuccess`` with the typed output, or ``ExecuteFailure`` with an ``AgentError``; with ``pausable``
        or ``resume``, also ``ExecutePaused``.

    Raises:
        TypeError: wrong argument types (a programming error), before anything is sent.
        ValueError: ``message_history`` ends with a ``tool_use`` that has no ``tool_result``;
            ``limits.max_cost_usd`` is set for a model typedagent has no price for; the agent has tools that
            need approval (without ``approve`` or ``pausable``) or external tools (without ``pausable``); the
            resumed state does not fit the agent, or a pending call lacks its decision (or has the wrong kind).
    """
    return await execute(
        agent,
        prompt,
        deps=deps,
        client=client,
        abort_event=abort_event,
        callbacks=callbacks,
        limits=limits,
        message_history=message_history,
        pausable=pausable,
        approve=approve,
        resume=resume,
        decisions=decisions,
    )


async def execute(
    agent: AgentDefinition[Any, Any],
    prompt: str | Sequence[ContentBlockParam] | None = None,
    *,
    deps: Any = MISSING,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    message_history: Sequence[MessageParam] | None = None,
    pausable: bool = False,
    approve: Approver | None = None,
    resume: PausedState | None = None,
    decisions: Mapping[str, Decision] | None = None,
) -> PausableResult[Any]:
    """``execute_agent`` itself, typed without its overloads (``stream_agent`` and the sync wrapper call it)."""
    check_arguments(agent, prompt, deps, limits, callbacks, message_history, client, abort_event)
    check_pausing(agent, prompt, message_history, pausable, approve, resume, decisions)
    decided: dict[str, Decision] = {}
    if resume is not None:
        check_fingerprint(agent, resume)
        decided = check_decisions(resume, decisions)
    # Built (and the SDK imported) before the guard starts the deadline's clock: it measures the run.
    given = client if client is not None else CLIENT_IN_CONTEXT.get()
    chosen = given if given is not None else default_client()
    resumed: Resumed | None = None
    if resume is None:
        execution = _new(
            agent, chosen, deps, limits, abort_event, callbacks, pausable, approve, prompt, message_history
        )
    else:
        execution, resumed = _resumed(agent, chosen, deps, limits, abort_event, callbacks, approve, resume, decided)
    work = partial(run, resumed=resumed)
    if given is not None:
        return await observers.execution(execution, work)
    try:
        return await observers.execution(execution, work)
    finally:
        # The default client is this execution's own: close its connection pool rather than leak it.
        await close_client(execution.client)


_NO_LIMITS: Final = ExecutionLimits()
"""The limits of an execution given none (immutable, so one serves every execution)."""


def _new(
    agent: AgentDefinition[Any, Any],
    client: MessagesClient,
    deps: Any,
    limits: ExecutionLimits | None,
    abort_event: AbortEvent | None,
    callbacks: ExecuteCallbacks | None,
    pausable: bool,
    approve: Approver | None,
    prompt: Any,
    history: Sequence[MessageParam] | None,
) -> Execution:
    limits = limits if limits is not None else _NO_LIMITS
    messages = cast("list[dict[str, Any]]", build_messages(prompt, history))
    if pausable:
        as_json(messages)  # a state that could not be written down must fail now, not after tools have run
    return Execution(
        agent=agent,
        client=client,
        deps=None if deps is MISSING else deps,
        limits=limits,
        guard=Guard(abort_event, limits.timeout_s),
        conversation=Conversation(messages),
        callbacks=callbacks,
        pausable=pausable,
        approve=approve,
        runner=run,
    )


def _resumed(
    agent: AgentDefinition[Any, Any],
    client: MessagesClient,
    deps: Any,
    limits: ExecutionLimits | None,
    abort_event: AbortEvent | None,
    callbacks: ExecuteCallbacks | None,
    approve: Approver | None,
    state: PausedState,
    decisions: dict[str, Decision],
) -> tuple[Execution, Resumed]:
    """The paused execution again: its limits (or the new ones), the deadline less the running time so far."""
    limits = limits if limits is not None else state.limits
    timeout = limits.timeout_s
    execution = Execution(
        agent=agent,
        client=client,
        deps=None if deps is MISSING else deps,
        limits=limits,
        guard=Guard(abort_event, None if timeout is None else max(0.0, timeout - state.elapsed_s)),
        conversation=Conversation(as_json(state._data["conversation"])),  # a copy: the state stays as it was
        callbacks=callbacks,
        pausable=True,
        approve=approve,
        runner=run,
    )
    return execution, Resumed(state, restore(execution, state), decisions)

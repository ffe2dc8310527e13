"""The state of one execution: what it runs with, what it has used, and the result it builds."""

from __future__ import annotations

import logging
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from .._agent.context import Delegator, RunContext
from .._api.pricing import ModelPrice, price_for
from .._shared.determinism import runtime
from .._shared.errors import AgentError, Phase
from .._shared.events import EXECUTION_KEY, ExecuteCallbacks, ExecutionState
from .._shared.limits import ExecutionLimits, Guard, Interrupted
from .._shared.pausing import Approver
from .._shared.results import (
    AttemptRecord,
    ExecuteFailure,
    ExecuteSuccess,
    ExecutionMetadata,
    SubExecution,
    TokenUsage,
    used_since,
)
from . import failures
from .attempt import Attempt, AttemptEnd, Failed
from .breakpoints import MarkerMemo
from .conversation import Conversation
from .fallback_state import FallbackState
from .hooks import Hooks
from .tap import ExecutionTap, claim_tap
from .toolbox import Toolbox

if TYPE_CHECKING:
    from anthropic.types import MessageParam

    from .._agent.definition import AgentDefinition
    from .._api.client import MessagesClient
    from .._shared.pausing import PausableResult

__all__ = ["Execution", "Runner", "lineage"]

logger = logging.getLogger("typedagent")

Runner: TypeAlias = Callable[["Execution"], Awaitable["PausableResult[Any]"]]
"""What runs an execution's attempts (the loop's ``run``): the one that runs its sub-runs too (never pausable)."""


@dataclass(slots=True, weakref_slot=True)
class Execution:
    """One ``execute_agent`` call: its inputs, its running totals and its current attempt. Private."""

    agent: AgentDefinition[Any, Any]
    client: MessagesClient
    deps: Any
    limits: ExecutionLimits
    guard: Guard
    conversation: Conversation
    callbacks: ExecuteCallbacks | None
    hooks: Hooks = field(init=False)
    started: float = field(default_factory=lambda: runtime().clock())
    tokens: TokenUsage = field(default_factory=TokenUsage)
    iterations: int = 0
    """API calls made in all attempts, failed ones included."""
    attempt: Attempt = field(default_factory=lambda: Attempt(0))
    """The current attempt (number 0 until the first starts)."""
    records: list[AttemptRecord] = field(default_factory=list[AttemptRecord])
    last_output: dict[str, Any] | None = None
    """The raw input of the last output-tool call: kept on every failure, so nothing the model produced is lost."""
    warnings: list[str] = field(default_factory=list[str])
    """Problems in user code worked around, for the metadata."""
    tool_calls: int = 0
    """Helper calls run in all attempts."""
    can_force: bool = True
    """Whether the API accepts a forced ``tool_choice`` for this model (False once it refused one)."""
    price: ModelPrice | None = field(init=False)
    cost_usd: float = 0.0
    """The estimated cost of the responses so far (0 when the model has no price)."""
    cache_savings_usd: float = 0.0
    """What the prompt cache saved on the responses so far (0 when the model has no price)."""
    response_model: str | None = None
    """The model the last response named."""
    models_used: list[str] = field(default_factory=list[str])
    """The model that answered each call that got a response, in order."""
    fallback: FallbackState = field(default_factory=FallbackState)
    """Where the model calls go in the agent's fallback chain (``_run/fallback.py``)."""
    observer: ExecutionTap | None = field(init=False)
    """The tap of the ``stream_agent`` call running this execution: its model calls stream, its events go there."""
    toolbox: Toolbox = field(init=False)
    """The tools it can run now: the agent's helpers, and its toolsets' tools once they are connected."""
    pausable: bool = False
    """Calls that wait for a decision pause the execution (``pausable=True``, and every resumed execution)."""
    approve: Approver | None = None
    """Decides the calls that need approval as they come (``approve=``): they never pause then."""
    id: str = field(default_factory=lambda: runtime().new_id())
    """The execution's id, the same through every pause."""
    pauses: int = 0
    """Pauses so far."""
    trace: str | None = None
    """The W3C ``traceparent`` of the first segment's span (a tracing observer sets it): later segments link to it."""
    system: str = ""
    """The system prompt built for this execution (``params`` may carry it marked for the cache, padded)."""
    params: dict[str, Any] = field(default_factory=dict[str, Any])
    """The request every model call sends (``_run`` builds it): its ``messages`` is the conversation's own list."""
    runner: Runner | None = None
    """The loop running this execution, which runs its sub-runs too (None: it cannot delegate)."""
    parent: Execution | None = None
    """The execution this one is a sub-run of (``subrun``): its usage counts there too, its limits apply here."""
    depth: int = 0
    sub_executions: list[SubExecution] = field(default_factory=list[SubExecution])
    cost_complete: bool = True
    """Whether every response counted (its sub-runs' included) had a price."""
    markers: MarkerMemo = field(default_factory=MarkerMemo)
    """The cache breakpoints found in the conversation's messages so far (``caching.placed``)."""

    def __post_init__(self) -> None:
        self.toolbox = Toolbox(self.agent)
        self.observer = _tap(self)
        # A weak reference: a bound method would make the execution and its conversation cyclic garbage, left for
        # the garbage collector instead of freed when the result is.
        parent = None if self.parent is None else self.parent.hooks
        # Asked for only by callbacks (this execution's, or its parent's for the events it relays).
        asked = self.callbacks is not None or parent is not None
        snapshot = weakref.WeakMethod(self.state) if asked else _no_snapshot
        self.hooks = Hooks(self.callbacks, snapshot, self.observer, agent=self.agent.name, parent=parent)
        self.price = price_for(self.agent.model)

    def start_attempt(self, number: int) -> Attempt:
        """Make the attempt ``number`` current."""
        self.attempt = Attempt(number, start=self.tokens)
        return self.attempt

    def start_iteration(self) -> None:
        """Count an API call about to be made (in the totals of the executions this one is a sub-run of too)."""
        self.attempt.iteration += 1
        for execution in lineage(self):
            execution.iterations += 1

    def take_back_iteration(self) -> None:
        """Uncount the API call of this iteration: it was never sent."""
        self.attempt.iteration -= 1
        for execution in lineage(self):
            execution.iterations -= 1

    def end_attempt(self, end: AttemptEnd) -> None:
        """Record how the current attempt ended."""
        self.records.append(self.attempt.record(end, self.attempt_tokens()))

    def attempt_tokens(self) -> TokenUsage:
        """The tokens of the current attempt: counted since it started, its sub-runs' included."""
        return used_since(self.tokens, self.attempt.start)

    def warn(self, warning: str) -> None:
        """Record a problem in user code the execution worked around, and log it on the ``typedagent`` logger."""
        self.warnings.append(warning)
        logger.warning("agent %r: %s", self.agent.name, warning)

    def where(self) -> failures.Where:
        """Where the execution is, for a failure built now."""
        return failures.Where(self.attempt.number, self.attempt.iteration, self.last_output)

    def limit_reached(self, phase: Phase) -> Failed | None:
        """The abort event, the deadline and (before an API call) the budgets of its whole lineage, checked now."""
        guard = self.guard
        if guard.abort_event is not None and guard.aborted():
            return Failed(failures.cancelled(self.where(), phase))
        timeout = self.limits.timeout_s
        if timeout is not None and guard.timed_out():
            return Failed(failures.timed_out(self.where(), phase, timeout))
        if phase != "iteration":
            return None
        for execution in lineage(self):
            failed = _budget_spent(execution, self.where)
            if failed is not None:
                return failed
        return None

    def tool_calls_left(self, requested: int) -> Failed | None:
        """``TOOL_CALL_LIMIT_EXCEEDED`` if ``requested`` more helper calls would pass the limit (counted as run)."""
        limit = self.limits.max_tool_calls
        if limit is not None and requested and self.tool_calls + requested > limit:
            return Failed(failures.tool_call_limit(self.where(), limit, self.tool_calls, requested))
        return None

    def interrupted(self, interruption: Interrupted, phase: Phase) -> Failed:
        """Work in flight was interrupted by the abort event or the deadline."""
        return Failed(failures.interrupted(self.where(), phase, interruption, self.limits.timeout_s))

    def context(self, delegator: Delegator | None = None) -> RunContext[Any]:
        """The run context handed to tools, validators and instructions now (``delegator``: how it runs sub-agents)."""
        return RunContext(
            deps=self.deps,
            agent_name=self.agent.name,
            model=self.agent.model,
            attempt=self.attempt.number,
            iteration=self.attempt.iteration,
            tokens=self.tokens,
            _delegator=delegator,
        )

    def state(self) -> ExecutionState:
        """The snapshot handed to callbacks now."""
        return ExecutionState(
            agent_name=self.agent.name,
            attempt=self.attempt.number,
            iteration=self.attempt.iteration,
            tokens=self.tokens,
            elapsed_ms=(runtime().clock() - self.started) * 1000,
            key=EXECUTION_KEY.get(),
        )

    def success(self, output: Any) -> ExecuteSuccess[Any]:
        """The execution's result when an output was accepted."""
        return ExecuteSuccess(output=output, metadata=self.metadata())

    def failure(self, error: AgentError) -> ExecuteFailure:
        """The execution's result when it failed."""
        return ExecuteFailure(error=error, metadata=self.metadata())

    def metadata(self) -> ExecutionMetadata:
        """Accounting for the execution so far (no cost when a response's model has no price)."""
        # Every response had a price, its sub-runs' too; before any response, the agent's model has one.
        priced = self.cost_complete and (self.price is not None or bool(self.models_used))
        return ExecutionMetadata(
            model=self.agent.model,
            response_model=self.response_model,
            tokens=self.tokens,
            attempts=tuple(self.records),
            iterations=self.iterations,
            latency_ms=(runtime().clock() - self.started) * 1000,
            callback_errors=tuple(self.hooks.errors),
            warnings=tuple(self.warnings),
            messages=cast("list[MessageParam]", self.conversation.messages),
            cost_usd=self.cost_usd if priced else None,
            cache_savings_usd=self.cache_savings_usd if priced else None,
            tool_calls=self.tool_calls,
            pauses=self.pauses,
            sub_executions=tuple(self.sub_executions),
            models_used=tuple(self.models_used),
        )


def _budget_spent(execution: Execution, where: Callable[[], failures.Where]) -> Failed | None:
    """This execution's limits checked before an API call (of it or of a sub-run): tokens, requests and cost."""
    limits = execution.limits
    if limits.max_total_tokens is not None and execution.tokens.total >= limits.max_total_tokens:
        return Failed(failures.token_budget(where(), limits.max_total_tokens, execution.tokens.total))
    if limits.max_requests is not None and execution.iterations >= limits.max_requests:
        return Failed(failures.request_limit(where(), limits.max_requests))
    if limits.max_cost_usd is not None and execution.cost_usd >= limits.max_cost_usd:
        return Failed(failures.cost_limit(where(), limits.max_cost_usd, execution.cost_usd))
    return None


def lineage(execution: Execution) -> tuple[Execution, ...]:
    """``execution``, then each execution it is a sub-run of, up to the top-level one."""
    if execution.parent is None:
        return (execution,)  # a top-level execution: the usual case, asked after every response
    found: list[Execution] = []
    step: Execution | None = execution
    while step is not None:
        found.append(step)
        step = step.parent
    return tuple(found)


def _no_snapshot() -> None:
    """The snapshot of an execution no callback can ask about (none of its own, no parent)."""
    return


def _tap(execution: Execution) -> ExecutionTap | None:
    """The tap watching ``execution``: a ``stream_agent`` call's, or for a sub-run, one its parent's tap gives it."""
    position = lambda: (execution.attempt.number, execution.attempt.iteration)  # noqa: E731
    parent = execution.parent
    if parent is None:
        return claim_tap(position)
    return None if parent.observer is None else parent.observer.sub_run(execution.agent, position)

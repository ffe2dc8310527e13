"""The state of one execution: what it runs with, what it has used, and the result it builds."""

from __future__ import annotations

import logging
import time
import uuid
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from .._agent.context import RunContext
from .._api.pricing import ModelPrice, Priced, price_for, priced_usage
from .._shared.errors import AgentError, Phase
from .._shared.events import EXECUTION_KEY, ExecuteCallbacks, ExecutionState
from .._shared.limits import ExecutionLimits, Guard, Interrupted
from .._shared.pausing import Approver
from .._shared.results import AttemptRecord, ExecuteFailure, ExecuteSuccess, ExecutionMetadata, TokenUsage
from . import failures
from .attempt import Attempt, AttemptEnd, Failed
from .conversation import Conversation
from .hooks import Hooks
from .tap import ExecutionTap, claim_tap
from .toolbox import Toolbox

if TYPE_CHECKING:
    from anthropic.types import MessageParam

    from .._agent.definition import AgentDefinition
    from .._api.api_errors import ApiFailure
    from .._api.client import MessagesClient

__all__ = ["Execution"]

logger = logging.getLogger("typedagent")


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
    started: float = field(default_factory=time.perf_counter)
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
    observer: ExecutionTap | None = field(init=False)
    """The tap of the ``stream_agent`` call running this execution: its model calls stream, its events go there."""
    toolbox: Toolbox = field(init=False)
    """The tools it can run now: the agent's helpers, and its toolsets' tools once they are connected."""
    pausable: bool = False
    """Calls that wait for a decision pause the execution (``pausable=True``, and every resumed execution)."""
    approve: Approver | None = None
    """Decides the calls that need approval as they come (``approve=``): they never pause then."""
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    """The execution's id, the same through every pause."""
    pauses: int = 0
    """Pauses so far."""
    trace: str | None = None
    """The W3C ``traceparent`` of the first segment's span (a tracing observer sets it): later segments link to it."""
    params: dict[str, Any] = field(default_factory=dict[str, Any])
    """The request every model call sends (``_run`` builds it): its ``messages`` is the conversation's own list."""

    def __post_init__(self) -> None:
        self.toolbox = Toolbox(self.agent)
        self.observer = claim_tap(lambda: (self.attempt.number, self.attempt.iteration))
        # A weak reference: a bound method would make the execution and its conversation cyclic garbage, left for
        # the garbage collector instead of freed when the result is.
        self.hooks = Hooks(self.callbacks, weakref.WeakMethod(self.state), self.observer, agent=self.agent.name)
        self.price = price_for(self.agent.model)

    def start_attempt(self, number: int) -> Attempt:
        """Make the attempt ``number`` current."""
        self.attempt = Attempt(number)
        return self.attempt

    def start_iteration(self) -> None:
        """Count an API call about to be made."""
        self.attempt.iteration += 1
        self.iterations += 1

    def account_failed_call(self, failure: ApiFailure) -> None:
        """Account for a failed model call: a malformed response's readable tokens; no iteration if nothing was sent."""
        if failure.usage is not None:
            self.add_usage(failure.usage)
        if not failure.sent:
            self.attempt.iteration -= 1
            self.iterations -= 1

    def add_usage(self, usage: TokenUsage, priced: Priced | None = None) -> None:
        """Add tokens (and their price: ``priced``, or the model's price of ``usage``) to the execution's totals."""
        self.tokens += usage
        self.attempt.tokens += usage
        price = self.price
        if price is not None:
            priced = priced or Priced(usage, price.cost_usd(usage), price._savings_usd(usage))
            self.cost_usd += priced.cost_usd
            self.cache_savings_usd += priced.cache_savings_usd

    def add_response_usage(self, raw: object) -> TokenUsage:
        """Add a response's own ``usage`` (read once, priced per model that ran each part); return its counts."""
        priced = priced_usage(raw, self.price)
        self.add_usage(priced.usage, priced)
        return priced.usage

    def answered_by(self, model: object) -> None:
        """Record the model a response named (the one that answered, not the alias requested)."""
        if isinstance(model, str) and model:
            self.response_model = model

    def end_attempt(self, end: AttemptEnd) -> None:
        """Record how the current attempt ended."""
        self.records.append(self.attempt.record(end))

    def warn(self, warning: str) -> None:
        """Record a problem in user code the execution worked around, and log it on the ``typedagent`` logger."""
        self.warnings.append(warning)
        logger.warning("agent %r: %s", self.agent.name, warning)

    def where(self) -> failures.Where:
        """Where the execution is, for a failure built now."""
        return failures.Where(self.attempt.number, self.attempt.iteration, self.last_output)

    def limit_reached(self, phase: Phase) -> Failed | None:
        """The abort event, the deadline and (before an API call) the token budget, checked now."""
        if self.guard.aborted():
            return Failed(failures.cancelled(self.where(), phase))
        timeout = self.limits.timeout_s
        if timeout is not None and self.guard.timed_out():
            return Failed(failures.timed_out(self.where(), phase, timeout))
        if phase == "iteration":
            return self._budget_spent()
        return None

    def _budget_spent(self) -> Failed | None:
        """The limits checked before an API call: tokens, requests and cost."""
        limits = self.limits
        if limits.max_total_tokens is not None and self.tokens.total >= limits.max_total_tokens:
            return Failed(failures.token_budget(self.where(), limits.max_total_tokens, self.tokens.total))
        if limits.max_requests is not None and self.iterations >= limits.max_requests:
            return Failed(failures.request_limit(self.where(), limits.max_requests))
        if limits.max_cost_usd is not None and self.cost_usd >= limits.max_cost_usd:
            return Failed(failures.cost_limit(self.where(), limits.max_cost_usd, self.cost_usd))
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

    def context(self) -> RunContext[Any]:
        """The run context handed to tools, validators and instructions now."""
        return RunContext(
            deps=self.deps,
            agent_name=self.agent.name,
            model=self.agent.model,
            attempt=self.attempt.number,
            iteration=self.attempt.iteration,
            tokens=self.tokens,
        )

    def state(self) -> ExecutionState:
        """The snapshot handed to callbacks now."""
        return ExecutionState(
            agent_name=self.agent.name,
            attempt=self.attempt.number,
            iteration=self.attempt.iteration,
            tokens=self.tokens,
            elapsed_ms=(time.perf_counter() - self.started) * 1000,
            key=EXECUTION_KEY.get(),
        )

    def success(self, output: Any) -> ExecuteSuccess[Any]:
        """The execution's result when an output was accepted."""
        return ExecuteSuccess(output=output, metadata=self.metadata())

    def failure(self, error: AgentError) -> ExecuteFailure:
        """The execution's result when it failed."""
        return ExecuteFailure(error=error, metadata=self.metadata())

    def metadata(self) -> ExecutionMetadata:
        """Accounting for the execution so far."""
        return ExecutionMetadata(
            model=self.agent.model,
            response_model=self.response_model,
            tokens=self.tokens,
            attempts=tuple(self.records),
            iterations=self.iterations,
            latency_ms=(time.perf_counter() - self.started) * 1000,
            callback_errors=tuple(self.hooks.errors),
            warnings=tuple(self.warnings),
            messages=cast("list[MessageParam]", self.conversation.messages),
            cost_usd=None if self.price is None else self.cost_usd,
            cache_savings_usd=None if self.price is None else self.cache_savings_usd,
            tool_calls=self.tool_calls,
            pauses=self.pauses,
        )

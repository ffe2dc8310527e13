"""The state of one execution: what it runs with, what it has used, and the result it builds."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from . import _failures as failures
from ._attempt import Attempt, AttemptEnd, Failed
from ._callbacks import ExecuteCallbacks, ExecutionState, Hooks
from ._context import RunContext
from ._conversation import Conversation
from ._errors import AgentError, Phase
from ._limits import ExecutionLimits, Guard, Interrupted
from ._results import AttemptRecord, ExecuteFailure, ExecuteSuccess, ExecutionMetadata, TokenUsage

if TYPE_CHECKING:
    from anthropic.types import MessageParam

    from ._api_errors import ApiFailure
    from ._client import MessagesClient
    from ._definition import AgentDefinition

__all__ = ["Execution"]

logger = logging.getLogger("typedagent")


@dataclass(slots=True)
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
    response_model: str | None = None
    """The model the last response named."""

    def __post_init__(self) -> None:
        self.hooks = Hooks(self.callbacks, self.state)

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

    def add_usage(self, usage: TokenUsage) -> None:
        """Add a response's tokens to the execution's and the attempt's totals."""
        self.tokens += usage
        self.attempt.tokens += usage

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
        budget = self.limits.max_total_tokens
        if phase == "iteration" and budget is not None and self.tokens.total >= budget:
            return Failed(failures.token_budget(self.where(), budget, self.tokens.total))
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
        )

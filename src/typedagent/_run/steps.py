"""The loop's seam for where its paid and side-effecting work runs: each model call and each helper call.

By default both run here, in the execution's process: ``call_model`` and ``run_helper``. A durable-execution
integration (``typedagent.temporal``, ``typedagent.dbos``) sets its own ``Steps`` for the executions it runs, so
that each becomes a recorded step of the engine (an activity, a step) that a recovered run does not repeat. The
loop itself (attempts, iterations, validation, feedback, limits) stays where the execution runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Generator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .._api.client import MessagesClient
from .._api.model_call import ModelCallFailure, call_model
from .tool_call import run_helper

if TYPE_CHECKING:
    from anthropic.types import Message

    from .._agent.context import RunContext
    from .._agent.remote import RemoteTool
    from .._agent.tools import Helper
    from .._api.stream_call import StreamObserver
    from .._shared.limits import Guard
    from .reply import Reply

__all__ = ["OWN_MODEL", "ModelCall", "Running", "Steps", "steps", "use_steps"]


class Running(Protocol):
    """What steps read of the execution making a call (an ``Execution``)."""

    @property
    def client(self) -> MessagesClient:
        """The execution's client."""
        ...

    @property
    def guard(self) -> Guard:
        """Its abort event and deadline."""
        ...

    @property
    def observer(self) -> StreamObserver | None:
        """The tap watching its model calls' events, if any."""
        ...


@dataclass(frozen=True, slots=True)
class ModelCall:
    """Where one model call goes: the execution's own client, or a fallback alternative's."""

    client: MessagesClient | None = None
    """The client, when not the execution's own (an alternative's ``client=``)."""
    alternative: int | None = None
    """With ``client``: the index of the alternative in ``define_agent(fallback=[...])`` (a durable step's key)."""
    wait_cap: float | None = None
    """The longest a rate limiter may wait out a 429 before the call moves on (None: no cap)."""


OWN_MODEL = ModelCall()


class Steps:
    """Runs an execution's model calls and helper calls: here, in the execution's own process."""

    def model_call(
        self, execution: Running, params: dict[str, Any], call: ModelCall = OWN_MODEL
    ) -> Awaitable[Message | ModelCallFailure]:
        """One model call with the request ``params``: the response, or why there is none.

        ``call`` says which client makes it: the execution's own, or a fallback alternative's (and how long a rate
        limiter may wait before the call moves on to the next model).
        """
        client = execution.client if call.client is None else call.client
        return call_model(client, params, execution.guard, execution.observer)

    def helper_call(
        self,
        execution: Running,
        reply: Reply,
        helper: Helper[Any] | RemoteTool | None,
        ctx: RunContext[Any],
        limit: int,
    ) -> Awaitable[None]:
        """One helper call, answered in ``reply``."""
        return run_helper(reply, helper, ctx, limit)


_LOCAL = Steps()
_STEPS: ContextVar[Steps] = ContextVar("typedagent_steps", default=_LOCAL)


def steps() -> Steps:
    """Where the execution running in this context makes its model and helper calls."""
    return _STEPS.get()


@contextmanager
def use_steps(chosen: Steps) -> Generator[None]:
    """Run the executions that start in this block (in this context) with ``chosen``."""
    token = _STEPS.set(chosen)
    try:
        yield
    finally:
        _STEPS.reset(token)

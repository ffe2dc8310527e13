"""The run context handed to tools, validators, history processors and dynamic instructions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol

from typing_extensions import TypeVar

from .._shared.generics import subscriptable
from .._shared.results import ExecuteResult, TokenUsage

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam

__all__ = ["Delegator", "RunContext"]

DepsT_co = TypeVar("DepsT_co", covariant=True, default=None)


class Delegator(Protocol):
    """The running execution's side of delegation: runs another agent inside it (``_run`` implements it).

    A sub-run shares the execution's client, abort event and remaining limits; its tokens, cost and API calls
    count in the execution's totals, and it is recorded in ``metadata.sub_executions``.
    """

    async def run_sub_agent(
        self, agent: Any, prompt: str | Sequence[ContentBlockParam], deps: Any, *, max_depth: int
    ) -> ExecuteResult[Any]:
        """Run ``agent`` (an ``AgentDefinition``) on ``prompt`` as a sub-run of this execution; failures are results.

        Raises:
            RecursionError: the sub-run would be deeper than ``max_depth`` levels below the top-level execution.
            TypeError: the prompt or deps cannot start an execution (as ``execute_agent`` would raise).
            ValueError: the sub-agent's model has no price while an enclosing execution has a cost limit.
        """
        ...


@subscriptable
@dataclass(frozen=True, kw_only=True, slots=True)
class RunContext(Generic[DepsT_co]):
    """What a tool, validator or instructions callable can see of the running execution.

    Declare it as the first parameter of a ``@tool`` function (``ctx: RunContext[Db]``) or the second
    parameter of a validator to receive it.
    """

    deps: DepsT_co
    """The ``deps`` passed to ``execute_agent``."""
    agent_name: str
    """Name of the running agent."""
    model: str
    """Model the agent runs on."""
    attempt: int
    """Current attempt (1-based)."""
    iteration: int
    """Current iteration within the attempt (0 before the first API call)."""
    tokens: TokenUsage
    """Tokens used so far in this execution."""
    _delegator: Delegator | None = field(default=None, repr=False, compare=False)
    """Set for a helper call and a history processor: how an agent made a tool (``as_tool``) runs inside it."""

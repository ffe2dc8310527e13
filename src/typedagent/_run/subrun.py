"""Sub-runs: another agent run inside an execution, on its client, abort event and remaining limits.

A helper call or a history processor gets a ``RunContext`` whose private delegator is a ``SubRuns`` of the running
execution (``delegating``); ``agent.as_tool()`` and ``typedagent.history.summarize_older`` run their agent through
it. The sub-run is an execution of its own (its metadata, its spans, its hooks), linked to its parent: its tokens,
cost and API calls count in the parent's totals as they happen, the parent's budgets are checked before each of its
calls, its deadline and abort event are the parent's, and it ends in the parent's ``metadata.sub_executions``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from .._agent.context import RunContext
from .._api.pricing import price_for
from .._shared.errors import AgentErrorCode
from .._shared.limits import ExecutionLimits
from .._shared.results import ExecuteFailure, ExecuteResult, ExecutionMetadata, SubExecution
from .arguments import check_arguments
from .conversation import Conversation
from .execution import Execution
from .observe import observers
from .request import build_messages

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam

    from .._agent.definition import AgentDefinition

__all__ = ["SubRuns", "delegating"]


def delegating(execution: Execution, tool_call_id: str | None = None) -> RunContext[Any]:
    """The run context now, able to run sub-agents inside ``execution`` (for the tool call ``tool_call_id``)."""
    return execution.context(SubRuns(execution, tool_call_id))


class SubRuns:
    """Runs agents as sub-runs of one execution (the ``Delegator`` a ``RunContext`` carries)."""

    __slots__ = ("parent", "tool_call_id")

    def __init__(self, parent: Execution, tool_call_id: str | None) -> None:
        self.parent = parent
        self.tool_call_id = tool_call_id
        """The parent's tool call the sub-runs serve; None for a history processor's."""

    async def run_sub_agent(
        self, agent: AgentDefinition[Any, Any], prompt: str | Sequence[ContentBlockParam], deps: Any, *, max_depth: int
    ) -> ExecuteResult[Any]:
        """Run ``agent`` as a sub-run; its result, whatever it is, and its record in the parent's metadata.

        Raises:
            RecursionError: the sub-run would be more than ``max_depth`` levels below the top-level execution.
            TypeError: the prompt or deps cannot start an execution, or the parent cannot run sub-runs.
            ValueError: the sub-agent's model has no price while an enclosing execution limits the cost; or it has
                external tools, or tools that need approval and the top-level execution has no ``approve=``.
        """
        parent = self.parent
        depth = parent.depth + 1
        if depth > max_depth:
            raise RecursionError(
                f"cannot hand this over to the {agent.name!r} agent: it would run {depth} levels below the top-level "
                f"execution, past its max_depth of {max_depth}. Do this part of the task yourself."
            )
        if parent.runner is None:
            raise TypeError("this execution cannot run sub-agents")
        check_arguments(agent, prompt, deps, None, None, None, parent.client)
        _check_no_waiting(agent, approves=parent.approve is not None)
        _check_priced(parent, agent)
        sub = Execution(
            agent=agent,
            client=parent.client,
            deps=deps,
            # The parent's budgets apply through ``parent`` (checked before each call); its deadline through its guard.
            limits=ExecutionLimits(timeout_s=parent.limits.timeout_s),
            guard=parent.guard,
            conversation=Conversation(cast("list[dict[str, Any]]", build_messages(prompt, None))),
            callbacks=None,
            runner=parent.runner,
            parent=parent,
            depth=depth,
            approve=parent.approve,
        )
        try:
            result = cast("ExecuteResult[Any]", await observers.execution(sub, parent.runner))  # never paused
        except asyncio.CancelledError:
            # The parent was interrupted while the sub-run worked: what it spent is counted, and it is recorded.
            stopped = AgentErrorCode.TIMEOUT if parent.guard.timed_out() else AgentErrorCode.EXECUTION_CANCELLED
            self._record(sub, ok=False, code=stopped, metadata=sub.metadata())
            raise
        code = result.error.code if isinstance(result, ExecuteFailure) else None
        self._record(sub, ok=code is None, code=code, metadata=result.metadata)
        return result

    def _record(self, sub: Execution, *, ok: bool, code: AgentErrorCode | None, metadata: ExecutionMetadata) -> None:
        self.parent.sub_executions.append(
            SubExecution(
                agent_name=sub.agent.name, tool_call_id=self.tool_call_id, ok=ok, error_code=code, metadata=metadata
            )
        )


def _check_priced(parent: Execution, agent: AgentDefinition[Any, Any]) -> None:
    """Refuse an unpriced sub-agent under a cost limit: its spending could not be counted against it."""
    if price_for(agent.model) is not None:
        return
    execution: Execution | None = parent
    while execution is not None:
        if execution.limits.max_cost_usd is not None:
            raise ValueError(
                f"the {agent.name!r} agent runs on model {agent.model!r}, which typedagent has no price for, inside an "
                f"execution limited to ${execution.limits.max_cost_usd:g}: its cost could not be counted. Call "
                f"typedagent.register_price({agent.model!r}, ModelPrice(...)) first."
            )
        execution = execution.parent


def _check_no_waiting(agent: AgentDefinition[Any, Any], *, approves: bool) -> None:
    """Refuse a sub-agent whose calls would wait: a sub-run never pauses (a paused state holds the top-level run).

    Its calls that need approval are decided by the top-level ``approve=`` callback, which it inherits.
    """
    external = [helper.name for helper in agent.helpers if helper.external]
    if external:
        raise ValueError(
            f"the {agent.name!r} agent has external tools ({', '.join(map(repr, external))}), whose results come "
            "from outside: it cannot run as a sub-agent, since a sub-run never pauses. Do this part yourself."
        )
    approval = [helper.name for helper in agent.helpers if helper.requires_approval is not False]
    approval += [f"toolset {toolset.label}" for toolset in agent.toolsets if toolset.requires_approval]
    if approval and not approves:
        raise ValueError(
            f"the {agent.name!r} agent has tools that need approval ({', '.join(map(repr, approval))}): as a "
            "sub-agent it runs only inside an execute_agent(..., approve=callback), which decides its calls (a "
            "sub-run never pauses, so pausable=True does not help). Do this part yourself."
        )

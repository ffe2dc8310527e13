"""``DBOSAgent``: a defined agent whose executions are DBOS workflows, their model and helper calls steps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Generic, overload

from dbos import DBOS
from typing_extensions import TypeVar

from .._agent.context import RunContext
from .._agent.definition import AgentDefinition
from .._api.beta import needs_beta
from .._run.arguments import MISSING
from .._run.execute import execute_agent
from .._run.records import (
    NO_CLIENT,
    ClientSource,
    ModelCallInput,
    ModelCallOutput,
    StepClient,
    ToolCallOutput,
    run_recorded_helper,
    run_recorded_model_call,
)
from .._run.steps import OWN_MODEL, ModelCall, Running, Steps, use_steps
from .._shared.limits import Interrupted

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, Message, MessageParam

    from .._agent.remote import RemoteTool
    from .._agent.tools import Helper
    from .._api.model_call import ModelCallFailure
    from .._run.reply import Reply
    from .._shared.limits import ExecutionLimits
    from .._shared.results import ExecuteResult

__all__ = ["DBOSAgent"]

OutputT = TypeVar("OutputT", default=Any)
DepsT = TypeVar("DepsT", default=Any)


class _DBOSSteps(Steps):
    """Each model call and each helper call is a DBOS step, raced against the abort event and the deadline."""

    def __init__(self, model_step: Any, tool_step: Any) -> None:
        self.model_step = model_step
        self.tool_step = tool_step

    async def model_call(
        self, execution: Running, params: dict[str, Any], call: ModelCall = OWN_MODEL
    ) -> Message | ModelCallFailure:
        step = self.model_step(ModelCallInput(params=params, alternative=call.alternative, wait_cap=call.wait_cap))
        try:
            output: ModelCallOutput = await execution.guard.run(step)
        except Interrupted as interruption:
            return interruption
        return output.rebuild(beta=needs_beta(params))

    async def helper_call(
        self,
        execution: Running,
        reply: Reply,
        helper: Helper[Any] | RemoteTool | None,
        ctx: RunContext[Any],
        limit: int,
    ) -> None:
        block = reply.block
        output: ToolCallOutput = await self.tool_step(block.name, block.id, dict(block.input), ctx)
        reply.answer(output.content, is_error=output.is_error)


class DBOSAgent(Generic[OutputT, DepsT]):
    """A defined agent that runs durably on DBOS: ``run`` is a workflow, each model and helper call a step.

    Make it at import time, before ``DBOS.launch()``: it registers its workflow (``{name}.run``) and its steps
    (``{name}.model_call``, ``{name}.tool_call``) by name, and a process recovering a workflow must have them.
    After a crash, ``DBOS.launch()`` in a new process finds the workflow and finishes it: the steps that
    completed return what they recorded, and only the step that was running when the process died runs again.

    Args:
        agent: The agent, from ``define_agent()``.
        name: A stable name for its workflow and steps (default: the agent's name).
        client: The client the model-call steps use: a client, or a function that makes one (called once);
            default: ``use_client``'s, else ``AsyncAnthropic()``.

    Raises:
        TypeError: ``agent`` is not an ``AgentDefinition``.
    """

    def __init__(
        self, agent: AgentDefinition[OutputT, DepsT], *, name: str | None = None, client: ClientSource = None
    ) -> None:
        if not isinstance(agent, AgentDefinition):
            raise TypeError(f"DBOSAgent wraps an agent from define_agent(), got {type(agent).__name__}.")
        if agent.toolsets:
            raise ValueError(
                f"DBOSAgent does not run agents with toolsets (MCP servers) yet: agent {agent.name!r} has "
                f"{len(agent.toolsets)}. Give the durable agent helper tools (which run as recorded steps) instead."
            )
        self.agent = agent
        self.name = name if name is not None else agent.name
        clients = StepClient(client)

        @DBOS.step(name=f"{self.name}.model_call")
        async def model_step(call: ModelCallInput) -> ModelCallOutput:
            return await run_recorded_model_call(agent, clients, call)

        @DBOS.step(name=f"{self.name}.tool_call")
        async def tool_step(
            tool: str, tool_use_id: str, tool_input: dict[str, Any], ctx: RunContext[Any]
        ) -> ToolCallOutput:
            return await run_recorded_helper(agent, tool, tool_use_id, tool_input, ctx)

        steps = _DBOSSteps(model_step, tool_step)

        @DBOS.workflow(name=f"{self.name}.run")
        async def run_workflow(
            prompt: str | Sequence[ContentBlockParam],
            deps: Any,
            limits: ExecutionLimits | None,
            message_history: Sequence[MessageParam] | None,
        ) -> ExecuteResult[Any]:
            kwargs: dict[str, Any] = {} if deps is MISSING else {"deps": deps}
            with use_steps(steps):
                return await execute_agent(
                    agent, prompt, client=NO_CLIENT, limits=limits, message_history=message_history, **kwargs
                )

        self._workflow = run_workflow

    def __repr__(self) -> str:
        return f"DBOSAgent({self.agent.name!r}, name={self.name!r})"

    @overload
    async def run(
        self: DBOSAgent[OutputT, None],
        prompt: str | Sequence[ContentBlockParam],
        *,
        deps: None = None,
        limits: ExecutionLimits | None = None,
        message_history: Sequence[MessageParam] | None = None,
    ) -> ExecuteResult[OutputT]: ...
    @overload
    async def run(
        self,
        prompt: str | Sequence[ContentBlockParam],
        *,
        deps: DepsT,
        limits: ExecutionLimits | None = None,
        message_history: Sequence[MessageParam] | None = None,
    ) -> ExecuteResult[OutputT]: ...
    async def run(
        self,
        prompt: str | Sequence[ContentBlockParam],
        *,
        deps: Any = MISSING,
        limits: ExecutionLimits | None = None,
        message_history: Sequence[MessageParam] | None = None,
    ) -> ExecuteResult[OutputT]:
        """Run the agent as a DBOS workflow (``with SetWorkflowID(...)`` names it); the ``ExecuteResult``.

        Its inputs (prompt, deps, limits, history) and result are recorded by DBOS, so they must pickle.
        """
        result: ExecuteResult[OutputT] = await self._workflow(prompt, deps, limits, message_history)
        return result

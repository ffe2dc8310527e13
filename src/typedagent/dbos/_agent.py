"""``DBOSAgent``: a defined agent whose executions are DBOS workflows, their model and helper calls steps."""

from __future__ import annotations

import logging
import pickle
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Generic, overload

from dbos import DBOS
from typing_extensions import TypeVar

from .._agent.context import RunContext
from .._agent.definition import AgentDefinition
from .._api.beta import needs_beta
from .._run.arguments import MISSING
from .._run.decision_inbox import DECISIONS, DecisionInbox, decisions_payload, until_done
from .._run.execute import execute_agent
from .._run.records import (
    NO_CLIENT,
    ClientSource,
    ModelCallInput,
    ModelCallOutput,
    StepClient,
    ToolCallOutput,
    refuse_unsupported,
    run_recorded_helper,
    run_recorded_model_call,
)
from .._run.steps import OWN_MODEL, ModelCall, Running, Steps, use_steps
from .._shared.events import ExecuteCallbacks
from .._shared.limits import Interrupted

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, Message, MessageParam

    from .._agent.remote import RemoteTool
    from .._agent.tools import Helper
    from .._api.model_call import ModelCallFailure
    from .._run.reply import Reply
    from .._shared.decisions import Decision
    from .._shared.limits import ExecutionLimits
    from .._shared.pausing import PausableResult, PausedState
    from .._shared.results import ExecuteResult

__all__ = ["DBOSAgent", "send_decisions"]

_LOG = logging.getLogger("typedagent.dbos")

WAIT_S: Final = 3600.0
"""How long one ``DBOS.recv`` waits for decisions before the run waits again (it waits as long as it takes)."""

OutputT = TypeVar("OutputT", default=Any)
DepsT = TypeVar("DepsT", default=Any)

_NAMES: dict[str, DBOSAgent[Any, Any]] = {}
"""The ``DBOSAgent`` made under each name in this process."""


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
        output: ToolCallOutput = await self.tool_step(block.name, block.id, dict(reply.tool_input), ctx)
        reply.answer(output.content, is_error=output.is_error)


class DBOSAgent(Generic[OutputT, DepsT]):
    """A defined agent that runs durably on DBOS: ``run`` is a workflow, each model and helper call a step.

    Make it at import time, before ``DBOS.launch()``: it registers its workflow (``{name}.run``) and its steps
    (``{name}.model_call``, ``{name}.tool_call``) by name, and a process recovering a workflow must have them.
    After a crash, ``DBOS.launch()`` in a new process finds the workflow and finishes it: the steps that
    completed return what they recorded, and only the step that was running when the process died runs again.

    Args:
        agent: The agent, from ``define_agent()``.
        name: A stable name for its workflow and steps, unique in the process (default: the agent's name). Wrapping
            the same agent again under its name is allowed (a module imported twice); another agent is refused.
        client: The client the model-call steps use: a client, or a function that makes one (called once);
            default: ``use_client``'s, else ``AsyncAnthropic()``.

    Raises:
        TypeError: ``agent`` is not an ``AgentDefinition``.
        ValueError: ``name`` is empty or not a str, or another agent's ``DBOSAgent`` has it; the agent has toolsets
            (MCP servers) or tools that run a sub-agent (``as_tool()``).
    """

    agent: AgentDefinition[OutputT, DepsT]
    """The agent it runs."""
    name: str
    """The name of its workflow and steps."""

    def __init__(
        self, agent: AgentDefinition[OutputT, DepsT], *, name: str | None = None, client: ClientSource = None
    ) -> None:
        if not isinstance(agent, AgentDefinition):
            raise TypeError(f"DBOSAgent wraps an agent from define_agent(), got {type(agent).__name__}.")
        refuse_unsupported(agent, "DBOSAgent")
        name = _free_name(agent, agent.name if name is None else name)
        self.agent = agent
        self.name = name
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
            callbacks: ExecuteCallbacks | None = None,
        ) -> ExecuteResult[Any]:
            kwargs: dict[str, Any] = {"client": NO_CLIENT, "callbacks": callbacks}
            if deps is not MISSING:
                kwargs["deps"] = deps
            inbox = DecisionInbox(_LOG.warning)

            async def wait() -> bool:
                message = await DBOS.recv_async(DECISIONS, timeout_seconds=WAIT_S)
                if message is not None:
                    inbox.deliver(message)
                return True

            async def resume(state: PausedState, decisions: dict[str, Decision]) -> PausableResult[Any]:
                return await execute_agent(agent, resume=state, decisions=decisions, **kwargs)

            with use_steps(steps):
                first = await execute_agent(
                    agent, prompt, limits=limits, message_history=message_history, pausable=True, **kwargs
                )
                return await until_done(first, inbox, wait, resume)

        self._workflow = run_workflow
        _NAMES[name] = self

    @property
    def decisions_topic(self) -> str:
        """The ``DBOS.recv`` topic of the decisions a paused run waits for (``send_decisions`` sends on it)."""
        return DECISIONS

    def __repr__(self) -> str:
        return f"DBOSAgent({self.agent.name!r}, name={self.name!r})"

    @overload
    async def run(
        self: DBOSAgent[OutputT, None],
        prompt: str | Sequence[ContentBlockParam],
        *,
        deps: None = None,
        limits: ExecutionLimits | None = None,
        callbacks: ExecuteCallbacks | None = None,
        message_history: Sequence[MessageParam] | None = None,
    ) -> ExecuteResult[OutputT]: ...
    @overload
    async def run(
        self,
        prompt: str | Sequence[ContentBlockParam],
        *,
        deps: DepsT,
        limits: ExecutionLimits | None = None,
        callbacks: ExecuteCallbacks | None = None,
        message_history: Sequence[MessageParam] | None = None,
    ) -> ExecuteResult[OutputT]: ...
    async def run(
        self,
        prompt: str | Sequence[ContentBlockParam],
        *,
        deps: Any = MISSING,
        limits: ExecutionLimits | None = None,
        callbacks: ExecuteCallbacks | None = None,
        message_history: Sequence[MessageParam] | None = None,
    ) -> ExecuteResult[OutputT]:
        """Run the agent as a DBOS workflow (``with SetWorkflowID(...)`` names it); the ``ExecuteResult``.

        Its inputs (prompt, deps, limits, callbacks, history) and result are recorded by DBOS, so they must pickle:
        the callbacks' hooks are module-level functions (a recovered run gets them back by name), not lambdas.

        A call waiting for a decision (a tool with ``requires_approval``, an ``external`` tool) pauses the run: the
        workflow waits, durably, with ``DBOS.recv`` on ``decisions_topic`` (``send_decisions(workflow_id,
        decisions)``), then goes on; the result comes when the execution ends. ``callbacks.on_pause`` runs in the
        workflow at each pause: publish the pending calls there with ``DBOS.set_event`` for an approver to read
        (``DBOS.get_event``).

        Raises:
            TypeError: ``callbacks`` is not an ``ExecuteCallbacks``, or does not pickle.
        """
        _check_callbacks(callbacks)
        result: ExecuteResult[OutputT] = await self._workflow(prompt, deps, limits, message_history, callbacks)
        return result


def _free_name(agent: AgentDefinition[Any, Any], name: object) -> str:
    """``name``, once checked: a non-empty str that no ``DBOSAgent`` of another agent has in this process."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"DBOSAgent needs a non-empty name (it names its workflow and steps), got {name!r}.")
    taken = _NAMES.get(name)
    if taken is not None and taken.agent is not agent:
        raise ValueError(
            f"the name {name!r} is taken by {taken!r}, which wraps another agent: the name names a DBOS workflow "
            "and its steps, and a recovered workflow runs the agent registered under it; give this one its own "
            "name (DBOSAgent(agent, name=...))."
        )
    return name


def _check_callbacks(callbacks: object) -> None:
    """Refuse callbacks DBOS could not record (it pickles a workflow's inputs), before the workflow starts."""
    if callbacks is None:
        return
    if not isinstance(callbacks, ExecuteCallbacks):
        raise TypeError(f"callbacks must be an ExecuteCallbacks, got {type(callbacks).__name__}.")
    try:
        pickle.dumps(callbacks)
    except Exception as exc:  # pickle raises PicklingError, TypeError or AttributeError, by what fails
        raise TypeError(
            f"DBOSAgent.run's callbacks must pickle (DBOS records a workflow's inputs to recover it): give hooks "
            f"that are module-level functions, not lambdas, closures or methods of objects that do not pickle "
            f"({type(exc).__name__}: {exc})."
        ) from None


async def send_decisions(workflow_id: str, decisions: Mapping[str, Decision]) -> None:
    """Send ``decisions`` (call id to ``Approve()``, ``Deny(reason)`` or ``ExternalResult(...)``) to a paused run.

    ``workflow_id`` is the run's DBOS workflow id (``SetWorkflowID``). The message (topic
    ``DBOSAgent.decisions_topic``) is kept in DBOS's database until the run reads it, so it reaches a run that is
    recovering too; the run goes on once every pending call has a decision, which may come in several messages. A
    decision for a call the run does not wait on, or of the wrong kind, is dropped with a warning in the log of the
    process running the workflow, and the run keeps waiting.

    Raises:
        TypeError: ``workflow_id`` is not a str, or ``decisions`` is not a non-empty dict of call ids to decisions
            (checked before anything is sent).
    """
    if not isinstance(workflow_id, str):
        raise TypeError(f"send_decisions takes the run's DBOS workflow id (a str), got {type(workflow_id).__name__}.")
    await DBOS.send_async(workflow_id, decisions_payload(decisions), topic=DECISIONS)

"""``TemporalAgent``: a defined agent whose executions run inside Temporal workflows, durably."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, overload

from temporalio import workflow
from typing_extensions import TypeVar

from .._agent.definition import AgentDefinition
from .._run.arguments import MISSING
from .._run.decision_inbox import DECISIONS, DecisionInbox, until_done
from .._run.execute import execute_agent
from .._run.records import NO_CLIENT, ClientSource, refuse_unsupported
from .._run.steps import use_steps
from .._shared.determinism import use_runtime
from ._activities import build_activities
from ._options import check_activity_config, check_closes, check_tool_activity_config
from ._steps import DEFAULT_ACTIVITY_CONFIG, WORKFLOW_RUNTIME, TemporalSteps

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, MessageParam

    from .._shared.decisions import Decision
    from .._shared.events import ExecuteCallbacks
    from .._shared.limits import ExecutionLimits
    from .._shared.pausing import PausableResult, PausedState
    from .._shared.results import ExecuteResult

__all__ = ["TemporalAgent", "registered"]

OutputT = TypeVar("OutputT", default=Any)
DepsT = TypeVar("DepsT", default=Any)

_REGISTERED: dict[str, TemporalAgent[Any, Any]] = {}


def registered(name: str) -> TemporalAgent[Any, Any]:
    """The ``TemporalAgent`` made with ``name`` in this process.

    Raises:
        LookupError: none was made with that name.
    """
    try:
        return _REGISTERED[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTERED)) or "none"
        raise LookupError(
            f"no TemporalAgent named {name!r} in this worker (known: {known}); make it (TemporalAgent(agent, "
            f"name={name!r})) in a module the worker imports, and pass its activities to Worker(activities=...)."
        ) from None


class TemporalAgent(Generic[OutputT, DepsT]):
    """A defined agent that runs durably on Temporal: its model and helper calls are activities.

    Call ``await durable.run(prompt, deps=...)`` inside a ``@workflow.defn``: the loop (attempts, iterations,
    validation, feedback, limits) runs in the workflow, on workflow time, and each model call and each helper
    call is an activity, recorded in the workflow's history: a workflow that moves to another worker replays
    the history and repeats no call that completed. Give a worker ``durable.activities``.

    Args:
        agent: The agent, from ``define_agent()``.
        name: A stable name, unique in the worker: it prefixes the activities' names, which the workflow
            histories keep (renaming it breaks workflows in flight). Wrapping the same agent again under its name
            replaces the wrapper; another agent under a name in use is refused.
        activity_config: Temporal's activity options for every activity (``start_to_close_timeout``,
            ``heartbeat_timeout``, ``retry_policy``...); default: 10 minutes to close, a 1-minute heartbeat.
        tool_activity_config: Options for one helper tool's activities, by tool name, over ``activity_config``.
        client: The client the worker's model calls use: a client, or a function that makes one (called once,
            in the worker); default: ``use_client``'s, else ``AsyncAnthropic()``.

    Raises:
        TypeError: ``agent`` is not an ``AgentDefinition``; the activity options are not dicts, or an option has
            the wrong type (a timeout not a ``timedelta``, a ``retry_policy`` not a ``RetryPolicy``...).
        ValueError: ``name`` is empty, or another agent's ``TemporalAgent`` has it; an option Temporal does not
            know, a timeout not above zero, no close timeout left (``start_to_close_timeout`` or
            ``schedule_to_close_timeout``); ``tool_activity_config`` names a tool the agent does not have; the
            agent has toolsets (MCP servers) or tools that run a sub-agent (``as_tool()``).
    """

    agent: AgentDefinition[OutputT, DepsT]
    """The agent it runs."""
    name: str
    """The name of its activities."""

    def __init__(
        self,
        agent: AgentDefinition[OutputT, DepsT],
        *,
        name: str,
        activity_config: workflow.ActivityConfig | None = None,
        tool_activity_config: Mapping[str, workflow.ActivityConfig] | None = None,
        client: ClientSource = None,
    ) -> None:
        if not isinstance(agent, AgentDefinition):
            raise TypeError(f"TemporalAgent wraps an agent from define_agent(), got {type(agent).__name__}.")
        refuse_unsupported(agent, "TemporalAgent")
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"TemporalAgent needs a non-empty name (it names its activities), got {name!r}.")
        tools = check_tool_activity_config(tool_activity_config)
        unknown = sorted(tool for tool in tools if agent.helper(tool) is None)
        if unknown:
            have = ", ".join(helper.name for helper in agent.helpers) or "none"
            raise ValueError(
                f"tool_activity_config names tools agent {agent.name!r} does not have: {unknown} "
                f"(its helper tools: {have})."
            )
        model_config: workflow.ActivityConfig = {**DEFAULT_ACTIVITY_CONFIG, **check_activity_config(activity_config)}
        check_closes(model_config, "activity_config")
        tool_configs: dict[str, workflow.ActivityConfig] = {
            tool: {**model_config, **config} for tool, config in tools.items()
        }
        for tool, config in tool_configs.items():
            check_closes(config, f"tool_activity_config[{tool!r}]")
        taken = _REGISTERED.get(name)
        # The workflow sandbox imports the workflow's module again (a new agent object each time): not a collision.
        sandboxed = workflow.unsafe.in_sandbox()
        if taken is not None and taken.agent is not agent and not sandboxed:
            raise ValueError(
                f"the name {name!r} is taken by {taken!r}, which wraps another agent: the name names the activities "
                "of one agent in the worker; give this one its own name (TemporalAgent(agent, name=...))."
            )
        self.agent = agent
        self.name = name
        self._steps = TemporalSteps(name, agent.deps_type, model_config, tool_configs)
        self.activities: list[Callable[..., Any]] = build_activities(agent, name, client)
        """Everything a worker needs to run this agent besides your workflow: ``Worker(activities=...)``."""
        if taken is None or not sandboxed:
            _REGISTERED[name] = self

    @property
    def signal_name(self) -> str:
        """The workflow signal that carries the decisions a paused run waits for (``send_decisions`` sends it)."""
        return DECISIONS

    def __repr__(self) -> str:
        return f"TemporalAgent({self.agent.name!r}, name={self.name!r})"

    @overload
    async def run(
        self: TemporalAgent[OutputT, None],
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
        """Run the agent inside the workflow that calls this, as ``execute_agent`` would; the same result.

        Cancelling the workflow cancels the execution: the call in flight is cancelled and the result is an
        ``ExecuteFailure`` with ``EXECUTION_CANCELLED`` (the workflow then decides what to return).

        A call waiting for a decision (a tool with ``requires_approval``, an ``external`` tool) pauses the run: the
        workflow waits, durably, for the signal ``signal_name`` (``send_decisions(handle, decisions)``), then goes
        on; the result comes when the execution ends. ``callbacks.on_pause`` runs in the workflow at each pause.

        Raises:
            RuntimeError: called outside a workflow (use ``execute_agent`` there).
        """
        if not workflow.in_workflow():
            raise RuntimeError(
                "TemporalAgent.run() runs inside a Temporal workflow (@workflow.defn); outside one, call "
                "execute_agent(durable.agent, ...)."
            )
        abort = asyncio.Event()
        kwargs: dict[str, Any] = {} if deps is MISSING else {"deps": deps}
        common: dict[str, Any] = {"client": NO_CLIENT, "abort_event": abort, "callbacks": callbacks, **kwargs}
        inbox = DecisionInbox(workflow.logger.warning)

        def deliver(message: Any) -> None:
            inbox.deliver(message)

        async def wait() -> bool:
            await workflow.wait_condition(lambda: bool(inbox.arrived) or abort.is_set())
            return not abort.is_set()

        async def resume(state: PausedState, decisions: dict[str, Decision]) -> PausableResult[Any]:
            return await execute_agent(self.agent, resume=state, decisions=decisions, **common)

        async def whole() -> ExecuteResult[Any]:
            first = await execute_agent(
                self.agent, prompt, limits=limits, message_history=message_history, pausable=True, **common
            )
            return await until_done(first, inbox, wait, resume)

        workflow.set_signal_handler(DECISIONS, deliver)  # pyright: ignore[reportUnknownMemberType]
        with use_runtime(WORKFLOW_RUNTIME), use_steps(self._steps):
            task = asyncio.ensure_future(whole())
        while True:
            try:
                return await asyncio.shield(task)
            except asyncio.CancelledError:
                if task.done():
                    raise
                abort.set()  # the workflow was cancelled: the execution stops, and says so in its result

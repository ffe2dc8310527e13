"""The workflow side of a ``TemporalAgent``: workflow time for the loop, activities for its model and tool calls."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from temporalio import workflow
from temporalio.exceptions import ActivityError

from .._api.api_errors import ApiFailure
from .._api.beta import needs_beta
from .._run.records import ModelCallInput, ModelCallOutput, ToolCallOutput, tool_input_type
from .._run.steps import OWN_MODEL, ModelCall, Running, Steps
from .._shared.determinism import Runtime
from .._shared.limits import Interrupted

if TYPE_CHECKING:
    from anthropic.types import Message

    from .._agent.context import RunContext
    from .._agent.remote import RemoteTool
    from .._agent.tools import Helper
    from .._api.model_call import ModelCallFailure
    from .._run.reply import Reply

__all__ = ["DEFAULT_ACTIVITY_CONFIG", "TemporalSteps", "WorkflowRuntime"]

DEFAULT_ACTIVITY_CONFIG: workflow.ActivityConfig = {
    "start_to_close_timeout": timedelta(minutes=10),
    "heartbeat_timeout": timedelta(minutes=1),
}
"""Each activity's options unless the agent's ``activity_config`` (or a tool's) sets them."""


class WorkflowRuntime(Runtime):
    """Workflow time, durable timers, and Temporal's replay-safe ids and random numbers; no threads."""

    inline_sync_calls = True

    def clock(self) -> float:
        return workflow.time()

    def wall_clock(self) -> float:
        return workflow.now().timestamp()

    async def sleep(self, seconds: float) -> None:
        await workflow.sleep(seconds)

    def new_id(self) -> str:
        return workflow.uuid4().hex

    def random(self) -> float:
        return workflow.random().random()


WORKFLOW_RUNTIME = WorkflowRuntime()


class TemporalSteps(Steps):
    """Each model call and each helper call runs as an activity, raced against the abort event and the deadline."""

    def __init__(
        self,
        name: str,
        deps_type: type[Any] | None,
        model_config: workflow.ActivityConfig,
        tool_configs: dict[str, workflow.ActivityConfig],
    ) -> None:
        self.name = name
        self.model_config = model_config
        self.tool_configs = tool_configs
        self.tool_input: Any = tool_input_type(deps_type)

    async def model_call(
        self, execution: Running, params: dict[str, Any], call: ModelCall = OWN_MODEL
    ) -> Message | ModelCallFailure:
        activity = workflow.execute_activity(
            f"{self.name}__model_call",
            ModelCallInput(params=params, alternative=call.alternative, wait_cap=call.wait_cap),
            result_type=ModelCallOutput,
            **self.model_config,
        )
        try:
            output: ModelCallOutput = await execution.guard.run(activity)
        except Interrupted as interruption:
            return interruption
        except ActivityError as exc:
            return ApiFailure(
                cause=exc,
                status_code=None,
                error_type="activity_error",
                request_id=None,
                advice=(
                    f"The model call's activity failed ({_cause(exc)}): see the worker's log, and the activity's "
                    "timeouts and retry policy (TemporalAgent activity_config)."
                ),
            )
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
        if helper is None:
            reply.answer(f"Error: Unknown tool {block.name}", is_error=True)
            return
        call = self.tool_input(
            tool=block.name,
            tool_use_id=block.id,
            input=dict(reply.tool_input),
            attempt=ctx.attempt,
            iteration=ctx.iteration,
            tokens=dataclasses.asdict(ctx.tokens),
            deps=ctx.deps,
        )
        try:
            output: ToolCallOutput = await workflow.execute_activity(
                f"{self.name}__tool_call",
                call,
                result_type=ToolCallOutput,
                **self.tool_configs.get(block.name, self.model_config),
            )
        except ActivityError as exc:
            reply.answer(f"Error: the tool's activity failed ({_cause(exc)}).", is_error=True)
            return
        reply.answer(output.content, is_error=output.is_error)


def _cause(exc: ActivityError) -> str:
    cause = exc.cause
    return f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)

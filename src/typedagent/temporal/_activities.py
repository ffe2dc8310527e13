"""The activities of a ``TemporalAgent``: its model calls and its helper calls, run by a worker.

Each activity runs the loop's own one-place call (``call_model``, ``run_helper``) and hands its outcome back as
JSON (``_payloads``); the workflow side (``_steps``) turns it back into what the loop expects.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any

from temporalio import activity

from .._agent.context import RunContext
from .._run.records import (
    ClientSource,
    ModelCallInput,
    ModelCallOutput,
    StepClient,
    ToolCallOutput,
    run_recorded_helper,
    run_recorded_model_call,
    tool_input_type,
)
from .._shared.results import TokenUsage

if TYPE_CHECKING:
    from .._agent.definition import AgentDefinition

__all__ = ["build_activities"]


@contextlib.asynccontextmanager
async def _heartbeating() -> AsyncGenerator[None]:
    """Heartbeat while the work runs, when the activity has a heartbeat timeout (so a cancel can reach it)."""
    timeout = activity.info().heartbeat_timeout
    if not timeout:
        yield
        return

    async def beat() -> None:
        while True:
            activity.heartbeat()
            await asyncio.sleep(timeout.total_seconds() / 3)

    task = asyncio.ensure_future(beat())
    try:
        yield
    finally:
        task.cancel()


def build_activities(agent: AgentDefinition[Any, Any], name: str, client: ClientSource) -> list[Callable[..., Any]]:
    """The model-call activity, and the helper-call activity when ``agent`` has helpers."""
    clients = StepClient(client)

    async def model_call(call: ModelCallInput) -> ModelCallOutput:
        async with _heartbeating():
            return await run_recorded_model_call(agent, clients, call)

    model_call.__annotations__ = {"call": ModelCallInput, "return": ModelCallOutput}
    found: list[Callable[..., Any]] = [activity.defn(name=f"{name}__model_call")(model_call)]
    if not agent.helpers:
        return found
    input_type = tool_input_type(agent.deps_type)

    async def tool_call(call: Any) -> ToolCallOutput:
        ctx = RunContext(
            deps=call.deps,
            agent_name=agent.name,
            model=agent.model,
            attempt=call.attempt,
            iteration=call.iteration,
            tokens=TokenUsage(**call.tokens),
        )
        async with _heartbeating():
            return await run_recorded_helper(agent, call.tool, call.tool_use_id, call.input, ctx)

    tool_call.__annotations__ = {"call": input_type, "return": ToolCallOutput}
    found.append(activity.defn(name=f"{name}__tool_call")(tool_call))
    return found

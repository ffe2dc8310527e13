"""``AgentWorkflow``: the ready-made workflow that runs a registered ``TemporalAgent`` on a prompt."""

from __future__ import annotations

from typing import Any

from temporalio import workflow

from .._shared.results import ExecuteResult
from ._agent import registered

__all__ = ["AgentWorkflow"]


# Not sandboxed: the sandbox would import typedagent (and the SDK) again for every run, and the loop needs no
# sandbox to be replay-safe: every clock read, sleep, id and random draw goes through the determinism seam.
@workflow.defn(name="typedagent.AgentWorkflow", sandboxed=False)
class AgentWorkflow:
    """Runs the ``TemporalAgent`` named ``agent`` on ``prompt`` (with ``deps``, checked as its ``deps_type``).

    Start it with ``client.execute_workflow(AgentWorkflow.run, args=[name, prompt], ...)`` (or
    ``args=[name, prompt, deps]``); pass ``result_type=ExecuteResult[YourOutput]`` to get the output typed.
    """

    @workflow.run
    async def run(self, agent: str, prompt: str, deps: Any = None) -> ExecuteResult[Any]:
        """Run the agent; its ``ExecuteResult``."""
        durable = registered(agent)
        deps_type = durable.agent.deps_type
        if deps_type is None:
            return await durable.run(prompt)
        return await durable.run(prompt, deps=_typed(deps_type, deps))


def _typed(deps_type: type[Any], deps: Any) -> Any:
    import pydantic

    return pydantic.TypeAdapter(deps_type).validate_python(deps)

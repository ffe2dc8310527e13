"""``AgentWorkflow``: the ready-made workflow that runs a registered ``TemporalAgent`` on a prompt."""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from .._shared.results import ExecuteResult
from ._agent import TemporalAgent, registered

__all__ = ["AgentWorkflow"]


# Not sandboxed: the sandbox would import typedagent (and the SDK) again for every run, and the loop needs no
# sandbox to be replay-safe: every clock read, sleep, id and random draw goes through the determinism seam.
@workflow.defn(name="typedagent.AgentWorkflow", sandboxed=False)
class AgentWorkflow:
    """Runs the ``TemporalAgent`` named ``agent`` on ``prompt`` (with ``deps``, checked as its ``deps_type``).

    Start it with ``client.execute_workflow(AgentWorkflow.run, args=[name, prompt], ...)`` (or
    ``args=[name, prompt, deps]``); pass ``result_type=ExecuteResult[YourOutput]`` to get the output typed.
    An agent name the worker does not know, or deps that are not a valid ``deps_type``, fail the workflow at once
    with a non-retryable ``ApplicationError`` saying which (type ``LookupError`` or ``ValidationError``): no
    worker would do better on a retry.
    """

    @workflow.run
    async def run(self, agent: str, prompt: str, deps: Any = None) -> ExecuteResult[Any]:
        """Run the agent; its ``ExecuteResult``."""
        try:
            durable = registered(agent)
        except LookupError as exc:
            raise ApplicationError(str(exc), type="LookupError", non_retryable=True) from None
        deps_type = durable.agent.deps_type
        if deps_type is None:
            return await durable.run(prompt)
        return await durable.run(prompt, deps=_typed(durable, deps_type, deps))


def _typed(durable: TemporalAgent[Any, Any], deps_type: type[Any], deps: Any) -> Any:
    import pydantic

    try:
        return pydantic.TypeAdapter(deps_type).validate_python(deps)
    except pydantic.ValidationError as exc:
        raise ApplicationError(
            f"the deps of TemporalAgent {durable.name!r} are not a valid {deps_type.__name__}: {exc}. Start the "
            "workflow again with deps that are (args=[name, prompt, deps]).",
            type="ValidationError",
            non_retryable=True,
        ) from None

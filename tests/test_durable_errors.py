"""Bad input to the durable integrations gets a clear error, before anything runs."""

from __future__ import annotations

from datetime import timedelta

import pytest
from support import Triage, triage_agent

from typedagent import OutputTool, define_agent, tool

pytest.importorskip("temporalio", reason="the temporal extra is not installed")
pytest.importorskip("dbos", reason="the dbos extra is not installed")

from typedagent.dbos import DBOSAgent
from typedagent.temporal import TemporalAgent
from typedagent.temporal._agent import registered


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return key


def test_temporal_agent_refuses_what_would_fail_in_the_workflow() -> None:
    """Not an agent, no name, an unknown tool, a timeout that is not a timedelta: each refused with what to do."""
    agent = define_agent(name="errs", model="claude-sonnet-4-6", output=OutputTool(Triage), helpers=[lookup])
    with pytest.raises(TypeError, match="wraps an agent from define_agent"):
        TemporalAgent("agent", name="x")  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
    with pytest.raises(ValueError, match="non-empty name"):
        TemporalAgent(agent, name=" ")
    with pytest.raises(ValueError, match=r"does not have: \['nope'\] \(its helper tools: lookup\)"):
        TemporalAgent(agent, name="errs", tool_activity_config={"nope": {}})
    with pytest.raises(TypeError, match=r"'heartbeat_timeout' must be a datetime.timedelta, got int: 5"):
        TemporalAgent(agent, name="errs", tool_activity_config={"lookup": {"heartbeat_timeout": 5}})  # type: ignore[typeddict-item]  # pyright: ignore[reportArgumentType]
    durable = TemporalAgent(agent, name="errs", activity_config={"start_to_close_timeout": timedelta(seconds=5)})
    assert registered("errs") is durable
    assert repr(durable) == "TemporalAgent('errs', name='errs')"
    assert [getattr(a, "__temporal_activity_definition").name for a in durable.activities] == [
        "errs__model_call",
        "errs__tool_call",
    ]
    with pytest.raises(LookupError, match=r"no TemporalAgent named 'missing' in this worker \(known: .*errs"):
        registered("missing")


async def test_temporal_agent_run_outside_a_workflow_says_what_to_call() -> None:
    """durable.run() outside a workflow is a mistake: the error names execute_agent."""
    durable = TemporalAgent(triage_agent(), name="outside")
    assert len(durable.activities) == 1  # no helpers: only the model-call activity
    with pytest.raises(RuntimeError, match=r"runs inside a Temporal workflow .* call execute_agent\(durable.agent"):
        await durable.run("hi")


def test_dbos_agent_refuses_what_is_not_an_agent() -> None:
    """A DBOSAgent wraps a defined agent."""
    with pytest.raises(TypeError, match="DBOSAgent wraps an agent from define_agent"):
        DBOSAgent("agent")  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
    durable = DBOSAgent(triage_agent(), name="errs-dbos")
    assert repr(durable) == "DBOSAgent('triage', name='errs-dbos')"

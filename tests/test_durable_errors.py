"""Bad input to the durable integrations gets a clear error, before anything runs."""

from __future__ import annotations

import pickle
from contextlib import AbstractAsyncContextManager
from datetime import timedelta
from types import SimpleNamespace
from typing import Any, cast

import pytest
from support import Triage, triage_agent

from typedagent import (
    AgentError,
    AgentErrorCode,
    ApiErrorContext,
    Approve,
    Deny,
    ExecuteCallbacks,
    ExecutePaused,
    ExecutionState,
    ExternalResult,
    OutputTool,
    PendingCall,
    define_agent,
    tool,
)
from typedagent._agent.definition import AgentDefinition
from typedagent._agent.remote import Toolset, ToolsetConnection
from typedagent._run.decision_inbox import DecisionInbox, decisions_payload
from typedagent._shared.pausing import PendingKind

pytest.importorskip("temporalio", reason="the temporal extra is not installed")
pytest.importorskip("dbos", reason="the dbos extra is not installed")

from temporalio.common import Priority, RetryPolicy
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.workflow import ActivityCancellationType

from typedagent.dbos import DBOSAgent
from typedagent.dbos import send_decisions as dbos_send_decisions
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


class _Nowhere(Toolset):
    """A toolset that is never connected (the wrappers refuse it before)."""

    @property
    def label(self) -> str:
        return "nowhere"

    def connection(self) -> AbstractAsyncContextManager[ToolsetConnection]:
        raise AssertionError("never connected")


def test_both_wrappers_refuse_toolsets_and_sub_agents() -> None:
    """Toolsets (MCP servers) and agents made tools (as_tool) are not recorded steps yet: refused, saying why."""
    with_toolset = define_agent(name="mcp", model="claude-sonnet-4-6", output=OutputTool(Triage), helpers=[_Nowhere()])
    delegating = define_agent(
        name="boss", model="claude-sonnet-4-6", output=OutputTool(Triage), helpers=[triage_agent().as_tool()]
    )
    for wrap, wrapper in ((lambda a: TemporalAgent(a, name="refused"), "TemporalAgent"), (DBOSAgent, "DBOSAgent")):
        with pytest.raises(ValueError, match=rf"{wrapper} does not run agents with toolsets \(MCP servers\) yet"):
            wrap(with_toolset)
        with pytest.raises(
            ValueError,
            match=rf"{wrapper} does not run agents that delegate to other agents yet: tool\(s\) \['triage'\]",
        ):
            wrap(delegating)


def _waiting(*calls: tuple[str, str, PendingKind]) -> ExecutePaused:
    pending = tuple(PendingCall(id=id_, name=name, input={}, kind=kind) for id_, name, kind in calls)
    return cast("ExecutePaused", SimpleNamespace(pending=pending))


def test_the_decision_inbox_keeps_what_fits_and_drops_the_rest_with_a_warning() -> None:
    """Decisions may come in parts; a message, an id or a decision that does not fit is dropped, the run waits on."""
    warned: list[str] = []
    inbox = DecisionInbox(warned.append)
    paused = _waiting(("toolu_a", "refund", "approval"), ("toolu_b", "ask", "external"))
    assert inbox.take(paused) is None
    inbox.deliver("approve everything")
    inbox.deliver({"toolu_a": {"approve": "yes"}, 7: {"approve": True}})
    inbox.deliver({"toolu_b": {"approve": True}})
    assert inbox.take(paused) is None
    assert warned == [
        "typedagent: a decisions message that is not an object was dropped: 'approve everything'",
        "typedagent: the decision for 'toolu_a' must be one of "
        '{"approve": true}, {"approve": true, "input": {...}}, {"deny": "reason"}, {"result": ...} or '
        "{\"error\": \"...\"}, got {'approve': 'yes'}. It was dropped; the execution waits for another.",
        "typedagent: a decision for 7, which the paused execution does not wait on, was dropped; it waits on "
        "'toolu_a' (refund, approval), 'toolu_b' (ask, external).",
        "typedagent: call 'toolu_b' (ask) waits for external: decide it with ExternalResult(...); the decision sent "
        "(Approve) was dropped.",
    ]
    inbox.deliver(decisions_payload({"toolu_a": Deny("no")}))
    assert inbox.take(paused) is None  # toolu_b still waits
    inbox.deliver(decisions_payload({"toolu_b": ExternalResult([1, 2])}))
    assert inbox.take(paused) == {"toolu_a": Deny("no"), "toolu_b": ExternalResult([1, 2])}
    assert inbox.decided == {}


def test_decisions_payload_refuses_what_is_no_decision() -> None:
    """send_decisions checks its decisions before sending: keys are call ids, values decisions."""
    with pytest.raises(TypeError, match="non-empty dict of call id"):
        decisions_payload([Approve()])
    with pytest.raises(TypeError, match=r"keyed by call id \(a str, PendingCall.id\), got 3"):
        decisions_payload({3: Approve()})
    assert decisions_payload({"a": Approve(input={"n": 1}), "b": ExternalResult(error="x")}) == {
        "a": {"approve": True, "input": {"n": 1}},
        "b": {"error": "x"},
    }


async def test_dbos_send_decisions_checks_the_workflow_id() -> None:
    """The workflow id is a str (checked before DBOS is asked)."""
    with pytest.raises(TypeError, match=r"takes the run's DBOS workflow id \(a str\), got int"):
        await dbos_send_decisions(7, {"toolu_a": Approve()})  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


def _options_agent() -> AgentDefinition[Triage, None]:
    return define_agent(name="opts", model="claude-sonnet-4-6", output=OutputTool(Triage), helpers=[lookup])


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        (
            {"activity_config": [("start_to_close_timeout", timedelta(seconds=5))]},
            TypeError,
            r"activity_config must be a dict of Temporal's activity options \(workflow.ActivityConfig\), e.g. "
            r"\{'start_to_close_timeout': timedelta\(minutes=5\)\}, got list",
        ),
        (
            {"activity_config": {"start_to_close": timedelta(seconds=5)}},
            ValueError,
            r"activity_config has an option Temporal does not know: 'start_to_close'; its options "
            r"\(workflow.ActivityConfig\) are activity_id, cancellation_type, .*start_to_close_timeout",
        ),
        (
            {"tool_activity_config": {"lookup": {"retry": RetryPolicy(maximum_attempts=2)}}},
            ValueError,
            r"tool_activity_config\['lookup'\] has an option Temporal does not know: 'retry'; its options",
        ),
        (
            {"activity_config": {"retry_policy": {"maximum_attempts": 3}}},
            TypeError,
            r"activity option 'retry_policy' must be a temporalio.common.RetryPolicy, got dict: "
            r"\{'maximum_attempts': 3\} \(write RetryPolicy\(maximum_attempts=3\)\)",
        ),
        (
            {"activity_config": {"retry_policy": RetryPolicy(maximum_attempts=-1)}},
            ValueError,
            r"activity option 'retry_policy' is not a valid RetryPolicy: Maximum attempts cannot be negative",
        ),
        (
            {"activity_config": {"start_to_close_timeout": timedelta(0)}},
            ValueError,
            r"activity option 'start_to_close_timeout' must be more than zero, got 0:00:00",
        ),
        (
            {"activity_config": {"heartbeat_timeout": timedelta(seconds=-1)}},
            ValueError,
            r"activity option 'heartbeat_timeout' must be more than zero",
        ),
        (
            {"activity_config": {"task_queue": 7}},
            TypeError,
            r"activity option 'task_queue' must be a str, got int: 7",
        ),
        (
            {"activity_config": {"cancellation_type": "try_cancel"}},
            TypeError,
            r"activity option 'cancellation_type' must be a workflow.ActivityCancellationType",
        ),
        (
            {"activity_config": {"activity_id": "same"}},
            ValueError,
            r"activity option 'activity_id' cannot be set: typedagent starts many activities .* leave it out",
        ),
        (
            {"activity_config": {"start_to_close_timeout": None}},
            ValueError,
            r"activity_config leaves the activities without start_to_close_timeout or schedule_to_close_timeout "
            r"\(Temporal needs one\)",
        ),
        (
            {"tool_activity_config": {"lookup": {"start_to_close_timeout": None}}},
            ValueError,
            r"tool_activity_config\['lookup'\] leaves the activities without start_to_close_timeout",
        ),
        (
            {"tool_activity_config": [("lookup", {})]},
            TypeError,
            r"tool_activity_config must be a dict of helper tool name to activity options "
            r"\(\{'tool name': .*, got list",
        ),
        (
            {"tool_activity_config": {"lookup": timedelta(seconds=5)}},
            TypeError,
            r"tool_activity_config\['lookup'\] must be a dict of Temporal's activity options .*, got timedelta",
        ),
    ],
)
def test_temporal_agent_checks_each_activity_option_when_it_wraps(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    """A mistyped activity option would fail every workflow task, forever: refused at TemporalAgent(...), saying how."""
    with pytest.raises(error, match=message):
        TemporalAgent(_options_agent(), name="opts-bad", **options)
    with pytest.raises(LookupError):
        registered("opts-bad")  # nothing was registered


def test_temporal_agent_takes_valid_activity_options() -> None:
    """Every option of Temporal's ActivityConfig, with a value of its type, is taken; a tool's over the agent's."""
    durable = TemporalAgent(
        _options_agent(),
        name="opts-good",
        activity_config={
            "start_to_close_timeout": None,
            "schedule_to_close_timeout": timedelta(minutes=2),
            "schedule_to_start_timeout": timedelta(minutes=1),
            "retry_policy": RetryPolicy(maximum_attempts=3),
            "cancellation_type": ActivityCancellationType.TRY_CANCEL,
            "task_queue": "models",
            "summary": "a model call",
            "priority": Priority(priority_key=2),
        },
        tool_activity_config={"lookup": {"heartbeat_timeout": None, "task_queue": "tools"}},
    )
    steps = durable._steps  # pyright: ignore[reportPrivateUsage]
    assert steps.model_config["task_queue"] == "models"
    assert steps.model_config["heartbeat_timeout"] == timedelta(minutes=1)  # the default, kept
    assert steps.tool_configs["lookup"]["task_queue"] == "tools"
    assert steps.tool_configs["lookup"]["heartbeat_timeout"] is None
    assert steps.tool_configs["lookup"]["retry_policy"] == RetryPolicy(maximum_attempts=3)


def test_temporal_agent_names_are_unique_in_a_worker() -> None:
    """A second agent under a name in use would take the first one's activities: refused; the same agent may re-wrap."""
    first = _options_agent()
    durable = TemporalAgent(first, name="opts-unique")
    assert TemporalAgent(first, name="opts-unique") is not durable  # the same agent again: it replaces the wrapper
    with pytest.raises(
        ValueError,
        match=r"the name 'opts-unique' is taken by TemporalAgent\('opts', name='opts-unique'\), which wraps another "
        r"agent: the name names the activities of one agent in the worker; give this one its own name",
    ):
        TemporalAgent(_options_agent(), name="opts-unique")
    assert registered("opts-unique").agent is first


def test_dbos_agent_name_must_be_a_non_empty_str_and_unique() -> None:
    """The name names a DBOS workflow and its steps: a second agent under it would take over the first's recovery."""
    first = _options_agent()
    for bad in ("", "  ", 7):
        with pytest.raises(ValueError, match=r"DBOSAgent needs a non-empty name \(it names its workflow and steps\)"):
            DBOSAgent(first, name=bad)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    DBOSAgent(first, name="dbos-unique")
    DBOSAgent(first, name="dbos-unique")  # the same agent again (a module imported twice): allowed
    with pytest.raises(
        ValueError,
        match=r"the name 'dbos-unique' is taken by DBOSAgent\('opts', name='dbos-unique'\), which wraps another "
        r"agent: .*give this one its own name \(DBOSAgent\(agent, name=\.\.\.\)\)",
    ):
        DBOSAgent(_options_agent(), name="dbos-unique")
    assert DBOSAgent(first).name == "opts"  # the default name: the agent's
    with pytest.raises(ValueError, match=r"the name 'opts' is taken"):
        DBOSAgent(_options_agent())  # another agent named 'opts', under the same default name


def _hook(state: ExecutionState, paused: ExecutePaused) -> None:
    """A module-level hook: pickles by name."""


async def test_dbos_agent_run_refuses_callbacks_that_do_not_pickle() -> None:
    """DBOS records a workflow's inputs with pickle: callbacks must pickle, checked before the workflow starts."""
    durable = DBOSAgent(triage_agent(), name="dbos-callbacks")
    with pytest.raises(TypeError, match=r"callbacks must be an ExecuteCallbacks, got dict"):
        await durable.run("hi", callbacks={"on_pause": _hook})  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
    with pytest.raises(
        TypeError, match=r"DBOSAgent.run's callbacks must pickle .* module-level functions, not lambdas"
    ):
        await durable.run("hi", callbacks=ExecuteCallbacks(on_pause=lambda state, paused: None))
    assert pickle.loads(pickle.dumps(ExecuteCallbacks(on_pause=_hook))).on_pause is _hook


def test_an_agent_error_with_a_cause_crosses_temporals_pydantic_converter() -> None:
    """An AgentError whose cause is an exception crosses Temporal's pydantic converter, the cause as its text.

    The converter writes a workflow's result with pydantic_core.to_json (no schema); a result it cannot write fails
    the workflow task forever.
    """
    error = AgentError(
        code=AgentErrorCode.API_ERROR,
        message="The model call's activity failed",
        context=ApiErrorContext(
            status_code=None, error_type="activity_error", request_id=None, attempt=1, iteration=1, alternatives=()
        ),
        cause=TimeoutError("activity StartToClose timeout"),
    )
    payload = pydantic_data_converter.payload_converter.to_payloads([error])
    [back] = pydantic_data_converter.payload_converter.from_payloads(payload, [AgentError])
    assert isinstance(back, AgentError)
    assert (back.code, back.message, back.context) == (error.code, error.message, error.context)
    assert str(back.cause) == "TimeoutError: activity StartToClose timeout"

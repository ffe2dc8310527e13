"""Pausing at tool calls that wait for a decision, and resuming the same execution: approval, external tools."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from support import GOOD, Triage, assert_api_valid, reflecting, triage_agent

from typedagent import (
    AgentErrorCode,
    Approve,
    Deny,
    ExecuteCallbacks,
    ExecutePaused,
    ExecuteSuccess,
    ExecutionLimits,
    ExecutionState,
    ExternalResult,
    HelperTool,
    OutputRejected,
    PausedState,
    PendingCall,
    RunContext,
    ToolCall,
    ToolResult,
    ValidationConfig,
    execute_agent,
    execute_agent_sync,
    tool,
)
from typedagent.testing import ScriptedClient, output_call, response, submit_call, tool_call

RAN: list[str] = []


@tool
def look(query: str) -> str:
    """Look something up."""
    return f"saw {query}"


@tool(requires_approval=True)
def delete(path: str, force: bool = False) -> str:
    """Delete a file."""
    RAN.append(path)
    return f"deleted {path}{' (forced)' if force else ''}"


@tool(external=True)
def ask_user(question: str) -> str:
    """Ask the user; the answer comes from outside."""
    raise AssertionError("an external tool's function is never called")


RAW_EXTERNAL = HelperTool(
    definition={
        "name": "ticket_status",
        "description": "The ticket system's status of a ticket.",
        "input_schema": {"type": "object", "properties": {"ticket": {"type": "string"}}, "required": ["ticket"]},
    },
    handler=None,
)


@pytest.fixture(autouse=True)
def _forget_runs() -> None:
    RAN.clear()


def _agent(**overrides: Any) -> Any:
    return triage_agent(helpers=[look, delete, ask_user, RAW_EXTERNAL], **overrides)


def _results(message: Any) -> list[dict[str, Any]]:
    return [block for block in message["content"] if block["type"] == "tool_result"]


async def _paused(client: ScriptedClient, **kwargs: Any) -> ExecutePaused:
    result = await execute_agent(_agent(), "Ticket: disk full", client=client, pausable=True, **kwargs)
    assert isinstance(result, ExecutePaused), result
    return result


async def test_pausing_approval_call_pauses_after_every_other_call_of_the_response_ran() -> None:
    """The other helper calls of the response run; the approval call waits; nothing is sent back yet."""
    client = ScriptedClient(
        [response(tool_call("look", {"query": "disk"}), tool_call("delete", {"path": "/tmp/a"})), output_call(GOOD)]
    )
    paused = await _paused(client)
    assert paused.status == "paused"
    assert paused.ok is False
    assert paused.pending == (PendingCall(id="toolu_01_002", name="delete", input={"path": "/tmp/a"}, kind="approval"),)
    assert paused.state.pending == paused.pending
    assert RAN == []
    assert len(client.requests) == 1
    assert paused.metadata.pauses == 1
    assert paused.metadata.iterations == 1
    assert paused.metadata.tool_calls == 1  # look ran; delete did not
    last = paused.state.messages[-1]
    assert last["role"] == "assistant"
    assert [block["name"] for block in last["content"]] == ["look", "delete"]  # type: ignore[index]


async def test_pausing_resume_approve_answers_every_call_in_one_message_and_goes_on() -> None:
    """On resume the approved call runs, and all the response's results go back together, in block order."""
    client = ScriptedClient(
        [response(tool_call("look", {"query": "disk"}), tool_call("delete", {"path": "/tmp/a"})), output_call(GOOD)]
    )
    paused = await _paused(client)
    result = await execute_agent(_agent(), resume=paused.state, decisions={"toolu_01_002": Approve()}, client=client)
    assert isinstance(result, ExecuteSuccess)
    assert result.output == GOOD
    assert RAN == ["/tmp/a"]
    sent = client.requests[1]["messages"]
    assert sent[:2] == paused.state.messages
    assert sent[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01_001", "content": "saw disk"},
            {"type": "tool_result", "tool_use_id": "toolu_01_002", "content": "deleted /tmp/a"},
        ],
    }
    assert_api_valid(result, client)
    meta = result.metadata
    assert (meta.pauses, meta.iterations, meta.tool_calls, len(meta.attempts)) == (1, 2, 2, 1)
    assert meta.tokens.total == 30  # both responses, one before the pause and one after


async def test_pausing_deny_sends_the_reason_as_the_tools_error() -> None:
    """``Deny(reason)``: the tool does not run; the model reads the reason as that call's error."""
    client = ScriptedClient([tool_call("delete", {"path": "/etc"}), output_call(GOOD)])
    paused = await _paused(client)
    result = await execute_agent(
        _agent(), resume=paused.state, decisions={paused.pending[0].id: Deny("not /etc")}, client=client
    )
    assert result.ok
    assert RAN == []
    assert _results(client.requests[1]["messages"][-1]) == [
        {"type": "tool_result", "tool_use_id": "toolu_01_001", "content": "Error: not /etc", "is_error": True}
    ]
    assert result.metadata.tool_calls == 0  # a denied call never ran


async def test_pausing_deny_without_a_reason_says_the_user_did_not_approve() -> None:
    """``Deny()`` (or a blank reason) tells the model the call was not approved."""
    client = ScriptedClient([tool_call("delete", {"path": "/a"}), output_call(GOOD)])
    paused = await _paused(client)
    await execute_agent(_agent(), resume=paused.state, decisions={paused.pending[0].id: Deny("  ")}, client=client)
    assert _results(client.requests[1]["messages"][-1])[0]["content"] == (
        "Error: The user did not approve this tool call."
    )


async def test_pausing_approve_with_edited_input_runs_the_edit() -> None:
    """``Approve(input=...)`` runs the tool with the person's arguments; the model's turn stays as it was."""
    client = ScriptedClient([tool_call("delete", {"path": "/"}), output_call(GOOD)])
    paused = await _paused(client)
    edit = Approve(input={"path": "/tmp/safe", "force": True})
    result = await execute_agent(_agent(), resume=paused.state, decisions={"toolu_01_001": edit}, client=client)
    assert result.ok
    assert RAN == ["/tmp/safe"]
    sent = client.requests[1]["messages"]
    assert sent[1]["content"][0]["input"] == {"path": "/"}
    assert _results(sent[-1])[0]["content"] == "deleted /tmp/safe (forced)"


async def test_pausing_edited_input_that_fails_validation_is_the_calls_error() -> None:
    """Edited arguments are validated as the model's: bad ones reach the model as that call's error."""
    client = ScriptedClient([tool_call("delete", {"path": "/a"}), output_call(GOOD)])
    paused = await _paused(client)
    edit = Approve(input={"path": 3})
    result = await execute_agent(_agent(), resume=paused.state, decisions={"toolu_01_001": edit}, client=client)
    assert result.ok
    assert RAN == []
    error = _results(client.requests[1]["messages"][-1])[0]
    assert error["is_error"] is True
    assert error["content"].startswith(
        "Error: invalid input for tool 'delete':\n- path: Input should be a valid string"
    )


async def test_pausing_external_tools_pause_and_take_their_result_from_outside() -> None:
    """``tool(external=True)`` and ``HelperTool(handler=None)`` calls wait; ``ExternalResult`` answers them."""
    client = ScriptedClient(
        [
            response(tool_call("ask_user", {"question": "which disk?"}), tool_call("ticket_status", {"ticket": "T-1"})),
            output_call(GOOD),
        ]
    )
    paused = await _paused(client)
    assert [(call.name, call.kind) for call in paused.pending] == [
        ("ask_user", "external"),
        ("ticket_status", "external"),
    ]
    decisions = {
        "toolu_01_001": ExternalResult("the second one"),
        "toolu_01_002": ExternalResult(error="the ticket system is down"),
    }
    result = await execute_agent(_agent(), resume=paused.state, decisions=decisions, client=client)
    assert result.ok
    assert _results(client.requests[1]["messages"][-1]) == [
        {"type": "tool_result", "tool_use_id": "toolu_01_001", "content": "the second one"},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01_002",
            "content": "Error: the ticket system is down",
            "is_error": True,
        },
    ]


async def test_pausing_external_result_is_rendered_like_a_helpers_return_value() -> None:
    """A dict (or a model) from outside goes to the model as JSON, capped like any result."""
    client = ScriptedClient([tool_call("ticket_status", {"ticket": "T-1"}), output_call(GOOD)])
    paused = await _paused(client)
    value = ExternalResult({"status": "open", "owner": "ada"})
    await execute_agent(_agent(), resume=paused.state, decisions={"toolu_01_001": value}, client=client)
    assert _results(client.requests[1]["messages"][-1])[0]["content"] == '{"status":"open","owner":"ada"}'


async def test_pausing_external_call_with_invalid_input_is_answered_at_once() -> None:
    """A ``tool(external=True)`` call whose input does not fit its signature never waits: the model reads why."""
    client = ScriptedClient([tool_call("ask_user", {"question": 5}), output_call(GOOD)])
    result = await execute_agent(_agent(), "Ticket", client=client, pausable=True)
    assert result.ok
    error = _results(client.requests[1]["messages"][-1])[0]
    assert error["is_error"] is True
    assert "invalid input for tool 'ask_user'" in error["content"]


async def test_pausing_predicate_decides_which_calls_need_approval() -> None:
    """``requires_approval=(ctx, args)``: given the run context and the validated arguments, per call."""
    seen: list[tuple[str, dict[str, Any]]] = []

    def outside_tmp(ctx: RunContext[Any], args: dict[str, Any]) -> bool:
        seen.append((ctx.agent_name, args))
        return not str(args["path"]).startswith("/tmp/")

    @tool(requires_approval=outside_tmp)
    def remove(path: str, recursive: bool = False) -> str:
        """Remove a path."""
        return f"removed {path}"

    agent = triage_agent(helpers=[remove])
    client = ScriptedClient(
        [response(tool_call("remove", {"path": "/tmp/x"}), tool_call("remove", {"path": "/home"})), output_call(GOOD)]
    )
    paused = await execute_agent(agent, "Ticket", client=client, pausable=True)
    assert isinstance(paused, ExecutePaused)
    assert [call.input for call in paused.pending] == [{"path": "/home"}]
    assert seen == [
        ("triage", {"path": "/tmp/x", "recursive": False}),
        ("triage", {"path": "/home", "recursive": False}),
    ]
    assert paused.metadata.tool_calls == 1


async def test_pausing_async_predicate_and_a_predicate_that_raises() -> None:
    """An async predicate is awaited; one that raises makes the call wait for approval, with a warning."""

    async def never(ctx: RunContext[Any], args: dict[str, Any]) -> bool:
        return False

    def broken(ctx: RunContext[Any], args: dict[str, Any]) -> bool:
        raise RuntimeError("no policy loaded")

    safe = HelperTool(
        definition={"name": "safe", "input_schema": {"type": "object"}}, handler=lambda _: "ok", requires_approval=never
    )
    risky = HelperTool(
        definition={"name": "risky", "input_schema": {"type": "object"}},
        handler=lambda _: "ok",
        requires_approval=broken,
    )
    agent = triage_agent(helpers=[safe, risky])
    client = ScriptedClient([response(tool_call("safe"), tool_call("risky")), output_call(GOOD)])
    paused = await execute_agent(agent, "Ticket", client=client, pausable=True)
    assert isinstance(paused, ExecutePaused)
    assert [call.name for call in paused.pending] == ["risky"]
    assert paused.metadata.warnings == (
        "the requires_approval predicate of tool 'risky' raised RuntimeError: no policy loaded; the call waits for "
        "approval, as if it had said so.",
    )


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_pausing_approve_callback_decides_inline_and_never_pauses(kind: str) -> None:
    """``approve=``: each approval call is decided as it comes; the result is an ordinary ``ExecuteResult``."""
    asked: list[PendingCall] = []

    def decide(call: PendingCall) -> Approve | Deny:
        asked.append(call)
        return Approve() if call.input["path"].startswith("/tmp") else Deny("only /tmp")

    async def decide_async(call: PendingCall) -> Approve | Deny:
        return decide(call)

    client = ScriptedClient(
        [response(tool_call("delete", {"path": "/tmp/a"}), tool_call("delete", {"path": "/etc"})), output_call(GOOD)]
    )
    agent = triage_agent(helpers=[look, delete])
    result = await execute_agent(agent, "Ticket", client=client, approve=decide if kind == "sync" else decide_async)
    assert result.ok
    assert [call.input for call in asked] == [{"path": "/tmp/a"}, {"path": "/etc"}]
    assert RAN == ["/tmp/a"]
    assert [r["content"] for r in _results(client.requests[1]["messages"][-1])] == [
        "deleted /tmp/a",
        "Error: only /tmp",
    ]
    assert result.metadata.pauses == 0


@pytest.mark.parametrize(
    ("answer", "recorded"),
    [
        (RuntimeError("approver down"), ("RuntimeError", "approver down")),
        ("yes", ("TypeError", "returned 'yes', not Approve() or Deny(reason)")),
    ],
)
async def test_pausing_approve_callback_that_fails_denies_the_call(answer: object, recorded: tuple[str, str]) -> None:
    """An ``approve`` callback that raises or answers something else never approves: denied, and recorded."""

    def approver(call: PendingCall) -> Any:
        if isinstance(answer, Exception):
            raise answer
        return answer

    client = ScriptedClient([tool_call("delete", {"path": "/a"}), output_call(GOOD)])
    result = await execute_agent(triage_agent(helpers=[delete]), "Ticket", client=client, approve=approver)
    assert result.ok
    assert RAN == []
    assert _results(client.requests[1]["messages"][-1])[0]["is_error"] is True
    (error,) = result.metadata.callback_errors
    assert error.callback.startswith("approve (")
    assert (error.error_type, error.message) == recorded


@pytest.mark.parametrize(
    ("helpers", "kwargs", "message"),
    [
        ([delete], {}, "has tools that need approval ('delete'): pass execute_agent(..., approve=callback)"),
        ([ask_user], {}, "has external tools ('ask_user')"),
        ([ask_user], {"approve": lambda call: Approve()}, "pass execute_agent(..., pausable=True)"),
    ],
)
async def test_pausing_tools_that_wait_need_pausable_or_approve(
    helpers: list[Any], kwargs: dict[str, Any], message: str
) -> None:
    """Approval tools with neither ``pausable`` nor ``approve``, or external tools without ``pausable``: ValueError."""
    client = ScriptedClient([output_call(GOOD)])
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        await execute_agent(triage_agent(helpers=helpers), "Ticket", client=client, **kwargs)
    assert client.requests == []


async def test_pausing_decisions_are_checked_before_anything_is_sent() -> None:
    """Missing, unknown and wrong-kind decisions are ValueErrors; a wrong type is a TypeError; nothing is sent."""
    client = ScriptedClient(
        [response(tool_call("delete", {"path": "/a"}), tool_call("ask_user", {"question": "?"})), output_call(GOOD)]
    )
    paused = await _paused(client)
    state, agent = paused.state, _agent()
    cases: list[tuple[Any, type[Exception], str]] = [
        ({"toolu_01_001": Approve()}, ValueError, "no decision for 'toolu_01_002' (ask_user, external)"),
        ({"toolu_01_001": Approve(), "toolu_01_002": ExternalResult(1), "nope": Deny()}, ValueError, "'nope'"),
        ({"toolu_01_001": ExternalResult(1), "toolu_01_002": ExternalResult(1)}, ValueError, "waits for approval"),
        ({"toolu_01_001": Approve(), "toolu_01_002": Approve()}, ValueError, "is an external tool's"),
        ({"toolu_01_001": True, "toolu_01_002": ExternalResult(1)}, TypeError, "must be Approve()"),
        ([("toolu_01_001", Approve())], TypeError, "decisions must be a dict"),
    ]
    for decisions, error, text in cases:
        with pytest.raises(error) as raised:
            await execute_agent(agent, resume=state, decisions=decisions, client=client)
        assert text in str(raised.value)
    assert len(client.requests) == 1


async def test_pausing_resume_arguments_are_checked() -> None:
    """A resumed execution takes no prompt; ``decisions`` needs ``resume``; ``resume`` needs a ``PausedState``."""
    agent = _agent()
    with pytest.raises(TypeError, match="drop prompt and message_history"):
        await execute_agent(agent, "again", resume=await _paused_state(), decisions={})  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="decisions= goes with resume=state"):
        await execute_agent(agent, "Ticket", decisions={}, client=ScriptedClient())  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="resume must be a PausedState"):
        await execute_agent(agent, resume="{}", decisions={})  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="pausable must be True or False"):
        await execute_agent(agent, "Ticket", pausable="yes")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="approve must be a callable"):
        await execute_agent(agent, "Ticket", approve="always")  # type: ignore[call-overload]


async def _paused_state() -> PausedState:
    return (await _paused(ScriptedClient([tool_call("delete", {"path": "/a"})]))).state


async def test_pausing_resumed_execution_continues_the_same_attempt_with_its_counters() -> None:
    """Attempts, iterations, usage, cost and records carry on: the final metadata covers the whole execution."""
    client = ScriptedClient(
        [
            output_call({"severity": 9, "summary": "x"}),  # rejected: attempt 1 ends
            tool_call("look", {"query": "a"}),
            tool_call("delete", {"path": "/a"}),  # attempt 2, iteration 2: pauses
            output_call(GOOD),
        ]
    )
    paused = await _paused(client)
    assert [record.outcome for record in paused.metadata.attempts] == [AgentErrorCode.VALIDATION_FAILED]
    decisions = {paused.pending[0].id: Approve()}
    result = await execute_agent(_agent(), resume=paused.state, decisions=decisions, client=client)
    assert isinstance(result, ExecuteSuccess)
    meta = result.metadata
    assert [(r.number, r.iterations, r.outcome) for r in meta.attempts] == [
        (1, 1, AgentErrorCode.VALIDATION_FAILED),
        (2, 3, AgentErrorCode.SUCCESS),
    ]
    assert meta.iterations == 4
    assert meta.tokens.total == 60
    assert meta.attempts[1].tokens.total == 45
    assert meta.cost_usd == pytest.approx(4 * (10 * 3 + 5 * 15) / 1e6)
    assert meta.tool_calls == 2
    output_id = meta.messages[-2]["content"][0]["id"]  # type: ignore[index]
    assert meta.messages == [
        *client.requests[-1]["messages"],
        meta.messages[-2],
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": output_id, "content": "Output accepted."}]},
    ]


async def test_pausing_limits_carry_on_and_limits_on_resume_replace_them() -> None:
    """The saved limits apply after resume (the request budget spent before counts); ``limits=`` replaces them."""
    script = [tool_call("delete", {"path": "/a"}), tool_call("look", {"query": "b"}), output_call(GOOD)]
    client = ScriptedClient(script)
    paused = await _paused(client, limits=ExecutionLimits(max_requests=2))
    assert paused.state.limits == ExecutionLimits(max_requests=2)
    failed = await execute_agent(_agent(), resume=paused.state, decisions={"toolu_01_001": Approve()}, client=client)
    assert not failed.ok
    assert failed.status == "failure"
    assert failed.error.code is AgentErrorCode.REQUEST_LIMIT_EXCEEDED  # type: ignore[union-attr]
    again = ScriptedClient(script).skip(1)
    raised = await execute_agent(
        _agent(), resume=paused.state, decisions={"toolu_01_001": Approve()}, client=again, limits=ExecutionLimits()
    )
    assert raised.ok


async def test_pausing_timeout_counts_running_time_not_the_time_paused() -> None:
    """``timeout_s`` is the execution's running time: hours paused do not use it up."""
    client = ScriptedClient([tool_call("delete", {"path": "/a"}), output_call(GOOD)])
    paused = await _paused(client, limits=ExecutionLimits(timeout_s=1.5))
    assert paused.state.elapsed_s < 1.5
    await asyncio.sleep(1.6)  # paused for longer than the whole deadline
    result = await execute_agent(_agent(), resume=paused.state, decisions={"toolu_01_001": Approve()}, client=client)
    assert result.ok
    assert result.metadata.latency_ms < 1500


async def test_pausing_a_deadline_already_spent_on_resume_times_out_before_any_call() -> None:
    """A resumed execution whose running time is past its (new) deadline fails with TIMEOUT; its calls are answered."""
    client = ScriptedClient([tool_call("delete", {"path": "/a"}), output_call(GOOD)])
    paused = await _paused(client)
    await asyncio.sleep(0.01)
    tight = ExecutionLimits(timeout_s=paused.state.elapsed_s / 2)
    result = await execute_agent(
        _agent(), resume=paused.state, decisions={"toolu_01_001": Approve()}, client=client, limits=tight
    )
    assert not result.ok
    assert result.error.code is AgentErrorCode.TIMEOUT  # type: ignore[union-attr]
    assert RAN == []
    assert len(client.requests) == 1
    last = result.metadata.messages[-1]
    assert _results(last)[0]["content"] == "Error: not run: the execution stopped before this tool ran."


async def test_pausing_abort_event_set_before_resume_cancels_with_phase_tool() -> None:
    """An abort event already set cancels the resumed execution before the decided calls run."""
    client = ScriptedClient([tool_call("delete", {"path": "/a"}), output_call(GOOD)])
    paused = await _paused(client)
    stop = asyncio.Event()
    stop.set()
    result = await execute_agent(
        _agent(), resume=paused.state, decisions={"toolu_01_001": Approve()}, client=client, abort_event=stop
    )
    assert not result.ok
    assert result.error.code is AgentErrorCode.EXECUTION_CANCELLED  # type: ignore[union-attr]
    assert result.error.context.phase == "tool"  # type: ignore[union-attr]
    assert RAN == []
    assert_api_valid(result, client)


async def test_pausing_a_resumed_execution_can_pause_again() -> None:
    """Each pause hands over a new state of the same execution (same id); the pauses add up."""
    client = ScriptedClient(
        [tool_call("delete", {"path": "/a"}), tool_call("ask_user", {"question": "sure?"}), output_call(GOOD)]
    )
    first = await _paused(client)
    second = await execute_agent(_agent(), resume=first.state, decisions={"toolu_01_001": Approve()}, client=client)
    assert isinstance(second, ExecutePaused)
    assert second.state.id == first.state.id
    assert (second.state.pauses, second.metadata.pauses) == (2, 2)
    assert second.pending[0].name == "ask_user"
    decisions = {second.pending[0].id: ExternalResult("yes")}
    done = await execute_agent(_agent(), resume=second.state, decisions=decisions, client=client)
    assert done.ok
    assert done.metadata.pauses == 2
    assert done.metadata.iterations == 3
    assert RAN == ["/a"]


async def test_pausing_output_in_the_same_response_is_validated_on_resume() -> None:
    """An output call next to a waiting call is judged after the decisions: its validators run on resume."""
    checked: list[Triage] = []

    def high_enough(out: Triage) -> None:
        checked.append(out)
        if out.severity < 2:
            raise OutputRejected("severity must be at least 2")

    agent = _agent(validators=[high_enough])
    client = ScriptedClient(
        [
            response(tool_call("delete", {"path": "/a"}), output_call(Triage(severity=1, summary="x"))),
            output_call(GOOD),
        ]
    )
    paused = await execute_agent(agent, "Ticket", client=client, pausable=True)
    assert isinstance(paused, ExecutePaused)
    assert checked == []
    assert paused.metadata.attempts == ()
    result = await execute_agent(agent, resume=paused.state, decisions={"toolu_01_001": Approve()}, client=client)
    assert result.ok
    assert [out.severity for out in checked] == [1, 2]
    first_answer = _results(client.requests[1]["messages"][-1])
    assert first_answer[0]["content"] == "deleted /a"
    assert first_answer[1]["is_error"] is True
    assert "severity must be at least 2" in first_answer[1]["content"]
    assert [r.outcome for r in result.metadata.attempts] == [AgentErrorCode.VALIDATION_FAILED, AgentErrorCode.SUCCESS]


async def test_pausing_in_reflection_mode_before_submit() -> None:
    """Reflection: a waiting call before ``submit`` pauses; the preview and the submit are handled on resume."""
    agent = _agent(output=reflecting())
    client = ScriptedClient([response(tool_call("delete", {"path": "/a"}), output_call(GOOD), submit_call())])
    paused = await execute_agent(agent, "Ticket", client=client, pausable=True)
    assert isinstance(paused, ExecutePaused)
    restored = PausedState.from_json(paused.state.to_json())
    result = await execute_agent(agent, resume=restored, decisions={"toolu_01_001": Approve()}, client=client)
    assert isinstance(result, ExecuteSuccess)
    assert result.output == GOOD
    assert [block["content"] for block in _results(result.metadata.messages[-1])] == [
        "deleted /a",
        "severity 2: VPN drops hourly",
        "Output accepted.",
    ]


async def test_pausing_reflection_candidate_of_an_earlier_response_survives_the_pause() -> None:
    """The reflection candidate kept before the pause is the one ``submit`` validates after it."""
    agent = _agent(output=reflecting())
    client = ScriptedClient([output_call(GOOD), tool_call("delete", {"path": "/a"}), submit_call()])
    paused = await execute_agent(agent, "Ticket", client=client, pausable=True)
    assert isinstance(paused, ExecutePaused)
    restored = PausedState.from_json(paused.state.to_json())
    result = await execute_agent(agent, resume=restored, decisions={paused.pending[0].id: Deny()}, client=client)
    assert isinstance(result, ExecuteSuccess)
    assert result.output == GOOD


async def test_pausing_callbacks_mark_the_pause_and_the_resume() -> None:
    """``on_pause`` gets the paused result, ``on_resume`` the state; each tool call is announced and answered once."""
    events: list[str] = []

    def record(state: ExecutionState, event: Any) -> None:
        match event:
            case ExecutePaused(pending=pending):
                events.append(f"pause {[call.name for call in pending]} attempt {state.attempt}")
            case PausedState():
                events.append(f"resume {event.pauses} attempt {state.attempt} iteration {state.iteration}")
            case ToolCall(name=name):
                events.append(f"call {name}")
            case ToolResult(name=name):
                events.append(f"result {name}")
            case _:
                events.append(type(event).__name__)

    callbacks = ExecuteCallbacks(
        on_attempt_start=record, on_tool_call=record, on_tool_result=record, on_pause=record, on_resume=record
    )
    client = ScriptedClient(
        [response(tool_call("look", {"query": "a"}), tool_call("delete", {"path": "/a"})), output_call(GOOD)]
    )
    paused = await _paused(client, callbacks=callbacks)
    await execute_agent(
        _agent(), resume=paused.state, decisions={"toolu_01_002": Approve()}, client=client, callbacks=callbacks
    )
    assert events == [
        "AttemptStart",
        "call look",
        "call delete",
        "pause ['delete'] attempt 1",
        "resume 1 attempt 1 iteration 1",
        "result look",
        "result delete",
        "call final_output",
        "result final_output",
    ]


async def test_pausing_callback_errors_and_warnings_of_earlier_segments_are_kept() -> None:
    """``metadata.callback_errors`` covers the whole execution, the segments before the pause included."""

    def broken(state: ExecutionState, event: Any) -> None:
        raise RuntimeError("hook down")

    client = ScriptedClient([tool_call("delete", {"path": "/a"}), output_call(GOOD)])
    paused = await _paused(client, callbacks=ExecuteCallbacks(on_attempt_start=broken))
    result = await execute_agent(_agent(), resume=paused.state, decisions={"toolu_01_001": Approve()}, client=client)
    assert [error.message for error in result.metadata.callback_errors] == ["hook down"]


async def test_pausing_state_is_a_value_that_resumes_any_number_of_times() -> None:
    """Resuming never changes the state: the same state resumed twice, with other decisions, runs twice."""
    client = ScriptedClient([tool_call("delete", {"path": "/a"}), output_call(GOOD)])
    paused = await _paused(client)
    before = paused.state.to_json()
    approved = await execute_agent(
        _agent(), resume=paused.state, decisions={"toolu_01_001": Approve()}, client=ScriptedClient([output_call(GOOD)])
    )
    denied = await execute_agent(
        _agent(),
        resume=paused.state,
        decisions={"toolu_01_001": Deny("no")},
        client=ScriptedClient([output_call(GOOD)]),
    )
    assert approved.ok
    assert denied.ok
    assert paused.state.to_json() == before
    assert RAN == ["/a"]


async def test_pausing_tool_call_limit_counts_the_calls_that_wait_for_approval() -> None:
    """``max_tool_calls``: a response whose calls (the approval ones included) would pass it fails before any runs."""
    client = ScriptedClient([response(tool_call("look", {"query": "a"}), tool_call("delete", {"path": "/a"}))])
    result = await execute_agent(
        _agent(), "Ticket", client=client, pausable=True, limits=ExecutionLimits(max_tool_calls=1)
    )
    assert not result.ok
    assert result.status == "failure"
    assert RAN == []


def test_pausing_sync_wrapper_pauses_and_resumes() -> None:
    """``execute_agent_sync`` takes the same pausing arguments."""
    client = ScriptedClient([tool_call("delete", {"path": "/a"}), output_call(GOOD)])
    paused = execute_agent_sync(_agent(), "Ticket", client=client, pausable=True)
    assert isinstance(paused, ExecutePaused)
    result = execute_agent_sync(_agent(), resume=paused.state, decisions={"toolu_01_001": Approve()}, client=client)
    assert result.ok
    inline = execute_agent_sync(
        triage_agent(helpers=[delete]),
        "Ticket",
        client=ScriptedClient([tool_call("delete", {"path": "/b"}), output_call(GOOD)]),
        approve=lambda call: Approve(),
    )
    assert inline.ok
    assert RAN == ["/a", "/b"]


async def test_pausing_paused_result_metadata_holds_the_conversation_so_far() -> None:
    """``ExecutePaused.metadata.messages`` is the conversation up to the pause: valid to send once answered."""
    client = ScriptedClient([tool_call("delete", {"path": "/a"})])
    paused = await _paused(client)
    assert paused.metadata.messages == paused.state.messages
    assert json.loads(paused.state.to_json())["conversation"] == paused.state.messages


async def test_pausing_max_iterations_still_bounds_a_resumed_attempt() -> None:
    """The attempt's iterations before the pause count against ``max_iterations_per_attempt`` after it."""
    agent = _agent(validation=ValidationConfig(max_attempts=1, max_iterations_per_attempt=2))
    client = ScriptedClient([tool_call("delete", {"path": "/a"}), tool_call("look", {"query": "b"}), output_call(GOOD)])
    paused = await execute_agent(agent, "Ticket", client=client, pausable=True)
    assert isinstance(paused, ExecutePaused)
    result = await execute_agent(agent, resume=paused.state, decisions={"toolu_01_001": Approve()}, client=client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.MAX_ITERATIONS  # type: ignore[union-attr]
    assert len(client.requests) == 2


async def test_pausing_attempt_in_progress_finishes_even_if_max_attempts_was_lowered() -> None:
    """The paused attempt always goes on; a ``max_attempts`` lowered since only stops the attempts after it."""
    client = ScriptedClient(
        [
            output_call({"severity": 9, "summary": "x"}),
            tool_call("delete", {"path": "/a"}),
            output_call({"severity": 8, "summary": "y"}),
        ]
    )
    paused = await _paused(client)
    assert [r.number for r in paused.metadata.attempts] == [1]
    lowered = _agent(validation=ValidationConfig(max_attempts=1))
    result = await execute_agent(
        lowered, resume=paused.state, decisions={paused.pending[0].id: Approve()}, client=client
    )
    assert not result.ok
    assert result.error.code is AgentErrorCode.VALIDATION_FAILED  # type: ignore[union-attr]
    assert [r.number for r in result.metadata.attempts] == [1, 2]
    assert len(client.requests) == 3


async def test_pausing_abort_while_an_approved_call_runs_on_resume_abandons_it() -> None:
    """An abort while a decided call runs ends the resumed execution as cancelled; the call is answered abandoned."""

    @tool(requires_approval=True)
    async def slow_delete(path: str) -> str:
        """Delete a file, slowly."""
        await asyncio.sleep(5)
        return "deleted"

    agent = triage_agent(helpers=[slow_delete])
    client = ScriptedClient([tool_call("slow_delete", {"path": "/a"}), output_call(GOOD)])
    paused = await execute_agent(agent, "Ticket", client=client, pausable=True)
    assert isinstance(paused, ExecutePaused)
    stop = asyncio.Event()
    asyncio.get_running_loop().call_later(0.2, stop.set)
    started = time.perf_counter()
    result = await execute_agent(
        agent, resume=paused.state, decisions={paused.pending[0].id: Approve()}, client=client, abort_event=stop
    )
    assert time.perf_counter() - started < 2
    assert not result.ok
    assert result.error.code is AgentErrorCode.EXECUTION_CANCELLED  # type: ignore[union-attr]
    answer = _results(result.metadata.messages[-1])[0]
    assert answer["is_error"] is True
    assert answer["content"].startswith("Error: abandoned: the execution stopped")
    assert_api_valid(result, client)

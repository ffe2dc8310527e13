"""The stop-reason table: every value the SDK knows is classified once; unknown values fail by name."""

from __future__ import annotations

import typing
from typing import Any

import pytest
from anthropic.types import StopReason
from anthropic.types.beta import BetaStopReason
from support import GOOD, assert_api_valid, results_of, run, triage_agent
from test_sdk_path import message, sdk_client

from typedagent import AgentErrorCode, ApiErrorContext, AttemptOutcome, execute_agent, tool
from typedagent._run.stop_reasons import STOP_REASON_STEPS, UNKNOWN_STOP_REASON, step_for
from typedagent.testing import ScriptedClient, output_call, response, text, tool_call


@tool
async def lookup(query: str) -> str:
    """Look something up."""
    return f"found {query}"


def test_stop_reasons_table_covers_the_sdk_literals() -> None:
    """Every value of StopReason and BetaStopReason has exactly one step, and the table holds nothing else."""
    known = set(typing.get_args(StopReason)) | set(typing.get_args(BetaStopReason))
    assert set(STOP_REASON_STEPS) == known
    for reason, step in STOP_REASON_STEPS.items():
        assert step.kind in ("run_tools", "resume", "end_attempt", "fail"), reason
        assert (step.code is None) == (step.kind in ("run_tools", "resume")), reason


@pytest.mark.parametrize(
    ("reason", "kind", "code"),
    [
        ("tool_use", "run_tools", None),
        ("end_turn", "end_attempt", AgentErrorCode.INVALID_RESPONSE),
        ("stop_sequence", "end_attempt", AgentErrorCode.INVALID_RESPONSE),
        ("max_tokens", "end_attempt", AgentErrorCode.MAX_TOKENS),
        ("pause_turn", "resume", None),
        ("compaction", "resume", None),
        ("refusal", "fail", AgentErrorCode.REFUSAL),
        ("model_context_window_exceeded", "fail", AgentErrorCode.CONTEXT_WINDOW_EXCEEDED),
    ],
)
def test_stop_reasons_step_of_each_value(reason: str, kind: str, code: AgentErrorCode | None) -> None:
    """Each stop reason maps to the step the loop's contract gives it."""
    step = STOP_REASON_STEPS[reason]
    assert (step.kind, step.code) == (kind, code)


@pytest.mark.parametrize(
    ("reason", "runs"),
    [
        ("tool_use", True),
        ("end_turn", True),
        ("stop_sequence", True),
        ("pause_turn", True),
        ("brand_new_reason", True),
        ("max_tokens", False),
        ("refusal", False),
        ("model_context_window_exceeded", False),
    ],
)
def test_stop_reasons_tool_calls_run_unless_cut_off(reason: str, runs: bool) -> None:
    """A response with tool calls runs them unless its stop reason says it was cut off, refused or overflowed."""
    assert (step_for(reason, calls_tools=True).kind == "run_tools") is runs


def test_stop_reasons_unknown_value_fails_without_tool_calls() -> None:
    """A stop reason newer than the table, with no tool call, fails (API_ERROR) rather than guessing."""
    assert step_for("brand_new_reason", calls_tools=False) is UNKNOWN_STOP_REASON
    assert step_for(None, calls_tools=False) is UNKNOWN_STOP_REASON
    assert UNKNOWN_STOP_REASON.kind == "fail"


async def test_stop_reasons_unknown_value_through_the_sdk_names_it() -> None:
    """Over the real SDK (which does not validate stop_reason), an unknown value fails with a message naming it."""
    seen: list[dict[str, Any]] = []
    client = sdk_client([(200, message([{"type": "text", "text": "Done."}], stop_reason="brand_new_reason"))], seen)
    result = await execute_agent(triage_agent(), "Ticket: VPN drops", client=client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.API_ERROR
    assert "'brand_new_reason'" in result.error.message
    assert "Upgrade typedagent" in result.error.message
    assert result.error.context == ApiErrorContext(
        status_code=None, error_type="unknown_stop_reason", request_id=None, attempt=1, iteration=1
    )
    assert result.metadata.messages[-1] == {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}
    assert [a.outcome for a in result.metadata.attempts] == [AttemptOutcome.API_ERROR]
    assert len(seen) == 1


async def test_stop_reasons_unknown_value_with_tool_calls_runs_them() -> None:
    """A response with an unknown stop reason that calls tools has them run, as any tool-calling response."""
    seen: list[dict[str, Any]] = []
    client = sdk_client(
        [
            (
                200,
                message(
                    [{"type": "tool_use", "id": "toolu_a", "name": "lookup", "input": {"query": "vpn"}}],
                    stop_reason="brand_new_reason",
                ),
            ),
            (
                200,
                message([{"type": "tool_use", "id": "toolu_b", "name": "final_output", "input": GOOD.model_dump()}]),
            ),
        ],
        seen,
    )
    result = await execute_agent(triage_agent(helpers=[lookup]), "Ticket: VPN drops", client=client)
    assert result.ok
    assert results_of(seen[1]["messages"][-1]) == [("toolu_a", "found vpn", False)]


async def test_stop_reasons_compaction_resumes_the_turn() -> None:
    """``compaction`` continues the turn: the next response extends the same assistant message."""
    seen: list[dict[str, Any]] = []
    compaction = {"type": "compaction", "content": "Summary of the earlier turns."}
    client = sdk_client(
        [
            (200, message([compaction], stop_reason="compaction")),
            (
                200,
                message([{"type": "tool_use", "id": "toolu_b", "name": "final_output", "input": GOOD.model_dump()}]),
            ),
        ],
        seen,
    )
    result = await execute_agent(triage_agent(), "Ticket: VPN drops", client=client)
    assert result.ok
    assert seen[1]["messages"][-1] == {"role": "assistant", "content": [compaction]}
    assert result.metadata.messages[1]["content"][0] == compaction
    assert result.metadata.iterations == 2


async def test_stop_reasons_tool_use_without_a_tool_call_is_an_invalid_response() -> None:
    """A response claiming ``tool_use`` but calling nothing ends the attempt as INVALID_RESPONSE, with feedback."""
    client = ScriptedClient([response(text("Thinking aloud."), stop_reason="tool_use"), output_call(GOOD)])
    result = await run(triage_agent(), client)
    assert result.ok
    assert [a.outcome for a in result.metadata.attempts] == [AttemptOutcome.INVALID_RESPONSE, AttemptOutcome.SUCCESS]
    assert "You replied without calling a tool" in client.requests[1]["messages"][-1]["content"][-1]["text"]
    assert_api_valid(result, client)


async def test_stop_reasons_pause_turn_with_a_tool_call_runs_it() -> None:
    """A paused response that calls a client tool has the call run and answered (the conversation stays valid)."""
    client = ScriptedClient(
        [response(tool_call("lookup", {"query": "a"}), stop_reason="pause_turn"), output_call(GOOD)]
    )
    result = await run(triage_agent(helpers=[lookup]), client)
    assert result.ok
    assert results_of(client.requests[1]["messages"][-1]) == [("toolu_01_001", "found a", False)]


def test_stop_reasons_outcome_and_code_are_one_enum() -> None:
    """Attempt outcomes and error codes are one enum: an attempt's outcome is SUCCESS or its failure's code."""
    assert AttemptOutcome is AgentErrorCode
    assert AgentErrorCode.SUCCESS.value == "success"


@pytest.mark.parametrize(
    ("reason", "calls_tools", "kind"),
    [
        ("end_turn", False, "take_answer"),
        ("stop_sequence", False, "take_answer"),
        ("tool_use", False, "take_answer"),
        ("tool_use", True, "run_tools"),
        ("end_turn", True, "run_tools"),
        ("max_tokens", False, "end_attempt"),
        ("pause_turn", False, "resume"),
        ("refusal", False, "fail"),
    ],
)
def test_stop_reasons_a_turn_ended_in_text_is_the_answer(reason: str, calls_tools: bool, kind: str) -> None:
    """For an agent answering in text, a turn ended on purpose without a tool call is its answer; the rest stays."""
    assert step_for(reason, calls_tools, answers_in_text=True).kind == kind
    assert step_for(reason, calls_tools).kind == ("end_attempt" if kind == "take_answer" else kind)

"""Bugs other libraries have had, pinned so typedagent never grows them (issue 2, point 2)."""

from __future__ import annotations

from support import GOOD, Triage, reflecting, results_of, run, triage_agent

from typedagent import OutputRejected, ValidationConfig, tool
from typedagent.testing import ScriptedClient, conversation_problems, output_call, response, submit_call, tool_call


@tool
async def lookup(query: str) -> str:
    """Look up."""
    return query


def reject_all(out: Triage) -> None:
    raise OutputRejected("not good enough")


async def test_retry_never_replays_tool_use_without_tool_result() -> None:
    """A retry after a failed validation sends a conversation where every tool_use has its tool_result."""
    client = ScriptedClient(
        [
            response(tool_call("lookup", {"query": "a"}), output_call(GOOD)),
            response(output_call(GOOD), submit_call()),
            output_call(GOOD),
            submit_call(),
        ]
    )
    agent = triage_agent(
        output=reflecting(), helpers=[lookup], validators=[reject_all], validation=ValidationConfig(max_attempts=2)
    )
    result = await run(agent, client)
    assert not result.ok
    assert len(client.requests) == 4
    for request in client.requests:
        assert conversation_problems(request["messages"]) == []
    second = client.requests[1]["messages"]
    assert [r[0] for r in results_of(second[-1])] == ["toolu_01_001", "toolu_01_002"]


async def test_last_candidate_kept_when_retries_run_out() -> None:
    """When every attempt is rejected, the last candidate is still returned (error.last_output)."""
    last = {"severity": 4, "summary": "final try"}
    client = ScriptedClient([output_call(GOOD), output_call(last)])
    agent = triage_agent(validators=[reject_all], validation=ValidationConfig(max_attempts=2))
    result = await run(agent, client)
    assert not result.ok
    assert result.error.last_output == last
    assert result.metadata.attempts[-1].candidate == last


async def test_usage_summed_across_retries() -> None:
    """Usage of every attempt's responses is in the total, including the rejected ones."""
    client = ScriptedClient([output_call(GOOD), output_call(GOOD), output_call(GOOD)])
    result = await run(triage_agent(validators=[reject_all]), client)
    assert result.metadata.tokens.total == 3 * 15
    assert sum(a.tokens.total for a in result.metadata.attempts) == 45


async def test_pydantic_details_of_bad_tool_input_reach_the_model() -> None:
    """The model sees which field of its tool input was wrong and why, not a generic failure."""
    client = ScriptedClient([tool_call("lookup", {"query": ["not", "a", "string"]}), output_call(GOOD)])
    result = await run(triage_agent(helpers=[lookup]), client)
    [(_, content, is_error)] = results_of(result.metadata.messages[2])
    assert is_error
    assert "- query: Input should be a valid string" in content

"""Fallback chains (issue 32) with what landed beside them: pausing (issue 27), output modes (28), prompt caching (33).

A paused execution's state carries where its calls went in the chain; a native output's format and the request's
cache breakpoints go with a call that moves to an alternative; a model without structured outputs is skipped;
cache savings are priced per model, like cost.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from typedagent import (
    AgentDefinition,
    Alternative,
    AlternativeFailure,
    ApiErrorContext,
    Approve,
    ExecuteFailure,
    ExecutePaused,
    ExecuteSuccess,
    OutputTool,
    PausedState,
    TokenUsage,
    define_agent,
    execute_agent,
    price_for,
    tool,
)
from typedagent._cli._check_output import output_problems
from typedagent.testing import FakeAnthropicServer, api_error, output_call, response, text, tool_call, usage

PRIMARY = "claude-sonnet-4-6"
ALTERNATE = "claude-haiku-4-5"
OLDER = "claude-sonnet-4-0"
"""A model without structured outputs."""


class Out(BaseModel):
    n: int


@tool
async def lookup(query: str) -> str:
    """Look up."""
    return f"found {query}"


@tool(requires_approval=True)
async def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def agent_with(*fallback: str | Alternative, **options: Any) -> AgentDefinition[Out, None]:
    params: dict[str, Any] = {
        "name": "fallback_modes",
        "model": PRIMARY,
        "output": OutputTool(Out),
        "helpers": [lookup],
        "fallback": list(fallback),
    }
    params.update(options)
    return define_agent(**params)


# --- Pausing ---------------------------------------------------------------------------------------------------------


async def test_a_paused_and_resumed_run_keeps_its_models_used_and_stays_on_the_alternative() -> None:
    async with (
        FakeAnthropicServer([api_error(529)]) as primary,
        FakeAnthropicServer([tool_call("delete", {"path": "/tmp/x"}, id="toolu_d"), output_call({"n": 1})]) as other,
    ):
        agent = agent_with(Alternative(ALTERNATE, client=other.client(max_retries=0)), helpers=[delete])
        paused = await execute_agent(agent, "go", client=primary.client(max_retries=0), pausable=True)
        assert isinstance(paused, ExecutePaused)
        assert paused.metadata.models_used == (ALTERNATE,)
        totals = json.loads(paused.state.to_json())["totals"]
        assert totals["models_used"] == [ALTERNATE]
        assert totals["fallback"]["position"] == 1
        state = PausedState.from_json(paused.state.to_json())  # through JSON, as a store would keep it
        result = await execute_agent(
            agent, resume=state, decisions={"toolu_d": Approve()}, client=primary.client(max_retries=0)
        )
    assert isinstance(result, ExecuteSuccess)
    assert result.output == Out(n=1)
    assert result.metadata.models_used == (ALTERNATE, ALTERNATE)
    assert primary.requests_served == 1  # the resumed call went straight to the alternative it stayed on
    haiku = price_for(ALTERNATE)
    assert haiku is not None
    assert result.metadata.cost_usd == pytest.approx(2 * (haiku.input * 10 + haiku.output * 5) / 1e6)


async def test_a_stay_that_ends_during_the_pause_sends_the_resumed_call_to_the_primary() -> None:
    async with (
        FakeAnthropicServer([api_error(529), output_call({"n": 2})]) as primary,
        FakeAnthropicServer([tool_call("delete", {"path": "/tmp/x"}, id="toolu_d")]) as other,
    ):
        agent = agent_with(Alternative(ALTERNATE, client=other.client(max_retries=0)), helpers=[delete])
        paused = await execute_agent(agent, "go", client=primary.client(max_retries=0), pausable=True)
        assert isinstance(paused, ExecutePaused)
        data = json.loads(paused.state.to_json())
        data["totals"]["fallback"]["stay_until_unix"] = 0.0  # the stay ended long ago, while the run was paused
        state = PausedState.from_json(json.dumps(data))
        result = await execute_agent(
            agent, resume=state, decisions={"toolu_d": Approve()}, client=primary.client(max_retries=0)
        )
    assert isinstance(result, ExecuteSuccess)
    assert result.metadata.models_used == (ALTERNATE, PRIMARY)


async def test_resumed_with_a_shorter_chain_the_calls_go_back_to_the_agents_own_model() -> None:
    async with (
        FakeAnthropicServer([api_error(529), output_call({"n": 2})]) as primary,
        FakeAnthropicServer([api_error(529)]) as second,
        FakeAnthropicServer([tool_call("delete", {"path": "/tmp/x"}, id="toolu_d")]) as third,
    ):
        first_alternative = Alternative(ALTERNATE, client=second.client(max_retries=0))
        agent = agent_with(
            first_alternative, Alternative("claude-opus-4-6", client=third.client(max_retries=0)), helpers=[delete]
        )
        paused = await execute_agent(agent, "go", client=primary.client(max_retries=0), pausable=True)
        assert isinstance(paused, ExecutePaused)
        assert json.loads(paused.state.to_json())["totals"]["fallback"]["position"] == 2
        result = await execute_agent(
            agent.with_options(fallback=[first_alternative]),  # the chain lost its last model while paused
            resume=paused.state,
            decisions={"toolu_d": Approve()},
            client=primary.client(max_retries=0),
        )
    assert isinstance(result, ExecuteSuccess)
    assert result.metadata.models_used == ("claude-opus-4-6", PRIMARY)
    assert second.requests_served == 1  # the resumed call went to the agent's own model, not on along the chain


async def test_a_state_written_without_fallback_totals_still_resumes() -> None:
    async with FakeAnthropicServer([tool_call("delete", {"path": "/a"}, id="toolu_d"), output_call({"n": 3})]) as s:
        agent = agent_with(helpers=[delete])
        paused = await execute_agent(agent, "go", client=s.client(max_retries=0), pausable=True)
        assert isinstance(paused, ExecutePaused)
        data = json.loads(paused.state.to_json())
        assert "fallback" not in data["totals"]  # no chain, nothing written
        del data["totals"]["models_used"]  # as a state from before issue 32
        result = await execute_agent(
            agent, resume=PausedState.from_json(json.dumps(data)), decisions={"toolu_d": Approve()}, client=s.client()
        )
    assert isinstance(result, ExecuteSuccess)
    assert result.metadata.models_used == (PRIMARY,)


# --- Output modes ----------------------------------------------------------------------------------------------------


async def test_a_native_outputs_format_goes_with_the_call_to_an_alternative_with_its_own_output_config() -> None:
    async with (
        FakeAnthropicServer([api_error(529)]) as primary,
        FakeAnthropicServer([text('{"n": 4}')]) as other,
    ):
        alternative = Alternative(
            ALTERNATE, client=other.client(max_retries=0), model_settings={"output_config": {"effort": "low"}}
        )
        agent = agent_with(
            alternative, output=OutputTool(Out, mode="native"), model_settings={"output_config": {"effort": "high"}}
        )
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
    assert isinstance(result, ExecuteSuccess)
    assert result.output == Out(n=4)
    sent, moved = primary.requests[0]["output_config"], other.requests[0]["output_config"]
    assert sent["effort"] == "high"
    assert moved == {"effort": "low", "format": sent["format"]}  # the alternative's effort, the output's format


async def test_a_model_without_structured_outputs_is_skipped_in_native_mode_and_says_why() -> None:
    async with (
        FakeAnthropicServer([api_error(529), api_error(529)]) as primary,
        FakeAnthropicServer([], strict=False) as older,
        FakeAnthropicServer([text('{"n": 5}')]) as newer,
    ):
        agent = agent_with(
            Alternative(OLDER, client=older.client(max_retries=0)),
            Alternative(ALTERNATE, client=newer.client(max_retries=0)),
            output=OutputTool(Out, mode="native"),
        )
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
        failed = await execute_agent(
            agent_with(Alternative(OLDER, client=older.client(max_retries=0)), output=OutputTool(Out, mode="native")),
            "go",
            client=primary.client(max_retries=0),
        )
    assert isinstance(result, ExecuteSuccess)
    assert result.metadata.models_used == (ALTERNATE,)
    assert older.requests == []  # never sent a request it would refuse
    assert isinstance(failed, ExecuteFailure)
    assert isinstance(failed.error.context, ApiErrorContext)
    tried = failed.error.context.alternatives
    assert [(entry.model, entry.error_type) for entry in tried] == [
        (PRIMARY, "overloaded_error"),
        (OLDER, "cannot_move"),
    ]
    assert isinstance(tried[1], AlternativeFailure)
    assert "no structured outputs" in tried[1].message
    assert "mode='prompted'" in tried[1].message


# Some SDK releases (2.10) warn when a request names a deprecated model such as claude-sonnet-4-0.
@pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")
async def test_in_tool_mode_an_older_model_takes_the_call() -> None:
    async with FakeAnthropicServer([api_error(529)]) as primary, FakeAnthropicServer([output_call({"n": 6})]) as older:
        agent = agent_with(Alternative(OLDER, client=older.client(max_retries=0)))
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
    assert isinstance(result, ExecuteSuccess)
    assert result.metadata.models_used == (OLDER,)


async def test_with_a_strict_output_tool_a_model_without_strict_tools_is_skipped() -> None:
    async with (
        FakeAnthropicServer([api_error(529)]) as primary,
        FakeAnthropicServer([], strict=False) as older,
        FakeAnthropicServer([output_call({"n": 9})]) as newer,
    ):
        agent = agent_with(
            Alternative(OLDER, client=older.client(max_retries=0)),
            Alternative(ALTERNATE, client=newer.client(max_retries=0)),
            output=OutputTool(Out, strict=True),
        )
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
    assert isinstance(result, ExecuteSuccess)
    assert result.metadata.models_used == (ALTERNATE,)
    assert older.requests == []


def test_check_reports_a_chain_model_without_structured_outputs_in_native_mode() -> None:
    native = agent_with(OLDER, ALTERNATE, output=OutputTool(Out, mode="native"))
    problems = output_problems(native, [])
    assert [problem for problem in problems if problem.startswith("fallback:")] == [
        f"fallback: model {OLDER!r} has no structured outputs, which mode='native' needs: a call never moves to it "
        "(it is skipped); put a newer model in the chain, or use mode='prompted'"
    ]
    assert output_problems(agent_with(OLDER), []) == []  # tool mode without strict tools needs none


# --- Prompt caching --------------------------------------------------------------------------------------------------

LONG_INSTRUCTIONS = "You count. " + " ".join(
    f"Rule {n}: read the request for any sign of number {n} and say so in the count." for n in range(60)
)
"""Tools + system prompt above the 1,024-token minimum of both models, so the static prefix is marked."""


def breakpoints(request: dict[str, Any]) -> list[str]:
    system = request.get("system")
    found = (
        [f"system[{i}]" for i, block in enumerate(system) if "cache_control" in block]
        if isinstance(system, list)
        else []
    )
    for i, message in enumerate(request["messages"]):
        if isinstance(message["content"], list):
            found += [f"messages[{i}][{j}]" for j, block in enumerate(message["content"]) if "cache_control" in block]
    return [*found, *(["automatic"] if "cache_control" in request else [])]


async def test_the_replayed_request_keeps_its_cache_breakpoints() -> None:
    async with (
        FakeAnthropicServer([tool_call("lookup", {"query": "x"}), api_error(529)]) as primary,
        FakeAnthropicServer([output_call({"n": 7})]) as other,
    ):
        agent = agent_with(Alternative(ALTERNATE, client=other.client(max_retries=0)), instructions=LONG_INSTRUCTIONS)
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
    assert result.ok is True
    failed, replayed = primary.requests[1], other.requests[0]
    assert breakpoints(replayed) == breakpoints(failed) == ["system[0]", "automatic"]
    assert replayed["system"] == failed["system"]
    assert replayed["cache_control"] == failed["cache_control"]


async def test_cache_savings_are_priced_per_model_like_cost() -> None:
    cached = usage(input_tokens=10, output_tokens=5, cache_read_input_tokens=2000)
    async with (
        FakeAnthropicServer([response(tool_call("lookup", {"query": "x"}), usage=cached), api_error(529)]) as primary,
        FakeAnthropicServer([response(output_call({"n": 8}), usage=cached)]) as other,
    ):
        agent = agent_with(Alternative(ALTERNATE, client=other.client(max_retries=0)))
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
    assert result.ok is True
    sonnet, haiku = price_for(PRIMARY), price_for(ALTERNATE)
    assert sonnet is not None
    assert haiku is not None
    # A cache read saves the input price less the read price, per token, at the price of the model that read it.
    expected = sum(2000 * (price.input - price.cache_read) / 1e6 for price in (sonnet, haiku))
    assert result.metadata.cache_savings_usd == pytest.approx(expected)
    assert sonnet.input - sonnet.cache_read != haiku.input - haiku.cache_read  # so one price for both would differ


# --- Agents that use agents ------------------------------------------------------------------------------------------


async def test_a_sub_agents_fallback_rolls_up_priced_as_the_model_that_answered() -> None:
    big = usage(input_tokens=10_000, output_tokens=1_000)
    async with (
        FakeAnthropicServer(
            [
                response(tool_call("helper", {"task": "count"}), usage=big),  # the parent delegates
                api_error(529),  # the sub-agent's primary is overloaded
                response(output_call({"n": 11}), usage=big),  # the parent answers
            ]
        ) as primary,
        FakeAnthropicServer([response(output_call({"n": 10}), usage=big)]) as other,
    ):
        helper = agent_with(Alternative(ALTERNATE, client=other.client(max_retries=0)), name="helper", helpers=[])
        parent = agent_with(helpers=[helper.as_tool()])
        result = await execute_agent(parent, "go", client=primary.client(max_retries=0))
    assert isinstance(result, ExecuteSuccess)
    (sub,) = result.metadata.sub_executions
    assert sub.metadata.models_used == (ALTERNATE,)
    assert result.metadata.models_used == (PRIMARY, PRIMARY)  # the parent's own calls; the sub-run's are in its own
    sonnet, haiku = price_for(PRIMARY), price_for(ALTERNATE)
    assert sonnet is not None
    assert haiku is not None
    each = TokenUsage(input_tokens=10_000, output_tokens=1_000)
    assert sub.metadata.cost_usd == pytest.approx(haiku.cost_usd(each))
    assert result.metadata.cost_usd == pytest.approx(2 * sonnet.cost_usd(each) + haiku.cost_usd(each))
    assert result.metadata.iterations == 4  # the parent's two calls, the sub-agent's failed one and its answer

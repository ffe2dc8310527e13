"""Fallback chains (issue 32): ``define_agent(fallback=[...])`` moves a failed or refused call to the next model.

Every test here runs the real SDK over HTTP against fake Messages API servers: one per "platform" (the primary's
and each alternative's client), with faults injected per server and per model.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest
from anthropic import AsyncAnthropic, AsyncAnthropicFoundry
from anthropic.lib.bedrock import AsyncAnthropicBedrock
from anthropic.lib.vertex import AsyncAnthropicVertex
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel
from support import recorded

from typedagent import (
    AgentDefinition,
    AgentDefinitionError,
    AgentErrorCode,
    Alternative,
    AlternativeFailure,
    ExecuteCallbacks,
    ExecuteResult,
    ExecutionLimits,
    ExecutionState,
    FallbackPolicy,
    FallbackSwitch,
    FallbackSwitched,
    Finished,
    ModelSettings,
    OutputTool,
    RunInput,
    define_agent,
    execute_agent,
    execute_many,
    price_for,
    stream_agent,
    tool,
)
from typedagent._api.fallback import CircuitBreaker
from typedagent._api.hop import cannot_move, moved_messages
from typedagent._cli._progress import Progress
from typedagent.server_tools import code_execution
from typedagent.testing import (
    FakeAnthropicServer,
    ScriptedClient,
    api_error,
    assert_valid_conversation,
    delay,
    dropped_connection,
    malformed_body,
    output_call,
    response,
    stream_error,
    text,
    thinking,
    tool_call,
)


class Out(BaseModel):
    n: int


PRIMARY = "claude-sonnet-4-6"
ALTERNATE = "claude-haiku-4-5"
THINKING: ModelSettings = {"thinking": {"type": "enabled", "budget_tokens": 1024}}


@tool
async def lookup(query: str) -> str:
    """Look up."""
    return f"found {query}"


def make_agent(*fallback: str | Alternative, **options: Any) -> AgentDefinition[Out, None]:
    return define_agent(
        name="fallback",
        model=PRIMARY,
        output=OutputTool(Out),
        helpers=[lookup],
        max_tokens=4096,
        fallback=list(fallback),
        **options,
    )


class Switches:
    """The ``on_fallback`` events of an execution."""

    def __init__(self) -> None:
        self.events: list[FallbackSwitch] = []

    def __call__(self, state: ExecutionState, event: FallbackSwitch) -> None:
        self.events.append(event)

    @property
    def callbacks(self) -> ExecuteCallbacks:
        return ExecuteCallbacks(on_fallback=self)


def sent_without_model(request: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in request.items() if key != "model"}


def refusal_body(model: str, *, token: str | None = None, content: list[Any] | None = None) -> str:
    """A refusal as the API sends it (no scripted item carries ``stop_details``)."""
    details: dict[str, Any] = {"type": "refusal", "category": "cyber", "explanation": "no"}
    if token is not None:
        details["fallback_credit_token"] = token
    return json.dumps(
        {
            "id": "msg_refused",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content or [],
            "stop_reason": "refusal",
            "stop_sequence": None,
            "stop_details": details,
            "usage": {"input_tokens": 100, "output_tokens": 1},
        }
    )


# --- Declaring it ---------------------------------------------------------------------------------------------------


def test_fallback_entries_become_alternatives() -> None:
    client = ScriptedClient([])
    agent = make_agent(ALTERNATE, Alternative(PRIMARY, client=client, max_tokens=1000))
    assert agent.fallback == (Alternative(ALTERNATE), Alternative(PRIMARY, client=client, max_tokens=1000))
    assert agent.fallback_on_refusal is False
    assert agent.fallback_policy == FallbackPolicy()
    assert make_agent().fallback == ()


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: make_agent(fallback_on_refusal=True), "needs models to move to"),
        (lambda: define_agent(name="a", model=PRIMARY, output=OutputTool(Out), fallback=ALTERNATE), "fallback=['"),
        (lambda: make_agent(3), "entries are model names or Alternative"),  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
        (lambda: make_agent(PRIMARY), "the agent's own model"),
        (lambda: make_agent(ALTERNATE, ALTERNATE), "listed twice"),
        (lambda: Alternative(""), "must be a model id string"),
        (lambda: Alternative(ALTERNATE, client=AsyncAnthropic), "must be a client instance"),  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
        (lambda: Alternative(ALTERNATE, max_tokens=0), "max_tokens=...) must be an int >= 1"),
        (lambda: Alternative(ALTERNATE, model_settings=[]), "must be a dict"),  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
        (lambda: FallbackPolicy(stay_s=-1), "FallbackPolicy.stay_s must be a finite number >= 0"),
        (lambda: FallbackPolicy(breaker_threshold=0), "breaker_threshold must be an int >= 1"),
        (lambda: make_agent(ALTERNATE, fallback_on_refusal="yes"), "must be True or False"),
        (lambda: make_agent(ALTERNATE, fallback_policy={"stay_s": 1}), "must be a FallbackPolicy"),
        (
            lambda: make_agent(Alternative(ALTERNATE, model_settings=THINKING, max_tokens=1000)),
            "budget_tokens",
        ),
    ],
)
def test_bad_fallback_declarations_say_what_to_do(build: Any, message: str) -> None:
    with pytest.raises(AgentDefinitionError, match=re.escape(message)):
        build()


async def test_max_cost_needs_every_chain_models_price() -> None:
    agent = make_agent("claude-unknown-model-x")
    with pytest.raises(ValueError, match=r"'claude-unknown-model-x'.*register_price"):
        await execute_agent(agent, "go", client=ScriptedClient([]), limits=ExecutionLimits(max_cost_usd=1.0))


def test_platform_model_ids_have_their_models_price() -> None:
    assert price_for("us.anthropic.claude-sonnet-4-6") == price_for(PRIMARY)
    assert price_for("anthropic.claude-sonnet-4-5-20250929-v1:0") == price_for("claude-sonnet-4-5")
    assert price_for("claude-sonnet-4-5@20250929") == price_for("claude-sonnet-4-5")


# --- Inside the execution -------------------------------------------------------------------------------------------


async def test_overloaded_primary_moves_to_another_platform_keeping_the_conversation() -> None:
    switches = Switches()
    async with (
        FakeAnthropicServer([tool_call("lookup", {"query": "x"}, id="toolu_a"), api_error(529)]) as primary,
        FakeAnthropicServer([output_call({"n": 1}, id="toolu_b")]) as other,
    ):
        agent = make_agent(Alternative(ALTERNATE, client=other.client(max_retries=0)))
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0), callbacks=switches.callbacks)
    assert result.ok is True
    assert result.output == Out(n=1)
    assert result.metadata.models_used == (PRIMARY, ALTERNATE)
    # The alternative got the very request the primary failed: same conversation and tools, its own model.
    assert sent_without_model(other.requests[0]) == sent_without_model(primary.requests[1])
    assert other.requests[0]["model"] == ALTERNATE
    assert switches.events == [
        FallbackSwitch(from_model=PRIMARY, to_model=ALTERNATE, position=1, reason="overloaded_error", status_code=529)
    ]
    assert result.metadata.iterations == 3  # every API call made counts
    # Cost: each response at the price of the model that answered it (10 in, 5 out each by default).
    sonnet, haiku = price_for(PRIMARY), price_for(ALTERNATE)
    assert sonnet is not None
    assert haiku is not None
    expected = sum(p.input * 10 / 1e6 + p.output * 5 / 1e6 for p in (sonnet, haiku))
    assert result.metadata.cost_usd == pytest.approx(expected)
    assert_valid_conversation(result.metadata.messages)


async def test_model_name_alternative_uses_the_same_client() -> None:
    async with FakeAnthropicServer([api_error(500), output_call({"n": 2})]) as server:
        result = await execute_agent(make_agent(ALTERNATE), "go", client=server.client(max_retries=0))
    assert result.ok is True
    assert [request["model"] for request in server.requests] == [PRIMARY, ALTERNATE]
    assert result.metadata.models_used == (ALTERNATE,)


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        (api_error(529), "overloaded_error"),
        (api_error(500), "api_error"),
        (api_error(503), "api_error"),
        (dropped_connection(), "connection_error"),
        (api_error(429, retry_after=120), "rate_limit_error"),
        (api_error(429), "rate_limit_error"),  # no retry-after: the wait is unknown
    ],
)
async def test_faults_that_move_on(fault: Any, reason: str) -> None:
    switches = Switches()
    async with FakeAnthropicServer([fault]) as primary, FakeAnthropicServer([output_call({"n": 1})]) as other:
        agent = make_agent(Alternative(ALTERNATE, client=other.client(max_retries=0)))
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0), callbacks=switches.callbacks)
    assert result.ok is True
    assert [event.reason for event in switches.events] == [reason]


@pytest.mark.parametrize(
    ("fault", "error_type"),
    [
        (api_error(400), "invalid_request_error"),
        (api_error(429, retry_after=1), "rate_limit_error"),  # shorter than max_retry_after_s: not moved
        (malformed_body(), "malformed_response"),
    ],
)
async def test_faults_that_do_not_move_on(fault: Any, error_type: str) -> None:
    async with FakeAnthropicServer([fault]) as primary, FakeAnthropicServer([], strict=False) as other:
        agent = make_agent(Alternative(ALTERNATE, client=other.client(max_retries=0)))
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
    assert result.ok is False
    context = result.error.context_for(AgentErrorCode.API_ERROR)
    assert context is not None
    assert context.error_type == error_type
    assert other.requests_served == 0


async def test_when_every_alternative_fails_the_api_error_lists_them_in_order() -> None:
    async with (
        FakeAnthropicServer([api_error(529)]) as primary,
        FakeAnthropicServer([api_error(500, "down")]) as second,
        FakeAnthropicServer([dropped_connection()]) as third,
    ):
        agent = make_agent(
            Alternative(ALTERNATE, client=second.client(max_retries=0)),
            Alternative("claude-opus-4-8", client=third.client(max_retries=0)),
        )
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
    assert result.ok is False
    context = result.error.context_for(AgentErrorCode.API_ERROR)
    assert context is not None
    assert [(a.model, a.error_type, a.status_code) for a in context.alternatives] == [
        (PRIMARY, "overloaded_error", 529),
        (ALTERNATE, "api_error", 500),
        ("claude-opus-4-8", "connection_error", None),
    ]
    assert all(isinstance(entry, AlternativeFailure) and entry.message for entry in context.alternatives)
    assert "No model of the fallback chain answered" in result.error.message
    assert context.error_type == "connection_error"  # the last one's
    assert result.metadata.models_used == ()
    assert result.metadata.messages == [{"role": "user", "content": "go"}]  # nothing the model said was lost


async def test_alternative_settings_replace_the_agents_own() -> None:
    """Thinking the alternative does not take goes; its own max_tokens and settings are sent instead."""
    async with FakeAnthropicServer([api_error(529)]) as primary, FakeAnthropicServer([output_call({"n": 1})]) as other:
        agent = make_agent(
            Alternative(
                ALTERNATE,
                client=other.client(max_retries=0),
                model_settings={"stop_sequences": ["END"]},
                max_tokens=900,
            ),
            model_settings=THINKING,
        )
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
    assert result.ok is True
    assert primary.requests[0]["thinking"] == THINKING.get("thinking")
    sent = other.requests[0]
    assert "thinking" not in sent
    assert (sent["stop_sequences"], sent["max_tokens"]) == (["END"], 900)


async def test_limits_carry_on_across_models() -> None:
    """max_requests counts every API call made, the alternatives' too: a limit can stop the chain between two."""
    async with FakeAnthropicServer([api_error(529)]) as primary, FakeAnthropicServer([], strict=False) as other:
        agent = make_agent(Alternative(ALTERNATE, client=other.client(max_retries=0)))
        result = await execute_agent(
            agent, "go", client=primary.client(max_retries=0), limits=ExecutionLimits(max_requests=1)
        )
    assert result.ok is False
    assert result.error.code is AgentErrorCode.REQUEST_LIMIT_EXCEEDED
    assert other.requests_served == 0


# --- Sticky and healthy ---------------------------------------------------------------------------------------------


async def test_an_execution_stays_on_the_alternative_that_answered() -> None:
    async with (
        FakeAnthropicServer([api_error(529)]) as primary,
        FakeAnthropicServer([tool_call("lookup", {"query": "x"}), output_call({"n": 1})]) as other,
    ):
        agent = make_agent(Alternative(ALTERNATE, client=other.client(max_retries=0)))
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
    assert result.ok is True
    assert primary.requests_served == 1  # the second iteration went straight to the alternative
    assert result.metadata.models_used == (ALTERNATE, ALTERNATE)


async def test_the_primary_is_tried_again_when_the_stay_ends() -> None:
    switches = Switches()
    async with (
        FakeAnthropicServer([api_error(529), output_call({"n": 1})]) as primary,
        FakeAnthropicServer([tool_call("lookup", {"query": "x"})]) as other,
    ):
        agent = make_agent(
            Alternative(ALTERNATE, client=other.client(max_retries=0)), fallback_policy=FallbackPolicy(stay_s=0)
        )
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0), callbacks=switches.callbacks)
    assert result.ok is True
    assert result.metadata.models_used == (ALTERNATE, PRIMARY)
    assert [(e.from_model, e.to_model, e.reason) for e in switches.events] == [
        (PRIMARY, ALTERNATE, "overloaded_error"),
        (ALTERNATE, PRIMARY, "stay_over"),
    ]


def test_circuit_breaker_opens_then_lets_one_probe_through_after_the_cooldown() -> None:
    now = [0.0]
    breaker = CircuitBreaker(threshold=2, cooldown_s=10, clock=lambda: now[0])
    breaker.failed("overloaded_error")
    assert breaker.allows() is True  # one failure: still closed
    breaker.failed("overloaded_error")
    assert (breaker.state, breaker.allows()) == ("open", False)
    now[0] = 10.0
    assert breaker.allows() is True  # half-open: the probe
    assert breaker.allows() is False  # everyone else keeps skipping while it runs
    breaker.failed("overloaded_error")
    assert (breaker.state, breaker.allows()) == ("open", False)  # the probe failed: open for another cool-down
    now[0] = 20.0
    assert breaker.allows() is True
    breaker.succeeded()
    assert (breaker.state, breaker.allows(), breaker.allows()) == ("closed", True, True)


async def test_execute_many_shares_the_breaker_so_a_dead_primary_is_probed_a_bounded_number_of_times() -> None:
    async with (
        FakeAnthropicServer([api_error(529)], per_conversation=True) as primary,
        FakeAnthropicServer([output_call({"n": 1})], per_conversation=True) as other,
    ):
        policy = FallbackPolicy(breaker_threshold=3, breaker_cooldown_s=3600, stay_s=0)
        agent = make_agent(Alternative(ALTERNATE, client=other.client(max_retries=0)), fallback_policy=policy)
        results = [
            item
            async for item in execute_many(
                agent, [f"job {i}" for i in range(30)], client=primary.client(max_retries=0), concurrency=1
            )
        ]
    assert all(item.result.ok for item in results)
    assert primary.requests_served == 3  # then the breaker skips it for the rest of the run
    assert other.requests_served == 30
    skipped = [item.result.metadata for item in results[3:]]
    assert all(meta.models_used == (ALTERNATE,) for meta in skipped)


async def test_separate_executions_have_their_own_breakers() -> None:
    async with (
        FakeAnthropicServer([api_error(529)], per_conversation=True) as primary,
        FakeAnthropicServer([output_call({"n": 1})], per_conversation=True) as other,
    ):
        policy = FallbackPolicy(breaker_threshold=1, breaker_cooldown_s=3600)
        agent = make_agent(Alternative(ALTERNATE, client=other.client(max_retries=0)), fallback_policy=policy)
        for _ in range(3):
            assert (await execute_agent(agent, "go", client=primary.client(max_retries=0))).ok
    assert primary.requests_served == 3


async def test_an_open_breaker_is_a_skip_in_the_alternatives() -> None:
    async with (
        FakeAnthropicServer([tool_call("lookup", {"query": "x"}), api_error(529)]) as primary,
        FakeAnthropicServer([api_error(529), api_error(529)]) as other,
    ):
        agent = make_agent(
            Alternative(ALTERNATE, client=other.client(max_retries=0)),
            fallback_policy=FallbackPolicy(breaker_threshold=1, breaker_cooldown_s=3600, stay_s=0),
        )
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
    assert result.ok is False
    context = result.error.context_for(AgentErrorCode.API_ERROR)
    assert context is not None
    assert [(a.model, a.error_type) for a in context.alternatives] == [
        (PRIMARY, "overloaded_error"),
        (ALTERNATE, "overloaded_error"),
    ]


# --- Refusals -------------------------------------------------------------------------------------------------------


async def test_a_refusal_ends_the_run_without_fallback_on_refusal() -> None:
    async with FakeAnthropicServer([response(stop_reason="refusal")]) as primary, FakeAnthropicServer([]) as other:
        agent = make_agent(Alternative(ALTERNATE, client=other.client(max_retries=0)))
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
    assert result.ok is False
    assert result.error.code is AgentErrorCode.REFUSAL
    assert other.requests_served == 0


async def test_a_refusal_moves_to_the_next_platform_with_fallback_on_refusal() -> None:
    switches = Switches()
    async with (
        FakeAnthropicServer([response(text("I can't"), stop_reason="refusal")]) as primary,
        FakeAnthropicServer([output_call({"n": 1})]) as other,
    ):
        agent = make_agent(Alternative(ALTERNATE, client=other.client(max_retries=0)), fallback_on_refusal=True)
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0), callbacks=switches.callbacks)
    assert result.ok is True
    assert [(e.reason, e.server_side) for e in switches.events] == [("refusal", False)]
    assert result.metadata.models_used == (PRIMARY, ALTERNATE)
    assert result.metadata.tokens.input_tokens == 20  # the refused call was billed: it counts
    # The refusal stays out of the conversation: the alternative answered the same request.
    assert other.requests[0]["messages"] == [{"role": "user", "content": "go"}]
    assert [message["role"] for message in result.metadata.messages] == ["user", "assistant", "user"]
    assert "I can't" not in json.dumps(result.metadata.messages)


async def test_when_every_model_refuses_the_refusal_lists_them() -> None:
    async with (
        FakeAnthropicServer([response(stop_reason="refusal")]) as primary,
        FakeAnthropicServer([response(text("no"), stop_reason="refusal")]) as other,
    ):
        agent = make_agent(Alternative(ALTERNATE, client=other.client(max_retries=0)), fallback_on_refusal=True)
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
    assert result.ok is False
    context = result.error.context_for(AgentErrorCode.REFUSAL)
    assert context is not None
    assert [(a.model, a.error_type) for a in context.alternatives] == [(PRIMARY, "refusal"), (ALTERNATE, "refusal")]
    assert context.text == "no"


async def test_same_client_alternatives_go_in_the_servers_own_fallbacks_parameter() -> None:
    """On Anthropic's API a refusal moves on server-side: one request carries ``fallbacks`` and its beta."""
    served = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": ALTERNATE,
        "content": [
            {
                "type": "fallback",
                "from": {"model": PRIMARY},
                "to": {"model": ALTERNATE},
                "trigger": {"type": "refusal", "category": "cyber"},
            },
            {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"query": "x"}},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "stop_details": None,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 5,
            "iterations": [
                {"type": "message", "model": PRIMARY, "input_tokens": 5, "output_tokens": 1},
                {"type": "fallback_message", "model": ALTERNATE, "input_tokens": 5, "output_tokens": 4},
            ],
        },
    }
    switches = Switches()
    async with FakeAnthropicServer([malformed_body(json.dumps(served)), output_call({"n": 1})]) as server:
        agent = make_agent(ALTERNATE, fallback_on_refusal=True)
        result = await execute_agent(agent, "go", client=server.client(max_retries=0), callbacks=switches.callbacks)
    assert result.ok is True, result
    first, second = server.requests
    assert first["fallbacks"] == [{"model": ALTERNATE}]
    assert "server-side-fallback-2026-07-01" in server.request_headers[0]["anthropic-beta"]
    assert [(e.to_model, e.reason, e.server_side) for e in switches.events] == [(ALTERNATE, "refusal", True)]
    # The seam is echoed back in place (the request carries the beta that allows it); the next call stays there.
    assert second["model"] == ALTERNATE
    assert second["messages"][1]["content"][0]["type"] == "fallback"
    assert "server-side-fallback-2026-07-01" in server.request_headers[1]["anthropic-beta"]


async def test_a_refusals_credit_token_is_redeemed_on_the_retry() -> None:
    """An alternative the server cannot try itself (other settings) is called with the refusal's credit token."""
    async with FakeAnthropicServer(
        [malformed_body(refusal_body(PRIMARY, token="tok1")), output_call({"n": 1})]
    ) as server:
        agent = make_agent(Alternative(ALTERNATE, model_settings={"stop_sequences": ["END"]}), fallback_on_refusal=True)
        result = await execute_agent(agent, "go", client=server.client(max_retries=0))
    assert result.ok is True
    first, second = server.requests
    assert "fallbacks" not in first  # stop_sequences differ: no server-side entry can say so
    assert "fallback-credit-2026-07-01" in server.request_headers[0]["anthropic-beta"]
    assert second["fallback_credit_token"] == {"token": "tok1", "mode": "best_effort"}
    assert (second["model"], second["stop_sequences"]) == (ALTERNATE, ["END"])
    assert sent_without_model(first)["messages"] == second["messages"]


# --- Thinking blocks and server state -------------------------------------------------------------------------------


async def test_thinking_blocks_go_verbatim_to_a_thinking_model_and_are_dropped_for_one_that_does_not() -> None:
    turn = response(thinking("plan", signature="sig-sonnet"), tool_call("lookup", {"query": "x"}))
    async with (
        FakeAnthropicServer([turn, api_error(529)]) as primary,
        FakeAnthropicServer([api_error(529)]) as thinks,
        FakeAnthropicServer([output_call({"n": 1})]) as plain,
    ):
        agent = make_agent(
            Alternative(ALTERNATE, client=thinks.client(max_retries=0)),
            Alternative("claude-opus-4-8", client=plain.client(max_retries=0), model_settings={}),
            model_settings=THINKING,
        )
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
    assert result.ok is True
    assert thinks.requests[0]["messages"][1] == primary.requests[1]["messages"][1]
    assert thinks.requests[0]["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "plan",
        "signature": "sig-sonnet",
    }
    assert [block["type"] for block in plain.requests[0]["messages"][1]["content"]] == ["tool_use"]
    assert "thinking" not in plain.requests[0]
    # The conversation the result keeps is the real one: the thinking block stays.
    kept: Any = result.metadata.messages[1]["content"]
    assert kept[0]["type"] == "thinking"


async def test_a_thinking_model_continuing_a_turn_begun_without_thinking_does_not_think_for_that_call() -> None:
    async with (
        FakeAnthropicServer([tool_call("lookup", {"query": "x"}), api_error(529)]) as primary,
        FakeAnthropicServer([output_call({"n": 1})]) as other,
    ):
        agent = make_agent(Alternative(ALTERNATE, client=other.client(max_retries=0), model_settings=THINKING))
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
    assert result.ok is True
    assert "thinking" not in other.requests[0]


async def test_a_container_cannot_move_to_another_client_and_says_so() -> None:
    async with (
        FakeAnthropicServer(
            [response(tool_call("lookup", {"query": "x"}), container="container_1"), api_error(529)]
        ) as primary,
        FakeAnthropicServer([], strict=False) as other,
    ):
        agent = make_agent(Alternative(ALTERNATE, client=other.client(max_retries=0)))
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
    assert result.ok is False
    context = result.error.context_for(AgentErrorCode.API_ERROR)
    assert context is not None
    assert [(a.model, a.error_type) for a in context.alternatives] == [
        (PRIMARY, "overloaded_error"),
        (ALTERNATE, "cannot_move"),
    ]
    assert "container 'container_1'" in context.alternatives[1].message
    assert other.requests_served == 0  # never sent a request naming a container it does not have


def test_mcp_connector_calls_cannot_move() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "mcp_tool_use", "id": "m1", "name": "t", "server_name": "s", "input": {}}],
        },
    ]
    assert "MCP connector session" in (cannot_move({}, messages) or "")
    assert cannot_move({}, messages[:1]) is None


def test_seams_are_kept_only_where_the_beta_allows_them() -> None:
    seam: dict[str, Any] = {"type": "fallback", "from": {"model": PRIMARY}, "to": {"model": ALTERNATE}}
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [seam, {"type": "text", "text": "x"}]},
    ]
    assert moved_messages(messages, thinking=True, keep_seams=True) is None
    dropped = moved_messages(messages, thinking=True, keep_seams=False)
    assert dropped == [messages[0], {"role": "assistant", "content": [{"type": "text", "text": "x"}]}]


# --- Streaming, tracing ---------------------------------------------------------------------------------------------


async def test_stream_agent_announces_the_switch() -> None:
    async with FakeAnthropicServer([api_error(529)]) as primary, FakeAnthropicServer([output_call({"n": 1})]) as other:
        agent = make_agent(Alternative(ALTERNATE, client=other.client(max_retries=0)))
        async with stream_agent(agent, "go", client=primary.client(max_retries=0)) as run:
            events = [event async for event in run]
    switched = [event for event in events if isinstance(event, FallbackSwitched)]
    assert [(e.from_model, e.to_model, e.reason, e.server_side) for e in switched] == [
        (PRIMARY, ALTERNATE, "overloaded_error", False)
    ]
    finished = events[-1]
    assert isinstance(finished, Finished)
    result: ExecuteResult[Out] = finished.result
    assert result.ok is True
    assert result.metadata.models_used == (ALTERNATE,)
    assert other.requests[0]["stream"] is True


async def test_the_switch_is_a_span_event_and_a_chat_span_attribute(captured_spans: InMemorySpanExporter) -> None:
    agent = make_agent(Alternative(ALTERNATE, client=ScriptedClient([response(output_call({"n": 1}))])))
    result = await execute_agent(agent, "go", client=ScriptedClient([api_error(529)]))
    assert result.ok is True
    spans = captured_spans.get_finished_spans()
    execution = next(span for span in spans if span.name.startswith("invoke_agent"))
    [event] = [event for event in execution.events if event.name == "typedagent.fallback"]
    assert dict(event.attributes or {})["typedagent.fallback.to_model"] == ALTERNATE
    chats = [dict(span.attributes or {}) for span in spans if span.name.startswith("chat ")]
    assert [chat.get("typedagent.fallback.to_model") for chat in chats] == [None, ALTERNATE]


# --- Platforms ------------------------------------------------------------------------------------------------------


def platform_answer(sent: list[httpx2.Request], name: str) -> httpx2.AsyncClient:
    """An HTTP client for a platform's SDK client: records its requests and answers with the output call."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        body = {
            "id": "msg_platform",
            "type": "message",
            "role": "assistant",
            "model": name,
            "content": [{"type": "tool_use", "id": "toolu_p", "name": "final_output", "input": {"n": 7}}],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        return httpx2.Response(200, json=body)

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handler))


async def test_alternatives_on_vertex_and_bedrock_get_their_platforms_request() -> None:
    """The same request goes out through each platform's own SDK client: its URL, its body, its model id."""
    vertex_sent: list[httpx2.Request] = []
    bedrock_sent: list[httpx2.Request] = []
    vertex = AsyncAnthropicVertex(
        region="us-east5",
        project_id="proj",
        access_token="token",
        max_retries=0,
        http_client=platform_answer(vertex_sent, "claude-sonnet-4-6"),
    )
    bedrock = AsyncAnthropicBedrock(
        aws_region="us-east-1", api_key="key", max_retries=0, http_client=platform_answer(bedrock_sent, "bedrock")
    )
    async with FakeAnthropicServer([api_error(529)]) as primary:
        agent = make_agent(
            Alternative("claude-sonnet-4-6@20250929", client=vertex),
            Alternative("us.anthropic.claude-sonnet-4-6", client=bedrock),
        )
        first = await execute_agent(agent, "go", client=primary.client(max_retries=0))
        async with (
            FakeAnthropicServer([api_error(529)]) as again,
            AsyncAnthropicVertex(
                region="us-east5",
                project_id="proj",
                access_token="token",
                max_retries=0,
                base_url=again.base_url,  # answers 404 to Vertex's paths: not a fault that moves on
            ) as wrong_vertex,
        ):
            vertex_down = make_agent(Alternative("claude-sonnet-4-6@20250929", client=wrong_vertex))
            missing = await execute_agent(vertex_down, "go", client=again.client(max_retries=0))
    assert first.ok is True
    assert first.output == Out(n=7)
    [vertex_request] = vertex_sent
    assert vertex_request.url.path.endswith("/models/claude-sonnet-4-6@20250929:rawPredict")
    vertex_body = json.loads(vertex_request.content)
    assert "model" not in vertex_body
    assert vertex_body["messages"] == primary.requests[0]["messages"]
    assert bedrock_sent == []  # Vertex answered: the chain stopped there
    assert first.metadata.models_used == ("claude-sonnet-4-6",)
    assert missing.ok is False
    context = missing.error.context_for(AgentErrorCode.API_ERROR)
    assert context is not None
    assert [a.model for a in context.alternatives] == [PRIMARY, "claude-sonnet-4-6@20250929"]


async def test_bedrock_alternative_after_vertex_fails() -> None:
    bedrock_sent: list[httpx2.Request] = []

    def down(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(503, json={"type": "error", "error": {"type": "api_error", "message": "down"}})

    vertex = AsyncAnthropicVertex(
        region="us-east5",
        project_id="proj",
        access_token="token",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(down)),
    )
    bedrock = AsyncAnthropicBedrock(
        aws_region="us-east-1", api_key="key", max_retries=0, http_client=platform_answer(bedrock_sent, "bedrock")
    )
    switches = Switches()
    async with FakeAnthropicServer([api_error(529)]) as primary:
        agent = make_agent(
            Alternative("claude-sonnet-4-6@20250929", client=vertex),
            Alternative("us.anthropic.claude-sonnet-4-6", client=bedrock),
        )
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0), callbacks=switches.callbacks)
    assert result.ok is True
    [request] = bedrock_sent
    assert request.url.path == "/model/us.anthropic.claude-sonnet-4-6/invoke"
    body = json.loads(request.content)
    assert "model" not in body
    assert body["anthropic_version"]
    assert body["messages"] == primary.requests[0]["messages"]
    assert [(e.to_model, e.reason, e.status_code) for e in switches.events] == [
        ("claude-sonnet-4-6@20250929", "overloaded_error", 529),
        ("us.anthropic.claude-sonnet-4-6", "api_error", 503),
    ]
    # Priced as the model it is (a Bedrock id has its model's list price).
    assert result.metadata.cost_usd is not None


async def test_a_foundry_alternative_is_called_by_the_client_not_the_servers_fallbacks() -> None:
    """Foundry speaks the first-party API but is not Anthropic's own: refusals move on client-side."""
    async with (
        FakeAnthropicServer([response(stop_reason="refusal")]) as primary,
        FakeAnthropicServer([response(stop_reason="refusal"), output_call({"n": 1})]) as foundry_server,
        AsyncAnthropicFoundry(base_url=foundry_server.base_url, api_key="key", max_retries=0) as foundry,
    ):
        agent = make_agent(
            Alternative("claude-sonnet-4-6", client=foundry),
            Alternative(ALTERNATE, client=foundry),
            fallback_on_refusal=True,
        )
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
    assert result.ok is True
    assert [request["model"] for request in foundry_server.requests] == ["claude-sonnet-4-6", ALTERNATE]
    assert all("fallbacks" not in request for request in foundry_server.requests)


async def test_a_journal_keeps_the_models_used_and_the_alternatives_tried(tmp_path: Path) -> None:
    journal = tmp_path / "run.jsonl"

    def run(client: ScriptedClient, other: ScriptedClient) -> Any:
        agent = make_agent(Alternative(ALTERNATE, client=other))
        return execute_many(agent, [RunInput("a", key="a")], client=client, journal=journal)

    first = [item async for item in run(ScriptedClient([api_error(529)]), ScriptedClient([api_error(500)]))]
    again = [item async for item in run(ScriptedClient([]), ScriptedClient([]))]
    assert again[0].resumed is True
    before, after = first[0].result, again[0].result
    assert before.ok is False
    assert after.ok is False
    assert after.error.context == before.error.context
    context = after.error.context_for(AgentErrorCode.API_ERROR)
    assert context is not None
    assert [(a.model, a.status_code) for a in context.alternatives] == [(PRIMARY, 529), (ALTERNATE, 500)]
    assert all(isinstance(a, AlternativeFailure) for a in context.alternatives)

    journal.unlink()
    [done] = [
        item async for item in run(ScriptedClient([api_error(529)]), ScriptedClient([response(output_call({"n": 1}))]))
    ]
    [resumed] = [item async for item in run(ScriptedClient([]), ScriptedClient([]))]
    assert resumed.resumed is True
    assert resumed.result.metadata.models_used == done.result.metadata.models_used == (ALTERNATE,)


def test_with_options_replaces_the_chain() -> None:
    agent = make_agent(ALTERNATE, fallback_on_refusal=True)
    client = ScriptedClient([])
    other = agent.with_options(
        fallback=[Alternative(ALTERNATE, client=client)], fallback_policy=FallbackPolicy(stay_s=1)
    )
    assert other.fallback == (Alternative(ALTERNATE, client=client),)
    assert (other.fallback_on_refusal, other.fallback_policy.stay_s) == (True, 1)
    assert agent.with_options(model="claude-opus-4-8").fallback == agent.fallback
    assert agent.with_options(fallback=[], fallback_on_refusal=False).fallback == ()
    with pytest.raises(AgentDefinitionError, match="the agent's own model"):
        agent.with_options(model=ALTERNATE)


async def test_when_every_model_is_skipped_nothing_is_sent() -> None:
    """Both breakers open (shared by execute_many): the next execution fails at once, no request sent."""
    async with (
        FakeAnthropicServer([api_error(529)], per_conversation=True) as primary,
        FakeAnthropicServer([api_error(500)], per_conversation=True) as other,
    ):
        policy = FallbackPolicy(breaker_threshold=1, breaker_cooldown_s=3600)
        agent = make_agent(Alternative(ALTERNATE, client=other.client(max_retries=0)), fallback_policy=policy)
        stream = execute_many(agent, ["one", "two"], client=primary.client(max_retries=0), concurrency=1)
        results = sorted([item async for item in stream], key=lambda item: item.index)
    assert (primary.requests_served, other.requests_served) == (1, 1)
    second = results[1].result
    assert second.ok is False
    context = second.error.context_for(AgentErrorCode.API_ERROR)
    assert context is not None
    assert context.error_type == "no_model_available"
    assert [(a.model, a.error_type) for a in context.alternatives] == [
        (PRIMARY, "circuit_open"),
        (ALTERNATE, "circuit_open"),
    ]
    assert second.metadata.iterations == 0
    assert "breaker_cooldown_s" in second.error.message


async def test_under_execute_manys_rate_limiter_a_long_retry_after_moves_on_instead_of_being_waited_out() -> None:
    async with (
        FakeAnthropicServer([api_error(429, retry_after=120)], per_conversation=True) as primary,
        FakeAnthropicServer([output_call({"n": 1})], per_conversation=True) as other,
    ):
        agent = make_agent(
            Alternative(ALTERNATE, client=other.client(max_retries=0)),
            fallback_policy=FallbackPolicy(breaker_threshold=100),
        )
        started = time.monotonic()
        stream = execute_many(agent, ["a", "b", "c"], client=primary.client(max_retries=0), concurrency=3)
        results = await asyncio.wait_for(_collect(stream), timeout=60)
        elapsed = time.monotonic() - started
    assert elapsed < 30  # the limiter would have waited 120 s (its max_wait_s is 600)
    assert all(item.result.ok for item in results)
    assert all(item.result.metadata.models_used == (ALTERNATE,) for item in results)
    assert other.requests_served == 3


async def _collect(stream: Any) -> list[Any]:
    return [item async for item in stream]


# --- More of what moves on, and how -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "moves"),
    [
        ({"retry-after-ms": "120000"}, True),
        ({"retry-after-ms": "1000"}, False),
        ({"retry-after": "Wed, 21 Oct 2099 07:28:00 GMT"}, True),  # a date far ahead
        ({"retry-after": "soon"}, True),  # unreadable: the wait is unknown
        ({"retry-after": "inf"}, True),
    ],
)
async def test_retry_after_in_every_form_the_api_sends(headers: dict[str, str], moves: bool) -> None:
    async with (
        FakeAnthropicServer([api_error(429, headers=headers)]) as primary,
        FakeAnthropicServer([output_call({"n": 1})], strict=False) as other,
    ):
        agent = make_agent(Alternative(ALTERNATE, client=other.client(max_retries=0)))
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
    assert result.ok is moves
    assert other.requests_served == (1 if moves else 0)


async def test_an_error_event_mid_stream_moves_the_streamed_call_on() -> None:
    switches = Switches()
    async with (
        FakeAnthropicServer([stream_error(output_call({"n": 1}), error_type="overloaded_error")]) as primary,
        FakeAnthropicServer([output_call({"n": 2})]) as other,
    ):
        agent = make_agent(Alternative(ALTERNATE, client=other.client(max_retries=0)))
        async with stream_agent(agent, "go", client=primary.client(max_retries=0), callbacks=switches.callbacks) as run:
            events = [event async for event in run]
    result = run.result
    assert result.ok is True
    assert result.output == Out(n=2)
    assert [(e.reason, e.status_code) for e in switches.events] == [("overloaded_error", 200)]
    assert any(isinstance(event, FallbackSwitched) for event in events)


async def test_a_timeout_during_an_alternatives_call_interrupts_it() -> None:
    async with (
        FakeAnthropicServer([api_error(529)]) as primary,
        FakeAnthropicServer([delay(30, output_call({"n": 1}))]) as other,
    ):
        agent = make_agent(Alternative(ALTERNATE, client=other.client(max_retries=0)))
        started = time.monotonic()
        result = await execute_agent(
            agent, "go", client=primary.client(max_retries=0), limits=ExecutionLimits(timeout_s=0.5)
        )
    assert time.monotonic() - started < 10
    assert result.ok is False
    assert result.error.code is AgentErrorCode.TIMEOUT


async def test_a_refusal_naming_a_recommended_model_has_typedagent_try_it() -> None:
    """The server could not run its fallback (stop_details.recommended_model): the client tries that model."""
    details = json.loads(refusal_body(PRIMARY))
    details["stop_details"]["recommended_model"] = ALTERNATE
    async with FakeAnthropicServer([malformed_body(json.dumps(details)), output_call({"n": 1})]) as server:
        agent = make_agent(ALTERNATE, fallback_on_refusal=True)
        result = await execute_agent(agent, "go", client=server.client(max_retries=0))
    assert result.ok is True
    first, second = server.requests
    assert first["fallbacks"] == [{"model": ALTERNATE}]
    assert second["model"] == ALTERNATE
    assert "fallbacks" not in second


async def test_server_entries_carry_what_differs_for_that_model() -> None:
    async with FakeAnthropicServer([response(stop_reason="refusal")], strict=False) as server:
        agent = make_agent(
            Alternative(ALTERNATE, model_settings={}, max_tokens=2000),
            Alternative("claude-opus-4-8", model_settings={**THINKING, "speed": "fast"}),
            Alternative("claude-sonnet-4-5", model_settings={"stop_sequences": ["END"]}),
            fallback_on_refusal=True,
            model_settings=THINKING,
        )
        await execute_agent(agent, "go", client=server.client(max_retries=0))
    # The third differs in stop_sequences, which an entry cannot say: the list stops before it.
    assert server.requests[0]["fallbacks"] == [
        {"model": ALTERNATE, "max_tokens": 2000, "thinking": {"type": "disabled"}},
        {"model": "claude-opus-4-8", "speed": "fast"},
    ]


async def test_the_command_lines_progress_shows_each_switch() -> None:
    stream = io.StringIO()
    progress = Progress(stream, json_events=True)
    agent = make_agent(Alternative(ALTERNATE, client=ScriptedClient([response(output_call({"n": 1}))])))
    progress.start(agent, label="x:agent", mode="scripted")
    result = await execute_agent(agent, "go", client=ScriptedClient([api_error(529)]), callbacks=progress.callbacks())
    progress.finish(result)
    events = [json.loads(line) for line in stream.getvalue().splitlines()]
    [switch] = [event for event in events if event["event"] == "fallback"]
    assert (switch["from_model"], switch["to_model"], switch["reason"], switch["status_code"]) == (
        PRIMARY,
        ALTERNATE,
        "overloaded_error",
        529,
    )
    plain = io.StringIO()
    lines = Progress(plain)
    lines.start(agent, label="x:agent", mode="scripted")
    again = make_agent(Alternative(ALTERNATE, client=ScriptedClient([response(output_call({"n": 1}))])))
    await execute_agent(again, "go", client=ScriptedClient([api_error(529)]), callbacks=lines.callbacks())
    assert f"{PRIMARY} → {ALTERNATE}" in plain.getvalue()


# --- Recorded shapes ------------------------------------------------------------------------------------------------


def calling_lookup(message: dict[str, Any]) -> str:
    """A recorded response that goes on to call the ``lookup`` helper (so the run makes another call)."""
    call = {"type": "tool_use", "id": "toolu_01Lookup", "name": "lookup", "input": {"query": "x"}}
    return json.dumps({**message, "content": [*message["content"], call], "stop_reason": "tool_use"})


async def test_a_recorded_thinking_signature_moves_verbatim_to_a_thinking_alternative() -> None:
    thought = recorded("thinking_response.json")
    recorded_block = thought["content"][0]
    async with (
        FakeAnthropicServer(
            [malformed_body(calling_lookup({**thought, "content": [recorded_block]})), api_error(529)]
        ) as primary,
        FakeAnthropicServer([output_call({"n": 1})]) as other,
    ):
        agent = make_agent(Alternative(ALTERNATE, client=other.client(max_retries=0)), model_settings=THINKING)
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
    assert result.ok is True
    sent = other.requests[0]["messages"][1]["content"][0]
    assert sent == recorded_block  # signature and all, as the API sent it


async def test_recorded_mcp_connector_calls_stay_on_the_primarys_client() -> None:
    """The recorded MCP connector turn: another client is skipped (cannot_move); the same client takes it."""
    deepwiki = {"type": "url", "name": "deepwiki", "url": "https://mcp.deepwiki.com/mcp"}
    async with (
        FakeAnthropicServer(
            [malformed_body(calling_lookup(recorded("mcp_response.json"))), api_error(529), output_call({"n": 1})]
        ) as primary,
        FakeAnthropicServer([], strict=False) as other,
    ):
        agent = make_agent(
            Alternative(ALTERNATE, client=other.client(max_retries=0)),
            "claude-opus-4-8",
            model_settings={"mcp_servers": [deepwiki]},
            server_tools=[{"type": "mcp_toolset", "mcp_server_name": "deepwiki"}],
        )
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0))
    assert result.ok is True
    assert other.requests_served == 0
    third = primary.requests[2]
    assert third["model"] == "claude-opus-4-8"
    assert [block["type"] for block in third["messages"][1]["content"]] == [
        "mcp_tool_use",
        "mcp_tool_result",
        "text",
        "tool_use",
    ]  # the recorded thinking block goes: this model is called without thinking
    assert third["mcp_servers"] == [deepwiki]


async def test_a_recorded_code_execution_container_stays_on_the_primarys_client() -> None:
    async with (
        FakeAnthropicServer(
            [
                malformed_body(calling_lookup(recorded("code_execution_response.json"))),
                api_error(529),
                output_call({"n": 1}),
            ]
        ) as primary,
        FakeAnthropicServer([], strict=False) as other,
    ):
        agent = make_agent(
            Alternative(ALTERNATE, client=other.client(max_retries=0)),
            "claude-opus-4-8",
            server_tools=[code_execution()],
        )
        switches = Switches()
        result = await execute_agent(agent, "go", client=primary.client(max_retries=0), callbacks=switches.callbacks)
    assert result.ok is True
    assert other.requests_served == 0
    assert primary.requests[2]["container"] == "container_011Caqgq9X3d68B2So2LZGmk"
    assert [(e.to_model, e.reason) for e in switches.events] == [("claude-opus-4-8", "overloaded_error")]


async def test_server_side_fallbacks_go_through_execute_manys_rate_limited_client() -> None:
    async with FakeAnthropicServer([response(stop_reason="refusal"), output_call({"n": 1})]) as server:
        agent = make_agent(
            ALTERNATE,
            Alternative("claude-opus-4-8", model_settings={"stop_sequences": ["END"]}),
            fallback_on_refusal=True,
        )
        [item] = [item async for item in execute_many(agent, ["go"], client=server.client(max_retries=0))]
    assert item.result.ok is True
    first, second = server.requests
    assert first["fallbacks"] == [{"model": ALTERNATE}]
    assert "server-side-fallback-2026-07-01" in server.request_headers[0]["anthropic-beta"]
    assert (second["model"], "fallbacks" in second) == ("claude-opus-4-8", False)


async def test_a_streamed_refusal_moves_on_and_the_stream_says_so() -> None:
    async with (
        FakeAnthropicServer([response(text("I won't"), stop_reason="refusal")]) as primary,
        FakeAnthropicServer([output_call({"n": 1})]) as other,
    ):
        agent = make_agent(Alternative(ALTERNATE, client=other.client(max_retries=0)), fallback_on_refusal=True)
        async with stream_agent(agent, "go", client=primary.client(max_retries=0)) as run:
            events = [event async for event in run]
    assert run.result.ok is True
    assert primary.requests[0]["stream"] is True
    kinds = [event.kind for event in events]
    switched = kinds.index("fallback_switched")
    assert kinds.index("text_delta") < switched  # the refused text streamed, then the switch says it is void
    [event] = [event for event in events if isinstance(event, FallbackSwitched)]
    assert (event.reason, event.to_model) == ("refusal", ALTERNATE)
    assert "I won't" not in json.dumps(run.result.metadata.messages)

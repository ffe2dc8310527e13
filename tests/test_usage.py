"""Usage is complete: per-iteration tokens, server tool requests, the model that answered, request ids."""

from __future__ import annotations

import typing
import unittest.mock
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic._models import construct_type
from anthropic.types import Usage
from anthropic.types.beta import BetaUsage
from anthropic.types.beta.beta_iterations_usage import BetaIterationsUsageItem
from hypothesis import given, settings
from hypothesis import strategies as st
from support import GOOD, handing_over, recorded, run, triage_agent

from typedagent import AgentErrorCode, ApiErrorContext, ExecutionLimits, TokenUsage, execute_agent
from typedagent._api.pricing import price_for, priced_usage
from typedagent._shared.results import usual_usage
from typedagent._shared.usage import ITERATIONS_IN_TOP_LEVEL
from typedagent.testing import FunctionClient, ScriptedClient, iteration_usage, output_call, response, usage


def test_every_iteration_kind_of_the_sdk_is_classified() -> None:
    """ITERATIONS_IN_TOP_LEVEL covers each usage.iterations entry type the SDK knows (a new one fails here)."""
    (union, *_) = typing.get_args(BetaIterationsUsageItem)
    kinds = {typing.get_args(entry.model_fields["type"].annotation)[0] for entry in typing.get_args(union)}
    assert set(ITERATIONS_IN_TOP_LEVEL) == kinds


def test_compaction_tokens_reported_only_per_iteration_are_counted() -> None:
    """The recorded compaction's 55,196 input tokens, absent from the top-level usage, are in the totals.

    compaction_response.json is pydantic-ai's test_anthropic_compaction_end_to_end.yaml.
    """
    message = recorded("compaction_response.json")
    assert message["usage"]["input_tokens"] == 220
    assert TokenUsage.from_usage(message["usage"]) == TokenUsage(input_tokens=220 + 55_196, output_tokens=8 + 125)


def test_advisor_tokens_are_counted_and_executor_iterations_not_twice() -> None:
    """The advisor's iteration is added; the executor's message iterations are already the top-level counters.

    advisor_response.json is pydantic-ai's test_anthropic_advisor_tool.yaml: top-level 2,390 input tokens =
    1,128 + 1,262 (message iterations); the advisor_message iteration used 2,518 more.
    """
    counted = TokenUsage.from_usage(recorded("advisor_response.json")["usage"])
    assert counted == TokenUsage(input_tokens=2390 + 2518, output_tokens=121 + 22)


def test_server_tool_requests_are_read_and_summed() -> None:
    """usage.server_tool_use gives web_search_requests and web_fetch_requests, added like the token counters."""
    paused, resumed = recorded("pause_turn_responses.json")
    fetched = recorded("web_fetch_response.json")
    total = sum((TokenUsage.from_usage(message["usage"]) for message in (paused, resumed, fetched)), TokenUsage())
    assert (total.web_search_requests, total.web_fetch_requests) == (15, 1)
    assert total.total == total.input_tokens + total.output_tokens  # requests are not tokens


def test_cache_writes_are_split_by_ttl() -> None:
    """usage.cache_creation gives the 1-hour writes among cache_creation_input_tokens; iterations add theirs."""
    raw = {
        "input_tokens": 5,
        "output_tokens": 1,
        "cache_creation_input_tokens": 248,
        "cache_creation": {"ephemeral_5m_input_tokens": 148, "ephemeral_1h_input_tokens": 100},
        "iterations": [
            {
                "type": "compaction",
                "input_tokens": 1,
                "output_tokens": 1,
                "cache_creation_input_tokens": 30,
                "cache_creation": {"ephemeral_5m_input_tokens": 10, "ephemeral_1h_input_tokens": 20},
            }
        ],
    }
    counted = TokenUsage.from_usage(raw)  # type: ignore[arg-type]
    assert (counted.cache_creation_input_tokens, counted.cache_creation_1h_input_tokens) == (278, 120)
    assert counted.cache_creation_5m_input_tokens == 158
    assert TokenUsage.from_usage(anthropic.types.Usage.model_validate(raw)).cache_creation_1h_input_tokens == 120
    # The split alone stands for the total; a 1-hour count above the total is cut to it.
    only_split = {"input_tokens": 1, "output_tokens": 1, "cache_creation": {"ephemeral_5m_input_tokens": 3}}
    assert TokenUsage.from_usage(only_split).cache_creation_input_tokens == 3  # type: ignore[arg-type]
    broken = {
        "input_tokens": 1,
        "output_tokens": 1,
        "cache_creation_input_tokens": 4,
        "cache_creation": {"ephemeral_1h_input_tokens": 9, "ephemeral_5m_input_tokens": -2},
    }
    assert TokenUsage.from_usage(broken).cache_creation_1h_input_tokens == 4  # type: ignore[arg-type]
    assert (counted + counted).cache_creation_1h_input_tokens == 240


def test_malformed_iterations_count_nothing() -> None:
    """Iterations that are not a list, entries without counters or with negative ones add nothing."""
    assert TokenUsage.from_usage({"input_tokens": 5, "output_tokens": 1, "iterations": "x"}) == TokenUsage(  # type: ignore[arg-type]
        input_tokens=5, output_tokens=1
    )
    broken = {"input_tokens": 5, "output_tokens": 1, "iterations": [{"type": "compaction", "input_tokens": -9}, 3]}
    assert TokenUsage.from_usage(broken) == TokenUsage(input_tokens=5, output_tokens=1)  # type: ignore[arg-type]


async def test_max_total_tokens_counts_tokens_reported_per_iteration() -> None:
    """A compaction's tokens count against the budget: the next call is not made."""
    compacted = usage(
        input_tokens=220,
        output_tokens=8,
        iterations=[iteration_usage("compaction", 55_196, 125), iteration_usage("message", 220, 8)],
    )
    client = ScriptedClient([response("Compacted; working on it.", stop_reason="end_turn", usage=compacted)])
    result = await run(triage_agent(), client, limits=ExecutionLimits(max_total_tokens=50_000))
    assert not result.ok
    assert result.error.code is AgentErrorCode.TOKEN_BUDGET_EXCEEDED
    assert result.metadata.tokens.total == 55_196 + 125 + 220 + 8
    assert len(client.requests) == 1


async def test_metadata_records_the_model_that_answered() -> None:
    """response_model is the dated id the response named; model stays the alias the agent asked for."""
    client = ScriptedClient([response(output_call(GOOD), model="claude-sonnet-4-6-20260217")])
    result = await run(triage_agent(), client)
    assert (result.metadata.model, result.metadata.response_model) == (
        "claude-sonnet-4-6",
        "claude-sonnet-4-6-20260217",
    )


async def test_response_model_is_none_when_nothing_answered() -> None:
    """An execution whose only call failed has no response model."""
    from typedagent.testing import api_error

    result = await run(triage_agent(), ScriptedClient([api_error(400)]))
    assert result.metadata.response_model is None


async def test_request_id_is_read_from_the_error_body_when_the_header_is_missing() -> None:
    """A 404 whose headers carry no request-id still names its request: the error body's request_id.

    error_without_request_id_header.json is pydantic-ai's test_anthropic_count_tokens_error.yaml.
    """
    recorded_error = recorded("error_without_request_id_header.json")

    async def answer(request: object) -> object:
        http = httpx2.Response(
            recorded_error["status"],
            json=recorded_error["body"],
            headers=recorded_error["headers"],
            request=httpx2.Request("POST", "https://api.anthropic.com/v1/messages"),
        )
        raise anthropic.NotFoundError("Error code: 404", response=http, body=recorded_error["body"])

    result = await execute_agent(triage_agent(), "hi", client=FunctionClient(answer))  # type: ignore[arg-type]
    assert not result.ok
    context = result.error.context
    assert isinstance(context, ApiErrorContext)
    assert (context.status_code, context.request_id) == (404, "req_011CVEA3SF7rnb3DuBZytqQa")


@pytest.mark.parametrize("body", [None, "not json", {"request_id": 7}, {"request_id": ""}])
async def test_no_request_id_anywhere_is_none(body: object) -> None:
    """Without the header and without a string request_id in the body, request_id is None."""

    async def answer(request: object) -> object:
        http = httpx2.Response(500, request=httpx2.Request("POST", "https://api.anthropic.com/v1/messages"))
        raise anthropic.InternalServerError("Error code: 500", response=http, body=body)

    result = await execute_agent(triage_agent(), "hi", client=FunctionClient(answer))  # type: ignore[arg-type]
    assert not result.ok
    assert isinstance(result.error.context, ApiErrorContext)
    assert result.error.context.request_id is None


async def test_execution_totals_include_each_responses_server_requests() -> None:
    """metadata.tokens sums web searches over the paused and the resumed response of one turn."""
    paused, resumed = recorded("pause_turn_responses.json")
    responses = [paused, handing_over(resumed, GOOD)]
    result = await run(triage_agent(), FunctionClient(lambda request: responses.pop(0)))  # type: ignore[arg-type]
    assert result.metadata.tokens.web_search_requests == 15
    assert result.metadata.attempts[0].tokens.web_search_requests == 15
    assert result.metadata.tokens.input_tokens == 401_468 + 494_549


_COUNT = st.one_of(st.none(), st.integers(-5, 10_000), st.booleans())
_SPLIT = st.one_of(
    st.none(),
    st.fixed_dictionaries({"ephemeral_1h_input_tokens": _COUNT, "ephemeral_5m_input_tokens": _COUNT}),
)


@settings(max_examples=300, deadline=None)
@given(
    counts=st.fixed_dictionaries(
        {
            "input_tokens": _COUNT,
            "output_tokens": _COUNT,
            "cache_creation_input_tokens": _COUNT,
            "cache_read_input_tokens": _COUNT,
        }
    ),
    split=_SPLIT,
    searches=st.one_of(st.none(), st.integers(0, 3)),
    iterations=st.booleans(),
    beta=st.booleans(),
    batch=st.booleans(),
)
def test_the_usual_usage_shortcut_reads_what_the_full_reading_does(
    counts: dict[str, object], split: object, searches: int | None, iterations: bool, beta: bool, batch: bool
) -> None:
    """Counts and price read straight from an SDK Usage equal the full reading, for every shape it takes or declines.

    The shortcut takes a Usage of the usual shape (None or non-negative counts, a cache split, no server tool
    requests, no iterations) and declines the rest (``usual_usage`` returns None), which the full reading handles.
    Usages are built as the SDK builds responses (``construct_type``, no validation): any value can arrive.
    """
    data: dict[str, object] = {**counts, "cache_creation": split, "service_tier": "batch" if batch else "standard"}
    if searches is not None:
        data["server_tool_use"] = {"web_search_requests": searches}
    if iterations:
        data["iterations"] = [{"type": "compaction", "input_tokens": 7, "output_tokens": 3}]
    raw = construct_type(type_=BetaUsage if beta else Usage, value=data)
    full = TokenUsage.from_usage(typing.cast("Any", raw))
    usual = usual_usage(raw)
    if usual is not None:
        assert usual == full
    price = price_for("claude-sonnet-4-6")
    assert price is not None
    with unittest.mock.patch("typedagent._api.pricing.usual_usage", return_value=None):
        read_fully = priced_usage(raw, price)
    assert priced_usage(raw, price) == read_fully
    assert read_fully.usage == full


def test_the_usual_usage_shortcut_takes_a_recorded_response_s_usage() -> None:
    """A real response's usage (cache split, service tier, inference geo) is of the usual shape, with writes too.

    native_output_no_tools.json is pydantic-ai's test_no_tools_native_output_strict_true.yaml.
    """
    body = recorded("native_output_no_tools.json")["response"]["body"]
    message = construct_type(type_=anthropic.types.Message, value=body)
    assert usual_usage(message.usage) == TokenUsage(input_tokens=196, output_tokens=19)
    split = {"ephemeral_1h_input_tokens": 10, "ephemeral_5m_input_tokens": 20}
    writing = body["usage"] | {"cache_creation": split, "cache_creation_input_tokens": 30}
    message = construct_type(type_=anthropic.types.Message, value=body | {"usage": writing})
    expected = TokenUsage(
        input_tokens=196, output_tokens=19, cache_creation_input_tokens=30, cache_creation_1h_input_tokens=10
    )
    assert usual_usage(message.usage) == expected == TokenUsage.from_usage(message.usage)

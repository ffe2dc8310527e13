"""The built-in evaluators: expected output, fields, containment, predicates, outcomes, budgets, tool use."""

from __future__ import annotations

import pytest
from evals_support import PARIS, City, context

from typedagent import AgentErrorCode, TokenUsage
from typedagent.evals import (
    Budget,
    Contains,
    ExpectedOutput,
    FieldEquals,
    Outcome,
    Predicate,
    Score,
    ToolCalled,
    ToolCalledWith,
    ToolCount,
    ToolNotCalled,
    ToolOrder,
)

WRONG = PARIS.model_copy(update={"population": 2_150_000, "tags": ["capital"]})
FAILED = {"output": None, "error_code": AgentErrorCode.MAX_ITERATIONS, "error_message": "ran out"}


def test_expected_output_passes_on_equal_output() -> None:
    """An output equal to the expected one scores 1.0 and passes."""
    assert ExpectedOutput().evaluate(context()) == Score(
        evaluator="ExpectedOutput", passed=True, value=1.0, reason="matches"
    )


def test_expected_output_scores_the_fraction_of_matching_fields() -> None:
    """Each differing field is named, and the score is the share of leaves that match."""
    score = ExpectedOutput().evaluate(context(output=WRONG))
    assert score.passed is False
    assert score.value == pytest.approx(1 - 2 / 4)
    assert score.reason == "population: expected 2100000, got 2150000; tags: expected 2 item(s), got 1"


def test_expected_output_tolerances_and_ignored_fields() -> None:
    """Numbers within the tolerance are equal, and ignored paths are left out."""
    assert ExpectedOutput(tolerance=50_000, ignore=("tags",)).evaluate(context(output=WRONG)).passed is True
    assert ExpectedOutput(relative=0.01, ignore=("tags",)).evaluate(context(output=WRONG)).passed is False
    assert ExpectedOutput(relative=0.05, ignore=("tags",)).evaluate(context(output=WRONG)).passed is True


def test_expected_output_fails_without_expected_or_output() -> None:
    """A case without ``expected`` and a failed execution both fail, saying why."""
    assert "has no expected output" in ExpectedOutput().evaluate(context(expected=None)).reason
    assert ExpectedOutput().evaluate(context(**FAILED)).reason == "no output: the execution failed with MAX_ITERATIONS"


def test_field_equals_compares_one_field() -> None:
    """A dotted path picks the field; numeric strings compare as numbers; a missing field fails."""
    assert FieldEquals(path="population", value="2100000").evaluate(context()).passed is True
    assert FieldEquals(path="tags.1", value="france").evaluate(context()).passed is True
    wrong = FieldEquals(path="population", value=2_000_000, tolerance=1000).evaluate(context())
    assert (wrong.passed, wrong.reason) == (False, "population: expected 2000000, got 2100000")
    assert FieldEquals(path="mayor", value="x").evaluate(context()).reason == "the output has no field 'mayor'"
    assert FieldEquals(path="name", value="Paris").evaluate(context(**FAILED)).passed is False


def test_contains_checks_strings_lists_and_the_whole_output() -> None:
    """Substrings of strings, items of lists, the JSON of the whole output; optionally ignoring case."""
    assert Contains(path="tags", value="france").evaluate(context()).passed is True
    assert Contains(path="tags", value="fr").evaluate(context()).passed is False
    assert Contains(path="name", value="PAR").evaluate(context()).passed is False
    assert Contains(path="name", value="PAR", case_sensitive=False).evaluate(context()).passed is True
    assert Contains(value='"population": 2100000').evaluate(context()).passed is True
    assert Contains(path="mayor", value="x").evaluate(context()).passed is False
    assert Contains(value="x").evaluate(context(**FAILED)).passed is False


def test_predicate_takes_bools_and_fractions() -> None:
    """A bool is pass/fail; a float passes at ``pass_at`` and is clamped to 0..1."""

    def big(city: City) -> bool:
        return city.population > 1_000_000

    assert Predicate(function=big).evaluate(context()) == Score(
        evaluator="big", passed=True, value=1.0, reason="big returned True"
    )

    def share(city: City) -> float:
        return len(city.tags) * 0.3

    half = Predicate(function=share, label="half", pass_at=0.5).evaluate(context())
    assert (half.passed, half.value) == (True, 0.6)
    assert Predicate(function=share, pass_at=0.7).evaluate(context()).passed is False
    assert Predicate(function=big).evaluate(context(**FAILED)).passed is False


def test_outcome_expects_success_or_a_failure_code() -> None:
    """``Outcome`` compares the execution's ending with the expected one; unknown codes are refused."""
    assert Outcome().evaluate(context()).passed is True
    assert Outcome().evaluate(context(**FAILED)).reason == "ended with MAX_ITERATIONS: ran out"
    assert Outcome(expect="MAX_ITERATIONS").evaluate(context(**FAILED)).passed is True
    with pytest.raises(ValueError, match="expect one of"):
        Outcome(expect="crashed")


def test_budget_names_every_exceeded_limit() -> None:
    """Each limit over budget is listed; an unknown cost fails a cost limit."""
    run = context(iterations=4, attempts=2, tokens=TokenUsage(input_tokens=900, output_tokens=200), latency_ms=50)
    assert Budget(max_iterations=4, max_attempts=2, max_tokens=1100, max_latency_ms=100).evaluate(run).passed is True
    over = Budget(max_iterations=3, max_attempts=1, max_tokens=1000, max_cost_usd=0.1).evaluate(run)
    assert over.reason == "iterations: 4 > 3; attempts: 2 > 1; tokens: 1100 > 1000; cost_usd: unknown, limit 0.1"


def test_score_value_must_lie_between_0_and_1() -> None:
    """A score outside 0..1 is a bug in the evaluator."""
    with pytest.raises(ValueError, match="between 0 and 1"):
        Score(evaluator="x", passed=True, value=1.5)


MESSAGES = [
    {"role": "user", "content": "Tell me about Paris"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Looking it up."},
            {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"city": "Paris", "limit": 3}},
            {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "paris"}},
        ],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "final_output", "input": {}}]},
]


def test_tool_checks_read_the_conversation() -> None:
    """Called, not called, called with, order and count come from the assistant's tool calls."""
    run = context(messages=MESSAGES)
    assert [use.name for use in run.tool_uses] == ["lookup", "web_search", "final_output"]
    assert ToolCalled(tool="lookup").evaluate(run).passed is True
    assert ToolCalled(tool="search").evaluate(run).reason == (
        "called 0 time(s); tools called: ['lookup', 'web_search', 'final_output']"
    )
    assert ToolNotCalled(tool="search").evaluate(run).passed is True
    assert ToolNotCalled(tool="lookup").evaluate(run).passed is False
    assert ToolCalledWith(tool="lookup", arguments={"city": "Paris"}).evaluate(run).passed is True
    assert ToolCalledWith(tool="lookup", arguments={"city": "Rome"}).evaluate(run).reason == (
        "no call of 'lookup' matches: city: expected 'Rome', got 'Paris'"
    )
    assert ToolCalledWith(tool="search").evaluate(run).reason == "'search' was never called"
    assert ToolOrder(tools=("lookup", "final_output")).evaluate(run).passed is True
    assert ToolOrder(tools=("final_output", "lookup")).evaluate(run).passed is False
    assert ToolCount(tool="lookup", min=1, max=1).evaluate(run).passed is True
    assert ToolCount(max=2).evaluate(run).reason == "3 call(s), expected 0..2"

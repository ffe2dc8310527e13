"""Reading a JSON answer from the model's text: whole, fenced, in prose, or not there (a problem, never a crash)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from typedagent._run.json_text import MAX_STARTS, complete_object, json_start, read_json, turn_text
from typedagent._run.request import PROMPTED_SCHEMA_HEADING, schema_in_prompt


def block(kind: str, text: str = "") -> Any:
    """A response content block as the loop reads it."""
    return SimpleNamespace(type=kind, text=text)


@pytest.mark.parametrize(
    "text",
    [
        '{"city": "Paris", "n": 2}',
        '  \n{"city":"Paris","n":2}\n',
        'Here is the answer:\n```json\n{"city": "Paris", "n": 2}\n```\nAnything else?',
        '```\n{"city": "Paris", "n": 2}\n```',
        'The answer is {"city": "Paris", "n": 2}. Hope that helps {really}.',
        'Before {not json} then {"city": "Paris", "n": 2}',
        '```json\n{"city": "Paris", "n": 2}',
        'Inline ```{"city": "Paris", "n": 2}```',
    ],
)
def test_read_json_finds_the_object(text: str) -> None:
    """The whole text, a fenced block (closed or not), or the first complete object in prose."""
    assert read_json(text).value == {"city": "Paris", "n": 2}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"city": "Par', "the answer is not valid JSON (Unterminated string starting at: line 1 column 10"),
        ("The capital of France is Paris.", "the answer holds no JSON object"),
        ("I'd say {city: Paris}", "the JSON object in the answer is not valid JSON"),
        ("[1, 2]", "the answer is a JSON array, not an object"),
        ('"Paris"', "the answer is a JSON string, not an object"),
        ("42", "the answer is a JSON number, not an object"),
        ("null", "the answer is a JSON null, not an object"),
        ('{"n": NaN}', "the answer is not valid JSON (NaN is not JSON)"),
        ("[" * 100_000, "the answer is not valid JSON (nested too deeply)"),
    ],
)
def test_read_json_problems_are_phrased_for_the_model(text: str, problem: str) -> None:
    """Truncated JSON, prose without JSON, a value that is not an object: a problem to tell the model."""
    read = read_json(text)
    assert read.value is None
    assert read.problem is not None
    assert read.problem.startswith(problem)


def test_read_json_says_where_a_wrapped_value_goes() -> None:
    """For an output that is not an object, a bare value is told to go in the answer's "value"."""
    assert read_json("[1, 2]", wrapped=True).problem == (
        'the answer is a JSON array, not an object: send the output as one JSON object whose "value" is the array'
    )
    assert read_json('```json\n"Paris"\n```', wrapped=True).problem == (
        'the answer is a JSON string, not an object: send the output as one JSON object whose "value" is the string'
    )
    assert read_json('{"value": [1, 2]}', wrapped=True).value == {"value": [1, 2]}


def test_read_json_tries_a_bounded_number_of_starts() -> None:
    """Only the first MAX_STARTS braces of prose are tried, so a text of many unbalanced braces reads in linear time."""
    assert read_json("{ " * (MAX_STARTS - 1) + '{"a": 1}').value == {"a": 1}
    assert read_json("{ " * MAX_STARTS + '{"a": 1}').value is None
    assert read_json("```\n" + "{" * 200_000 + "```" * 50_000).problem == (
        "the JSON object in the answer is not valid JSON: send the answer as one JSON object"
    )


def test_turn_text_is_the_text_after_the_last_other_block() -> None:
    """Thinking before the answer is no part of it; a tool or server result before it ends what came earlier."""
    content = [
        block("thinking"),
        block("text", "Let me search."),
        block("server_tool_use"),
        block("web_search_tool_result"),
        block("text", '{"a": '),
        block("text", "1}"),
    ]
    assert turn_text(content) == '{"a": 1}'
    assert turn_text([block("thinking"), block("text", " \n ")]) is None
    assert turn_text([]) is None


def test_json_start_and_complete_object_read_an_answer_in_progress() -> None:
    """The object starts at its first brace; it is complete once it closes, whatever follows."""
    text = 'Sure:\n```json\n{"a": [1, {"b": "}"}]}\n```'
    start = json_start(text)
    assert start == text.index("{")
    assert complete_object(text, start) == {"a": [1, {"b": "}"}]}
    assert complete_object(text[:-8], start) is None
    assert json_start("no object yet") is None


def test_json_start_skips_braces_in_prose() -> None:
    """A brace that cannot open a JSON object (``{curly}`` prose) is skipped; one at the end may still open one."""
    prose = "Using the {severity, summary} fields and { braces }:\n"
    assert json_start(prose) is None
    assert json_start(prose + '{"a": 1}') == len(prose)
    assert json_start(prose + "{") == len(prose)
    assert json_start(prose + "{ \n") == len(prose)
    assert json_start(prose + "{}") == len(prose)
    assert json_start("{x} " * (MAX_STARTS + 1) + '{"a": 1}') is None  # bounded: linear in the text


def test_read_json_deeply_nested_object_is_a_problem_not_a_crash() -> None:
    """An object nested past the parser's depth is not valid JSON, said as such."""
    read = read_json('{"a":' * 50_000)
    assert read.value is None
    assert read.problem is not None
    assert read.problem.startswith("the answer is not valid JSON")
    assert complete_object('{"a":' * 50_000, 0) is None


def test_schema_in_prompt_reads_the_prompted_schema_back() -> None:
    """The schema a prompted agent's system prompt gives, as a string or as text blocks; None when there is none."""
    system = f'You triage.\n\n## How to answer\n...\n\n{PROMPTED_SCHEMA_HEADING}\n{{"type": "object"}}'
    assert schema_in_prompt(system) == {"type": "object"}
    blocks = [{"type": "text", "text": "You triage."}, {"type": "text", "text": system}]
    assert schema_in_prompt(blocks) == {"type": "object"}
    assert schema_in_prompt("You triage.") is None
    assert schema_in_prompt(f"{PROMPTED_SCHEMA_HEADING}\n{{broken") is None
    assert schema_in_prompt(None) is None

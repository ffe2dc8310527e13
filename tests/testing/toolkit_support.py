"""Agents and expectations shared by the testing-toolkit tests."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from typedagent import AgentDefinition, OutputTool, define_agent, tool

PROMPT = "How many people live in Paris?"


class Answer(BaseModel):
    """The output type of the toolkit tests."""

    city: str
    population: int


PARIS = Answer(city="Paris", population=2_100_000)


@tool
def lookup(query: str) -> str:
    """Look up a fact."""
    return f"facts about {query}"


def geo_agent(**overrides: Any) -> AgentDefinition[Answer, None]:
    """An agent with one helper (``lookup``) and the output tool ``answer``."""
    params: dict[str, Any] = {
        "name": "geo",
        "model": "claude-haiku-4-5",
        "instructions": "Answer geography questions.",
        "output": OutputTool(Answer, name="answer"),
        "helpers": [lookup],
    }
    params.update(overrides)
    return define_agent(**params)


def lookup_then_answer() -> list[dict[str, Any]]:
    """The conversation of a run answering PROMPT with one lookup, then PARIS (ids as the clients make them)."""
    return [
        {"role": "user", "content": PROMPT},
        {
            "role": "assistant",
            "content": [{"id": "toolu_01_001", "input": {"query": "Paris"}, "name": "lookup", "type": "tool_use"}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_01_001", "content": "facts about Paris"}],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "id": "toolu_02_002",
                    "input": {"city": "Paris", "population": 2100000},
                    "name": "answer",
                    "type": "tool_use",
                }
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_02_002", "content": "Output accepted."}],
        },
    ]


def run_inner(pytester: pytest.Pytester, *args: str, subprocess: bool = False) -> pytest.RunResult:
    """Run an inner pytest session without hypothesis's slow summary.

    In process by default (fast; coverage sees the plugin). ``subprocess=True`` runs it in a fresh
    interpreter (coverage follows it there too), so nothing of the outer session leaks in: its warning
    filters, threads, or modules. An inner session that crashes (INTERNALERROR) fails the calling test
    with the end of its output, where the crash's cause is.
    """
    # anyio's pytest plugin is unused here, and the anyio releases the lowest typing-extensions allows (`make
    # test-lowest`) ship one that fails to load on pytest 9.2 under the inner sessions' -W error (the outer
    # session ignores that warning; a fresh interpreter would not).
    options = (
        "-p",
        "no:hypothesispytest",
        "-p",
        "no:anyio",
        "-o",
        "asyncio_default_fixture_loop_scope=function",
        *args,
    )
    result = pytester.runpytest_subprocess(*options) if subprocess else pytester.runpytest(*options)
    if result.ret == pytest.ExitCode.INTERNAL_ERROR:
        pytest.fail("the inner pytest session crashed:\n" + "\n".join(result.outlines[-40:]), pytrace=False)
    return result

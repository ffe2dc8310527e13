"""Validates the refund desk against every scripted conversation in scenarios/, with no network.

Each scenario is run twice: on ``ScriptedClient`` (in process, fast) and through the real
``anthropic`` SDK against ``FakeAnthropicServer`` on 127.0.0.1 (the HTTP path), and both runs must
show the expected behaviour.
"""

from __future__ import annotations

from typing import Any

import pytest
from refund_agent import agent, demo_shop
from scenario_files import Scenario

from typedagent import ExecuteResult, execute_agent_sync
from typedagent.testing import (
    FakeAnthropicServer,
    ScriptedClient,
    assert_valid_conversation,
    conversation,
    format_conversation,
)

# typedagent's pytest plugin fails any test of this module that would reach a real model API.
pytestmark = pytest.mark.block_model_requests


def check(result: ExecuteResult[Any], scenario: Scenario) -> None:
    """The run did what the scenario expects; the transcript is in the failure message."""
    expect = scenario.expect
    transcript = format_conversation(result)
    assert_valid_conversation(result)
    outcome = "ok" if result.ok else result.error.code
    assert outcome == expect["outcome"], f"{scenario.description}\n{transcript}"
    if "output" in expect:
        assert result.ok, transcript
        assert result.output.model_dump(mode="json") == expect["output"], transcript
    if "tools" in expect:
        calls = [block["name"] for block in _assistant_blocks(result) if block["type"] == "tool_use"]
        assert [name for name in calls if name != agent.output.name] == expect["tools"], transcript
    if "attempts" in expect:
        assert len(result.metadata.attempts) == expect["attempts"], transcript
    feedback = [block["content"] for block in _user_blocks(result) if block.get("is_error")]
    for fragment in expect.get("feedback", []):
        assert any(fragment in text for text in feedback), f"no feedback {fragment!r} in {feedback}"
    if "tool_results" in expect:
        names = {block["id"]: block["name"] for block in _assistant_blocks(result) if block["type"] == "tool_use"}
        results = [
            [names[block["tool_use_id"]], block["content"], block.get("is_error", False)]
            for block in _user_blocks(result)
            if block["type"] == "tool_result"
        ]
        assert results == expect["tool_results"], transcript


def _assistant_blocks(result: ExecuteResult[Any]) -> list[dict[str, Any]]:
    return [block for message in conversation(result)[1::2] for block in message["content"]]


def _user_blocks(result: ExecuteResult[Any]) -> list[dict[str, Any]]:
    """The blocks of the user turns after the prompt: tool results and feedback."""
    return [block for message in conversation(result)[2::2] for block in message["content"]]


def test_scenario_in_process(scenario: Scenario) -> None:
    """The agent behaves as the scenario expects, and uses the whole script."""
    client = ScriptedClient(scenario.script)
    result = execute_agent_sync(agent, scenario.prompt, client=client, deps=demo_shop())
    check(result, scenario)
    assert client.remaining == 0, "the agent stopped before the script's end"


def test_scenario_over_http(scenario: Scenario) -> None:
    """The same conversation through the real SDK and HTTP gives the same conversation."""
    in_process = execute_agent_sync(agent, scenario.prompt, client=ScriptedClient(scenario.script), deps=demo_shop())
    with FakeAnthropicServer(scenario.script) as server:
        result = execute_agent_sync(agent, scenario.prompt, client=server.client(max_retries=0), deps=demo_shop())
    check(result, scenario)
    assert conversation(result) == conversation(in_process)


def test_the_agent_offers_the_expected_tools() -> None:
    """The definition sends exactly these tools, in this order (a renamed tool breaks every script)."""
    assert [tool["name"] for tool in agent.tool_params()] == ["get_order", "decide_refund"]

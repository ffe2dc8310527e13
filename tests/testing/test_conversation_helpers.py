"""Assertion helpers: the conversation as plain data, the API-validity check, the transcript."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic.types import TextBlock, ToolUseBlock
from toolkit_support import PARIS, PROMPT, geo_agent, lookup_then_answer

from typedagent import ValidationConfig, execute_agent
from typedagent.testing import (
    ConversationError,
    ScriptedClient,
    assert_valid_conversation,
    conversation,
    conversation_problems,
    format_conversation,
    output_call,
    response,
    thinking,
    tool_call,
)


async def test_conversation_accepts_results_metadata_and_messages() -> None:
    """``conversation`` gives the same plain list from a result, its metadata or its messages."""
    client = ScriptedClient([tool_call("lookup", {"query": "Paris"}), output_call(PARIS)])
    result = await execute_agent(geo_agent(), PROMPT, client=client)
    expected = lookup_then_answer()
    assert conversation(result) == conversation(result.metadata) == conversation(result.metadata.messages) == expected
    one_attempt = geo_agent(validation=ValidationConfig(max_attempts=1))
    failed = await execute_agent(one_attempt, PROMPT, client=ScriptedClient(["no tool"]))
    assert not failed.ok
    assert conversation(failed)[1] == {"role": "assistant", "content": [{"type": "text", "text": "no tool"}]}


def test_conversation_dumps_sdk_objects_to_plain_data() -> None:
    """SDK blocks in a history become dicts without ``None`` fields; tuples become lists."""
    history: list[Any] = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": (TextBlock(type="text", text="x"), ToolUseBlock(type="tool_use", id="t", name="n", input={})),
        },
    ]
    assert conversation(history) == [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "x"}, {"type": "tool_use", "id": "t", "name": "n", "input": {}}],
        },
    ]
    assert conversation([{"role": "user", "content": object}])[0]["content"] == "<class 'object'>"


def test_conversation_problems_lists_every_rule() -> None:
    """Each rule the API enforces is reported with the message index."""
    use = {"type": "tool_use", "id": "a", "name": "n", "input": {}}
    assert conversation_problems([]) == ["the conversation is empty"]
    assert conversation_problems([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]) == []
    assert conversation_problems(
        [
            {"role": "assistant", "content": [use]},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [{"type": "text", "text": "x"}]},
            {"role": "system", "content": "no"},
            {"role": "user", "content": []},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "zz", "content": "r"}]},
            {"role": "assistant", "content": [{**use, "id": "b"}]},
        ]
    ) == [
        "message 0: the first turn must be the user's",
        "message 1: must start with tool_results for ['a'] in order, has []",
        "message 1: two assistant turns in a row",
        "message 1: tool_use id 'a' repeats an earlier one",
        "message 2: must start with tool_results for ['a'] in order, has []",
        "message 3: role 'system' is not 'user' or 'assistant'",
        "message 4: empty content",
        "message 5: two user turns in a row",
        "message 5: tool_result for 'zz' answers no tool_use of the previous turn",
        "message 6: tool_use ['b'] not answered (the conversation ends)",
    ]


async def test_assert_valid_conversation_passes_a_real_run() -> None:
    """A run's conversation is valid, and the check returns quietly."""
    client = ScriptedClient([response(thinking("t"), tool_call("lookup", {"query": "Paris"})), output_call(PARIS)])
    result = await execute_agent(geo_agent(), PROMPT, client=client)
    assert conversation_problems(result) == []
    assert assert_valid_conversation(result) is None


def test_assert_valid_conversation_fails_with_problems_and_transcript() -> None:
    """An invalid conversation raises ConversationError (an AssertionError) with problems and transcript."""
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "lookup", "input": {"q": 1}}]},
    ]
    with pytest.raises(ConversationError) as caught:
        assert_valid_conversation(messages)
    assert isinstance(caught.value, AssertionError)
    assert str(caught.value) == (
        "conversation is not API-valid:\n"
        "  - message 1: tool_use ['a'] not answered (the conversation ends)\n"
        "[0] user: text: hi\n"
        "[1] assistant: tool_use: lookup#a {'q': 1}"
    )


def test_format_conversation_one_line_per_block() -> None:
    """Every block kind gets one clipped line: text, tool_use, tool_result (errors flagged), thinking, others."""
    messages = [
        {"role": "user", "content": "line one\nline two"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "s"},
                {"type": "redacted_thinking", "data": "x"},
                {"type": "tool_use", "id": "a", "name": "lookup", "input": {"query": "x" * 200}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "boom", "is_error": True}]},
        {"role": "user", "content": [{"kind": "odd"}]},
    ]
    assert format_conversation(messages, width=40).splitlines() == [
        "[0] user: text: line one\\nline two",
        "[1] assistant: thinking: hmm",
        "[1] assistant: redacted_thinking: redacted_thinking",
        "[1] assistant: tool_use: lookup#a {'query': 'xxxxxxxxxxxxxxxxxxx…",
        "[2] user: tool_result: #a ERROR boom",
        "[3] user: None: ?",
    ]

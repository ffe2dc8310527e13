"""Tool results made of content blocks: sent as the tool_result's content, not as JSON text."""

from __future__ import annotations

import typing
from typing import Any

from anthropic.types import ImageBlockParam, SearchResultBlockParam, TextBlockParam
from anthropic.types.tool_result_block_param import Content
from support import GOOD, run, triage_agent

from typedagent import ExecuteCallbacks, ExecutionState, ToolResult, tool
from typedagent._run.result_blocks import RESULT_BLOCK_TYPES
from typedagent.testing import ScriptedClient, output_call, tool_call

PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def test_result_block_types_are_the_sdks_tool_result_content() -> None:
    """The block types recognised are exactly those the SDK's ToolResultBlockParam content may hold."""
    sdk = {typing.get_args(typing.get_type_hints(block)["type"])[0] for block in typing.get_args(Content)}
    assert sdk == RESULT_BLOCK_TYPES


@tool
def find_policy(topic: str) -> list[TextBlockParam | ImageBlockParam | SearchResultBlockParam]:
    """Find the policy on a topic: a summary, a diagram, and the passage to cite."""
    return [
        {"type": "text", "text": f"Policy on {topic}:"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}},
        {
            "type": "search_result",
            "source": "https://intranet.example/policies/vpn",
            "title": "VPN policy",
            "content": [{"type": "text", "text": "Clients older than 5.2 must be updated."}],
            "citations": {"enabled": True},
        },
    ]


async def test_helper_returning_content_blocks_sends_them_as_the_result_content() -> None:
    """A list of text, image and search_result blocks is the tool_result's content, block for block."""
    seen: list[ToolResult] = []

    def on_result(state: ExecutionState, event: ToolResult) -> None:
        seen.append(event)

    client = ScriptedClient([tool_call("find_policy", {"topic": "vpn"}), output_call(GOOD)])
    result = await run(
        triage_agent(helpers=[find_policy]), client, callbacks=ExecuteCallbacks(on_tool_result=on_result)
    )
    assert result.ok
    [answer] = client.requests[1]["messages"][2]["content"]
    assert answer["content"] == find_policy("vpn")
    assert seen[0].content == "Policy on vpn:\n[image]\n[search_result: VPN policy]"


@tool
def numbers() -> list[dict[str, Any]]:
    """Plain data that only looks like blocks: one dict has no content block type."""
    return [{"type": "text", "text": "a"}, {"type": "row", "value": 1}]


async def test_lists_that_are_not_all_content_blocks_are_sent_as_json() -> None:
    """A list mixing blocks and other dicts is a value like any other: JSON text."""
    client = ScriptedClient([tool_call("numbers"), output_call(GOOD)])
    await run(triage_agent(helpers=[numbers]), client)
    [answer] = client.requests[1]["messages"][2]["content"]
    assert answer["content"] == '[{"type":"text","text":"a"},{"type":"row","value":1}]'


@tool
def long_read() -> list[TextBlockParam | ImageBlockParam]:
    """Two long texts around an image."""
    image: ImageBlockParam = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}}
    return [{"type": "text", "text": "x" * 30}, image, {"type": "text", "text": "y" * 30}]


async def test_content_block_text_is_capped_and_images_are_kept() -> None:
    """max_tool_result_chars caps the blocks' text in all, with the marker; other blocks go through whole."""
    client = ScriptedClient([tool_call("long_read"), output_call(GOOD)])
    await run(triage_agent(helpers=[long_read], max_tool_result_chars=40), client)
    [answer] = client.requests[1]["messages"][2]["content"]
    first, image, second = answer["content"]
    assert first == {"type": "text", "text": "x" * 30}
    assert image == long_read()[1]
    assert second == {"type": "text", "text": "y" * 10 + "\n[... truncated: 20 of 30 characters cut ...]"}

"""The conversation keeps each assistant turn verbatim: the blocks as the API sent them, as request params."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import pytest
from anthropic._models import construct_type
from anthropic.types import ToolUseBlock

from typedagent._run.conversation import block_param

DATA = Path(__file__).resolve().parent / "data"


def _messages(value: Any) -> list[dict[str, Any]]:
    """Every Messages API response body inside a recorded file (a response, a list of them, an exchange)."""
    if isinstance(value, dict):
        if value.get("type") == "message" and isinstance(value.get("content"), list):
            return [value]
        return [found for item in value.values() for found in _messages(item)]
    if isinstance(value, list):
        return [found for item in value for found in _messages(item)]
    return []


RECORDED = [
    (path.name, index, message)
    for path in sorted(DATA.glob("*.json"))
    for index, message in enumerate(_messages(json.loads(path.read_text())))
]


@pytest.mark.parametrize(("name", "index", "body"), RECORDED, ids=[f"{n}[{i}]" for n, i, _ in RECORDED])
def test_each_recorded_block_is_kept_as_the_sdk_would_send_it(name: str, index: int, body: dict[str, Any]) -> None:
    """Flat blocks are read straight from the model's fields, the rest serialized by pydantic: the same params.

    The recorded responses are real Messages API traffic (tests/data/README.md), parsed as the SDK parses them.
    """
    message = construct_type(type_=anthropic.types.Message, value=body)
    assert [block_param(block) for block in message.content] == [
        block.to_dict(mode="json") for block in message.content
    ]


def test_a_block_with_a_nested_or_unknown_value_is_kept_as_to_dict_keeps_it() -> None:
    """A tool input holding a list (copied, not shared), or a field the SDK does not know, as ``to_dict`` gives it."""
    nested = construct_type(
        type_=ToolUseBlock,
        value={"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"keys": ["a", "b"], "limit": 2.5}},
    )
    extra = construct_type(
        type_=ToolUseBlock,
        value={"type": "tool_use", "id": "toolu_2", "name": "lookup", "input": {"key": "a"}, "newer_field": 1},
    )
    assert block_param(nested) == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "lookup",
        "input": {"keys": ["a", "b"], "limit": 2.5},
    }
    assert block_param(nested) == nested.to_dict(mode="json")
    assert block_param(nested)["input"]["keys"] is not nested.input["keys"]  # a copy: the response stays as it was
    assert block_param(extra) == extra.to_dict(mode="json")
    assert block_param(extra)["newer_field"] == 1


def test_a_block_holding_a_list_of_models_is_kept_without_the_fields_the_api_left_out() -> None:
    """Citations (models in a list) keep only the fields the API sent, as ``to_dict`` gives them: no added nulls."""
    block = construct_type(
        type_=anthropic.types.TextBlock,
        value={
            "type": "text",
            "text": "Cited.",
            "citations": [
                {
                    "type": "char_location",
                    "cited_text": "x",
                    "document_index": 0,
                    "document_title": None,
                    "start_char_index": 0,
                    "end_char_index": 1,
                }
            ],
        },
    )
    kept = block_param(block)
    assert kept == block.to_dict(mode="json")
    assert "file_id" not in kept["citations"][0]

"""Tool results made of content blocks (text, images, documents, search results), sent as the result's content."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

import pydantic_core

from .rendering import truncate

__all__ = ["RESULT_BLOCK_TYPES", "blocks_text", "cap_blocks", "content_blocks"]

RESULT_BLOCK_TYPES: Final = frozenset({"text", "image", "document", "search_result", "tool_reference", "browser_state"})
"""The content blocks a ``tool_result`` may hold (the SDK's ``ToolResultBlockParam`` content)."""


def content_blocks(value: object) -> list[dict[str, Any]] | None:
    """``value`` as ``tool_result`` content, when it is a non-empty list of content block dicts; else None.

    Anything else — a list holding one dict of another ``type``, or none at all — is a plain value, sent as JSON.
    """
    if not isinstance(value, list | tuple) or not value:
        return None
    items = cast("Sequence[object]", value)
    first = items[0]
    if type(first) is not dict and not isinstance(first, Mapping):  # a list of plain values, the usual case
        return None
    if not all(
        isinstance(item, Mapping) and cast("Mapping[str, Any]", item).get("type") in RESULT_BLOCK_TYPES
        for item in items
    ):
        return None
    # Plain JSON data of the client's own: a TypedDict holding bytes or tuples would not survive being sent back.
    return [cast("dict[str, Any]", pydantic_core.to_jsonable_python(item)) for item in items]


def cap_blocks(blocks: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """Cap the text of ``blocks`` at ``limit`` characters in all, each cut text marked; other blocks are kept."""
    capped: list[dict[str, Any]] = []
    budget = limit
    for block in blocks:
        text = block.get("text")
        if block.get("type") == "text" and isinstance(text, str):
            cut = truncate(text, max(budget, 0))
            budget -= len(text)
            block = {**block, "text": cut}
        capped.append(block)
    return capped


def blocks_text(blocks: list[dict[str, Any]]) -> str:
    """What the model reads in ``blocks``, as text: each text block's text, a placeholder for any other block."""
    parts: list[str] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        else:
            title = block.get("title")
            parts.append(f"[{kind}: {title}]" if isinstance(title, str) and title else f"[{kind}]")
    return "\n".join(parts)

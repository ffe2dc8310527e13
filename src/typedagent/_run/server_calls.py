"""The server and MCP tool calls of a response, reported to the tool hooks like client calls (never answered)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

from .._shared.events import ToolCall, ToolKind, ToolResult
from .conversation import block_param

if TYPE_CHECKING:
    from .execution import Execution

__all__ = ["CALL_KINDS", "is_server_result", "report_server_calls", "result_text"]

CALL_KINDS: Final[dict[str, ToolKind]] = {"server_tool_use": "server", "mcp_tool_use": "mcp"}
"""The blocks of a call the API carries out itself, and the kind ``on_tool_call`` reports for each."""


def is_server_result(block: Mapping[str, Any]) -> bool:
    """Whether a content block is the result of a server or MCP tool call (``web_search_tool_result``, …)."""
    kind = block.get("type")
    return isinstance(kind, str) and kind != "tool_result" and kind.endswith("_tool_result")


async def report_server_calls(execution: Execution, response: Any) -> None:
    """Fire ``on_tool_call`` for each server and MCP call of ``response``, ``on_tool_result`` for each result.

    A result answers a call of the same turn: of this response, or of the paused one it continues (the
    conversation holds both, merged, by now).
    """
    callbacks = execution.callbacks
    unwatched = callbacks is None or (callbacks.on_tool_call is None and callbacks.on_tool_result is None)
    if unwatched and execution.observer is None:
        return
    calls = _calls(execution.conversation.messages)
    for block in (block_param(block) for block in response.content):
        kind = CALL_KINDS.get(block.get("type", ""))
        if kind is not None:
            call = ToolCall(
                id=block["id"], name=block["name"], input=dict(block["input"]), kind=kind, server=_server(block)
            )
            await execution.hooks.tool_call(call)
        elif is_server_result(block):
            use_id = str(block.get("tool_use_id"))
            text, is_error = result_text(block)
            name, kind, server = calls.get(use_id) or (
                str(block["type"]).removesuffix("_tool_result"),
                _result_kind(block),
                None,
            )
            await execution.hooks.tool_result(
                ToolResult(
                    id=use_id, name=name, content=text, is_error=is_error, duration_ms=0.0, kind=kind, server=server
                )
            )


def _calls(messages: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, ToolKind, str | None]]:
    """The server and MCP calls of the last assistant turn, by id: their names, kinds and MCP servers' names."""
    last = messages[-1] if messages else None
    if last is None or last.get("role") != "assistant" or isinstance(last.get("content"), str):
        return {}
    return {
        str(block.get("id")): (str(block.get("name")), CALL_KINDS[block["type"]], _server(block))
        for block in cast("Sequence[Mapping[str, Any]]", last["content"])
        if block.get("type") in CALL_KINDS
    }


def _result_kind(block: Mapping[str, Any]) -> ToolKind:
    """The kind of the call a result answers when the call is not in the turn: an MCP result's, or a server tool's."""
    return "mcp" if block.get("type") == "mcp_tool_result" else "server"


def _server(block: Mapping[str, Any]) -> str | None:
    server = block.get("server_name")
    return server if isinstance(server, str) else None


def result_text(block: Mapping[str, Any]) -> tuple[str, bool]:
    """A server tool result as one line of text (what it found, ran or fetched), and whether it is an error."""
    content = block.get("content")
    is_error = block.get("is_error") is True
    if isinstance(content, Mapping):
        data = cast("Mapping[str, Any]", content)
        if str(data.get("type", "")).endswith("_error"):
            return f"Error: {data.get('error_code', data.get('type'))}", True
        return _describe(data), is_error
    if isinstance(content, str):
        return content, is_error
    entries = cast("list[object]", content) if isinstance(content, list) else []
    items = [cast("Mapping[str, Any]", item) for item in entries if isinstance(item, Mapping)]
    if items and all("url" in item for item in items):
        found = "; ".join(f"{item.get('title') or item['url']} ({item['url']})" for item in items)
        return f"{len(items)} result{'s' if len(items) != 1 else ''}: {found}", is_error
    text = "".join(str(item.get("text", "")) for item in items)
    return text or json.dumps(content, ensure_ascii=False), is_error


def _describe(data: Mapping[str, Any]) -> str:
    if "stdout" in data or "stderr" in data:
        output = "\n".join(part for part in (data.get("stdout"), data.get("stderr")) if part)
        return f"exit {data.get('return_code', 0)}: {output}".rstrip()
    if "url" in data:
        document = data.get("content")
        title = cast("Mapping[str, Any]", document).get("title") if isinstance(document, Mapping) else None
        return f"fetched {data['url']}" + (f": {title}" if title else "")
    if isinstance(data.get("text"), str):
        return str(data["text"])
    return json.dumps(data, ensure_ascii=False)

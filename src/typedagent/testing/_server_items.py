"""Script helpers for the calls the API carries out itself: server tools (web search, web fetch, code execution), MCP.

Each call and each result is one ``Block`` of a response, shaped like the blocks of real recorded traffic. A
result without ``tool_use_id`` answers the last call before it in its response; a call continued after a
``pause_turn`` gets its result in the next response, which then names the call's ``id``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._items import Block

__all__ = [
    "code_execution_call",
    "code_execution_result",
    "mcp_tool_call",
    "mcp_tool_result",
    "server_tool_call",
    "server_tool_result",
    "web_fetch_call",
    "web_fetch_result",
    "web_search_call",
    "web_search_result",
]


def server_tool_call(name: str, input: Mapping[str, Any] | None = None, *, id: str | None = None) -> Block:
    """A call of a server tool (a ``server_tool_use`` block): the API runs it; nothing answers it in the loop.

    Args:
        name: The tool the model called, e.g. ``"web_search"`` (code execution calls ``"bash_code_execution"``
            and ``"text_editor_code_execution"``).
        input: The model's input.
        id: The call's id; generated (``srvtoolu_…``) when omitted.
    """
    return Block(type="server_tool_use", data={"id": id, "name": name, "input": dict(input or {})})


def server_tool_result(content: Any, *, type: str, tool_use_id: str | None = None) -> Block:
    """The result of a server tool call, as the API puts it in the response (``web_search_tool_result``, …).

    Args:
        content: The result's ``content``, in the API's shape for ``type``.
        type: The block type, e.g. ``"web_search_tool_result"`` or ``"advisor_tool_result"``.
        tool_use_id: The call it answers; default: the last server or MCP call before it in the response.
    """
    return Block(type=type, data={"tool_use_id": tool_use_id, "content": content})


def web_search_call(query: str, *, id: str | None = None) -> Block:
    """A web search the model asks the API to run."""
    return server_tool_call("web_search", {"query": query}, id=id)


def web_search_result(
    results: Sequence[tuple[str, str] | Mapping[str, Any]], *, tool_use_id: str | None = None
) -> Block:
    """The results of a web search: ``(title, url)`` pairs, or ``web_search_result`` dicts given in full.

    A pair becomes a result with placeholder ``encrypted_content`` and no ``page_age``, as the API sends them.
    """
    entries: list[dict[str, Any]] = []
    for result in results:
        if isinstance(result, Mapping):
            entries.append({"type": "web_search_result", **result})
        else:
            title, url = result
            entries.append(
                {"type": "web_search_result", "title": title, "url": url, "encrypted_content": "Eo8C", "page_age": None}
            )
    return server_tool_result(entries, type="web_search_tool_result", tool_use_id=tool_use_id)


def web_fetch_call(url: str, *, id: str | None = None) -> Block:
    """A page the model asks the API to fetch."""
    return server_tool_call("web_fetch", {"url": url}, id=id)


def web_fetch_result(
    url: str,
    text: str,
    *,
    title: str | None = None,
    retrieved_at: str = "2026-01-01T00:00:00+00:00",
    tool_use_id: str | None = None,
) -> Block:
    """A fetched page: its ``url`` and its ``text`` (a plain-text document), as a ``web_fetch_tool_result``."""
    document: dict[str, Any] = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": text},
    }
    if title is not None:
        document["title"] = title
    content = {"type": "web_fetch_result", "url": url, "retrieved_at": retrieved_at, "content": document}
    return server_tool_result(content, type="web_fetch_tool_result", tool_use_id=tool_use_id)


def code_execution_call(command: str, *, id: str | None = None) -> Block:
    """A bash command the model runs in the code execution container (``bash_code_execution``)."""
    return server_tool_call("bash_code_execution", {"command": command}, id=id)


def code_execution_result(
    stdout: str = "", *, stderr: str = "", return_code: int = 0, tool_use_id: str | None = None
) -> Block:
    """What a bash command printed and returned, as a ``bash_code_execution_tool_result``."""
    content: dict[str, Any] = {
        "type": "bash_code_execution_result",
        "stdout": stdout,
        "stderr": stderr,
        "return_code": return_code,
        "content": [],
    }
    return server_tool_result(content, type="bash_code_execution_tool_result", tool_use_id=tool_use_id)


def mcp_tool_call(
    server_name: str, name: str, input: Mapping[str, Any] | None = None, *, id: str | None = None
) -> Block:
    """A call of a tool of an MCP server (``model_settings["mcp_servers"]``), carried out by the API."""
    return Block(
        type="mcp_tool_use", data={"id": id, "name": name, "server_name": server_name, "input": dict(input or {})}
    )


def mcp_tool_result(text: str, *, is_error: bool = False, tool_use_id: str | None = None) -> Block:
    """What an MCP tool answered (one text block), as an ``mcp_tool_result``."""
    return Block(
        type="mcp_tool_result",
        data={"tool_use_id": tool_use_id, "is_error": is_error, "content": [{"type": "text", "text": text}]},
    )

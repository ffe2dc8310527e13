"""How a script item becomes a Messages API response: ids, wrapped output inputs, usage, container, model."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final, cast

from .._agent.output import WRAPPER_KEY
from .._run.request import schema_in_prompt
from ._items import ScriptError, ScriptItem, as_response

__all__ = ["CONTAINER_EXPIRY", "SERVER_CALL_PREFIXES", "answer_schema", "render_message"]


def render_message(
    item: ScriptItem,
    params: Mapping[str, Any],
    *,
    call: int,
    message_id: str,
    new_id: Callable[[], str],
    source: str,
) -> dict[str, Any]:
    """The Messages API response JSON for an answering item, given the request it answers.

    Resolves ``output_call`` names from the request's tools (or, for a native or prompted agent, makes the output a
    text block of JSON), generates missing tool_use ids (``srvtoolu_`` and ``mcptoolu_`` ones for server and MCP
    calls), and points a server tool result without a ``tool_use_id`` at the last server or MCP call before it in
    the response.

    Raises:
        ScriptError: A block calls a tool the request does not offer (and is not marked ``unknown``), or a server
            tool result has no call to answer.
    """
    scripted = as_response(item)
    offered = [tool.get("name") for tool in params.get("tools") or ()]
    in_text = answer_schema(params)
    content: list[dict[str, Any]] = []
    last_server_call: str | None = None
    for index, block in enumerate(scripted.blocks, start=1):
        data = dict(block.data)
        if block.type in SERVER_CALL_PREFIXES:
            data["id"] = data.get("id") or f"{SERVER_CALL_PREFIXES[block.type]}{new_id().removeprefix('toolu_')}"
            last_server_call = data["id"]
        elif block.type.endswith("_tool_result") and "tool_use_id" in data and data["tool_use_id"] is None:
            if last_server_call is None:
                raise ScriptError(
                    f"{source}: response {call}, block {index} ({block.type}) follows no server tool call in its "
                    "response: pass tool_use_id= with the id of the call it answers (a call of the paused response "
                    "before it, say)."
                )
            data["tool_use_id"] = last_server_call
        elif block.type == "tool_use" and block.output and in_text is not None:
            content.append({"type": "text", "text": json.dumps(_wrapped_if_needed(data["input"], in_text))})
            continue
        elif block.type == "tool_use":
            if block.output:
                candidates = [tool for tool in params.get("tools") or () if tool.get("name") != "submit"]
                if not candidates:
                    raise ScriptError(f"{source}: request {call} offers no tools, so output_call has none to call.")
                data["name"] = candidates[-1].get("name")
                data["input"] = _wrapped_if_needed(data["input"], candidates[-1].get("input_schema"))
            if data["name"] not in offered and not block.unknown:
                raise ScriptError(
                    f"{source}: response {call}, block {index} calls tool {data['name']!r}, but the request "
                    f"offered only {offered}. Fix the name, or pass unknown=True to call a missing tool on purpose."
                )
            data["id"] = data["id"] or new_id()
        content.append({"type": block.type, **data})
    has_tool = any(block["type"] == "tool_use" for block in content)
    message: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": scripted.model or params.get("model", "scripted"),
        "content": content,
        "stop_reason": scripted.stop_reason or ("tool_use" if has_tool else "end_turn"),
        "stop_sequence": None,
        "usage": dict(scripted.usage),
    }
    if scripted.container is not None:
        message["container"] = {"id": scripted.container, "expires_at": CONTAINER_EXPIRY}
    return message


SERVER_CALL_PREFIXES: Final = {"server_tool_use": "srvtoolu_", "mcp_tool_use": "mcptoolu_"}
"""The calls the API carries out itself, and the prefix of the ids it gives them."""


CONTAINER_EXPIRY: Final = "2030-01-01T00:00:00Z"
"""When a scripted container expires (far enough away for any test run)."""


def answer_schema(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The JSON schema of the text answer a request asks for: a native agent's format, or a prompted one's schema.

    None for an agent that hands its output over with a tool call.
    """
    output_config = params.get("output_config")
    output_format = output_config.get("format") if isinstance(output_config, Mapping) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if isinstance(output_format, Mapping):
        schema = cast("Mapping[str, Any]", output_format).get("schema")
        if isinstance(schema, Mapping):
            return cast("Mapping[str, Any]", schema)
    return schema_in_prompt(params.get("system"))


def _wrapped_if_needed(tool_input: object, schema: object) -> object:
    """``{"value": tool_input}`` when the output tool wraps its output and the input is not wrapped yet."""
    if not isinstance(schema, Mapping):
        return tool_input
    fields = cast("Mapping[str, Any]", schema)
    wraps = (
        list(fields.get("properties") or ()) == [WRAPPER_KEY]
        and fields.get("required") == [WRAPPER_KEY]
        and fields.get("additionalProperties") is False
    )
    return {WRAPPER_KEY: tool_input} if wraps and not _only_value(tool_input) else tool_input


def _only_value(data: object) -> bool:
    return isinstance(data, Mapping) and list(cast("Mapping[str, Any]", data)) == [WRAPPER_KEY]

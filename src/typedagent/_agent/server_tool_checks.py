"""Server tool definitions: the checks ``define_agent(server_tools=...)`` makes on each."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias, cast

from .._shared.errors import AgentDefinitionError
from .calling import check_tool_name
from .tool_definitions import CLIENT_TOOL_PREFIXES

__all__ = ["ServerTool", "checked_server_tools"]

ServerTool: TypeAlias = Mapping[str, Any]
"""A server tool definition: a dict with a ``type`` (the tool and its version) and a ``name``, plus the tool's
own settings. What the constructors of ``typedagent.server_tools`` return, and what the SDK's typed dicts are."""


def checked_server_tools(tools: object, taken: Iterable[str]) -> tuple[dict[str, Any], ...]:
    """Private deep copies of ``define_agent(server_tools=...)``, each checked; ``taken`` are the other tool names.

    Raises:
        AgentDefinitionError: not a list of ``{"type": ..., "name": ...}`` dicts, a client tool, or a name clash.
    """
    if isinstance(tools, Mapping | str) or not isinstance(tools, Sequence):
        kind = type(tools).__name__  # pyright: ignore[reportUnknownArgumentType]
        raise AgentDefinitionError(
            f"define_agent(server_tools=...) must be a list of server tool definitions, got {kind}: "
            "write server_tools=[web_search()] even for one."
        )
    names = set(taken)
    checked: list[dict[str, Any]] = []
    for tool in cast("Sequence[object]", tools):
        definition = _checked(tool)
        name = definition.get("name")
        if isinstance(name, str):
            if name in names:
                raise AgentDefinitionError(
                    f"Server tool {name!r} has the name of another tool of the agent (a helper, the output tool, "
                    "submit, or another server tool): tool names must be unique, so rename the other tool."
                )
            names.add(name)
        checked.append(definition)
    return tuple(checked)


def _checked(tool: object) -> dict[str, Any]:
    if not isinstance(tool, Mapping):
        raise AgentDefinitionError(
            f"server_tools must hold server tool definitions (dicts such as web_search()), got {tool!r}."
        )
    definition = copy.deepcopy(dict(cast("Mapping[str, Any]", tool)))
    kind = definition.get("type")
    if "input_schema" in definition or kind == "custom":
        raise AgentDefinitionError(
            f"Server tool {definition.get('name')!r} has an input schema, so your code would have to answer it: "
            "pass it in helpers=[HelperTool(definition=..., handler=...)] instead."
        )
    if not isinstance(kind, str) or not kind:
        raise AgentDefinitionError(
            f"Server tool {definition.get('name')!r} has no 'type': a server tool is a dict such as "
            '{"type": "web_search_20250305", "name": "web_search"} (see typedagent.server_tools).'
        )
    if kind.startswith(CLIENT_TOOL_PREFIXES):
        raise AgentDefinitionError(
            f"{kind!r} is an Anthropic-defined tool that your code runs, not the API: pass it in "
            f"helpers=[HelperTool(definition={{'type': {kind!r}, 'name': ...}}, handler=...)] with the handler that "
            "carries out its commands."
        )
    if kind != "mcp_toolset":
        check_tool_name(definition.get("name"), f"Server tool {kind!r}:")
    elif not isinstance(definition.get("mcp_server_name"), str):
        raise AgentDefinitionError(
            "An mcp_toolset server tool needs 'mcp_server_name': the name of one of model_settings['mcp_servers']."
        )
    return definition

"""An agent's tools: its helpers by name, its toolsets, the tool names taken, and the definitions sent to the API."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .._shared.errors import AgentDefinitionError
from .._shared.frozen import freeze, freeze_sequence, fresh_copy
from .output import SUBMIT_TOOL_NAME, OutputTool, submit_tool_param
from .remote import Toolset, ToolsetConnection
from .server_tool_checks import checked_server_tools
from .tools import Helper, HelperTool, Tool

__all__ = [
    "ToolNameClash",
    "agent_tools",
    "connected_params",
    "helpers_by_name",
    "split_toolsets",
    "tool_names",
    "tool_params",
]


def agent_tools(
    helpers: Sequence[Helper[Any] | Toolset], output: OutputTool[Any], server_tools: object
) -> tuple[dict[str, Helper[Any]], tuple[Toolset, ...], tuple[Mapping[str, Any], ...]]:
    """The helpers by name, the toolsets, and the server tools (read-only copies), all checked.

    No two tools are named alike; a toolset's tools are known (and their names checked) once it is connected.
    """
    tools, toolsets = split_toolsets(helpers)
    by_name = helpers_by_name(tools, output)
    servers = checked_server_tools(server_tools, tool_names(by_name, output))
    return by_name, toolsets, tuple(freeze(tool) for tool in servers)


def split_toolsets(helpers: Sequence[Helper[Any] | Toolset]) -> tuple[list[Helper[Any]], tuple[Toolset, ...]]:
    """The helper tools and the toolsets given together in ``helpers=``, each in its order (a toolset counts once)."""
    tools: list[Helper[Any]] = []
    toolsets: list[Toolset] = []
    for item in helpers:
        if isinstance(item, Toolset):
            if item not in toolsets:
                toolsets.append(item)
        else:
            tools.append(item)
    return tools, tuple(toolsets)


def helpers_by_name(helpers: Sequence[Helper[Any]], output: OutputTool[Any]) -> dict[str, Helper[Any]]:
    """The helpers by name, each checked, and none named like another tool of the agent."""
    by_name: dict[str, Helper[Any]] = {}
    for helper in helpers:
        if not isinstance(helper, HelperTool | Tool):
            raise AgentDefinitionError(
                f"helpers must hold @tool functions, HelperTool objects or toolsets (typedagent.mcp.MCPToolset), "
                f"got {helper!r}: decorate the function with @tool or wrap it as HelperTool(definition=..., "
                "handler=...)."
            )
        if isinstance(helper, Tool) and helper.unbound_method_of is not None:
            raise AgentDefinitionError(
                f"Tool {helper.name!r} is a method of {helper.unbound_method_of}: pass it from an instance, "
                f"helpers=[obj.{helper.fn.__name__}], so that self is bound."
            )
        if helper.name in by_name:
            raise AgentDefinitionError(f"Two helpers are named {helper.name!r}: tool names must be unique.")
        if helper.name == output.name and output.mode == "tool":
            raise AgentDefinitionError(
                f"Helper {helper.name!r} has the output tool's name: rename the helper or the OutputTool."
            )
        if output.reflection_enabled and helper.name == SUBMIT_TOOL_NAME:
            raise AgentDefinitionError(
                f"Helper {SUBMIT_TOOL_NAME!r} clashes with the submit tool that reflection mode adds: rename it."
            )
        by_name[helper.name] = helper
    return by_name


def tool_names(helpers: Mapping[str, Helper[Any]], output: OutputTool[Any]) -> list[str]:
    """The names the helpers, the output tool (in tool mode) and ``submit`` take (a server tool may use none)."""
    names = [*helpers, *([output.name] if output.mode == "tool" else [])]
    return [*names, *([SUBMIT_TOOL_NAME] if output.reflection_enabled else [])]


def tool_params(
    helpers: Iterable[Helper[Any]], output: OutputTool[Any], server_tools: Iterable[Mapping[str, Any]]
) -> tuple[Mapping[str, Any], ...]:
    """The frozen definitions sent in ``tools``: helpers, server tools, the output tool (tool mode), then ``submit``.

    In native and prompted modes no output tool is offered: the output is the text that ends the turn.
    """
    # Frozen once, here: the definition must not change when a caller edits a dict it passed in or got back.
    # The output tool stays after every other tool (and submit last): the testing toolkit finds it there.
    params: list[Any] = [helper.to_param() for helper in helpers]
    params.extend(server_tools)
    if output.mode == "tool":
        params.append(output.to_param())
    if output.reflection_enabled:
        params.append(submit_tool_param())
    return freeze_sequence(params)


class ToolNameClash(AgentDefinitionError):
    """A toolset's tool is named like another tool of the agent (known only once the toolset is connected)."""

    def __init__(self, name: str, toolset: str, owner: str) -> None:
        other = f"a tool of toolset {owner!r}" if owner else "another tool of the agent"
        super().__init__(
            f"Tool {name!r} of toolset {toolset!r} has the name of {other}: give the toolset a prefix "
            f"(MCPToolset.stdio(..., prefix='x') makes it x_{name}), or leave the tool out with deny=[...]."
        )
        self.toolset = toolset


def connected_params(
    static: Sequence[Mapping[str, Any]], helpers: int, connections: Sequence[ToolsetConnection]
) -> list[dict[str, Any]]:
    """The definitions sent with the toolsets connected: helpers, the toolsets' tools, then the rest of ``static``.

    ``static`` is the agent's own (frozen) list, whose first ``helpers`` entries are its helpers.

    Raises:
        ToolNameClash: a toolset's tool is named like another tool of the agent.
    """
    taken = {str(param.get("name")): "" for param in static}
    remote: list[dict[str, Any]] = []
    for connection in connections:
        for tool in connection.tools():
            owner = taken.get(tool.name)
            if owner is not None:
                raise ToolNameClash(tool.name, connection.server, owner)
            taken[tool.name] = connection.server
            remote.append(dict(tool.to_param()))
    return [*fresh_copy(static[:helpers]), *remote, *fresh_copy(static[helpers:])]

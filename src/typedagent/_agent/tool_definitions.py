"""What a helper's definition may be: a custom tool with a schema, an Anthropic-defined client tool, or strict."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any, Final

from .._shared.errors import AgentDefinitionError
from .schemas import schema_problems
from .strict_schema import inexpressible, strict_schema

__all__ = [
    "CLIENT_TOOL_PREFIXES",
    "SERVER_TOOL_PREFIXES",
    "check_definition",
    "is_server_tool_type",
    "strict_param",
]

SERVER_TOOL_PREFIXES: Final = ("web_search_", "web_fetch_", "code_execution_", "tool_search_tool_", "advisor_")
"""Type prefixes of the Anthropic-defined tools the API runs itself (plus ``mcp_toolset``)."""

CLIENT_TOOL_PREFIXES: Final = ("bash_", "memory_", "text_editor_", "computer_", "browser_")
"""Type prefixes of the Anthropic-defined tools your code runs (a helper with a handler answers them)."""


def is_server_tool_type(kind: str) -> bool:
    """Whether a tool ``type`` names a tool the API runs itself."""
    return kind == "mcp_toolset" or kind.startswith(SERVER_TOOL_PREFIXES)


def check_definition(definition: dict[str, Any]) -> Any:
    """Return a helper's definition if the API takes it as a tool your code answers.

    That is a custom tool with an object schema, or an Anthropic-defined client tool (a ``type`` other than
    ``custom``, and no schema).

    Raises:
        AgentDefinitionError: no schema, a schema the API would refuse (an unknown type, a ``$ref`` that does
            not resolve, ``required`` names missing from ``properties``, …; with ``"strict": true``, a recursive
            type or a mapping), or a tool the API runs itself.
    """
    name, kind = definition.get("name"), definition.get("type")
    if isinstance(kind, str) and is_server_tool_type(kind):
        raise AgentDefinitionError(
            f"HelperTool {name!r}: {kind!r} is a server tool, which the API runs itself: pass it in "
            "define_agent(server_tools=[...]) instead, without a handler."
        )
    if isinstance(kind, str) and kind != "custom" and "input_schema" not in definition:
        return definition  # an Anthropic-defined client tool (memory, bash, text editor): the API knows its schema
    schema = definition.get("input_schema")
    if not isinstance(schema, Mapping) or typing.cast("Mapping[str, Any]", schema).get("type") != "object":
        raise AgentDefinitionError(
            f'HelperTool {name!r} needs an \'input_schema\' with "type": "object" (or, for a tool Anthropic '
            "defines, its 'type', such as \"memory_20250818\")."
        )
    problems = schema_problems(typing.cast("object", schema))
    if problems:
        listed = "; ".join(f"input_schema{where}: {what}" for where, what in problems)
        raise AgentDefinitionError(
            f"HelperTool {name!r}: its input_schema is not one the Messages API accepts: {listed}. "
            "Fix the schema (or build the tool with @tool from a typed function)."
        )
    if definition.get("strict") is True:
        problem = inexpressible(dict(typing.cast("Mapping[str, Any]", schema)))
        if problem is not None:
            raise AgentDefinitionError(
                f'Tool {name!r} (strict: true in its definition): its input schema {problem}. Drop "strict" (the '
                "input is still validated before your code runs), or change the schema."
            )
    return definition


def strict_param(definition: dict[str, Any]) -> Any:
    """``definition`` with ``strict: true`` and its schema made strict-compatible (the SDK's ``transform_schema``)."""
    name = definition.get("name")
    schema = definition.get("input_schema")
    if schema is None:
        raise AgentDefinitionError(
            f"Tool {name!r}: strict needs an input_schema; a tool Anthropic defines cannot be strict."
        )
    alternative = "Drop strict: the input is still validated before your code runs."
    strict = strict_schema(dict(schema), f"Tool {name!r} (strict): its input schema", alternative)
    return {**definition, "input_schema": strict, "strict": True}

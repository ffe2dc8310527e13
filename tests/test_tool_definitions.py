"""Helper definitions: Anthropic-defined client tools (memory, bash, text editor) and strict tools."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic import transform_schema
from anthropic.types import MemoryTool20250818Param, ToolBash20250124Param, ToolTextEditor20250728Param
from support import GOOD, results_of, run, triage_agent

from typedagent import AgentDefinitionError, HelperTool, tool
from typedagent.testing import ScriptedClient, output_call, response, text, tool_call


async def test_memory_tool_is_sent_as_is_and_its_handler_answers_the_commands() -> None:
    """{"type": "memory_20250818", "name": "memory"} needs no schema; the model's commands reach the handler.

    Modelled on pydantic-ai's test_anthropic_memory_tool.yaml: the tool is sent as type and name only, the model
    calls it with a `view` command, and a tool_result answers it.
    """
    commands: list[dict[str, Any]] = []

    def memory(command: dict[str, Any]) -> str:
        commands.append(command)
        return "Directory: /memories\n(empty)"

    definition: MemoryTool20250818Param = {"type": "memory_20250818", "name": "memory"}
    agent = triage_agent(helpers=[HelperTool(definition=definition, handler=memory)])  # type: ignore[arg-type]
    client = ScriptedClient(
        [
            response(
                text("I'll check my memory directory first."),
                tool_call("memory", {"command": "view", "path": "/memories"}),
            ),
            output_call(GOOD),
        ]
    )
    result = await run(agent, client)
    assert result.ok
    assert client.requests[0]["tools"][0] == {"type": "memory_20250818", "name": "memory"}
    assert commands == [{"command": "view", "path": "/memories"}]
    assert results_of(result.metadata.messages[2])[0][1:] == ("Directory: /memories\n(empty)", False)


@pytest.mark.parametrize(
    "definition",
    [
        ToolBash20250124Param(type="bash_20250124", name="bash"),
        ToolTextEditor20250728Param(type="text_editor_20250728", name="str_replace_based_edit_tool"),
    ],
)
def test_bash_and_text_editor_tools_are_accepted_without_a_schema(definition: Any) -> None:
    """The other Anthropic-defined client tools are declared by type and name, and sent as given."""
    agent = triage_agent(helpers=[HelperTool(definition=definition, handler=lambda command: "ok")])
    assert agent.tool_params()[0] == definition


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        ({"name": "lookup"}, "needs an 'input_schema'"),
        ({"type": "custom", "name": "lookup"}, "needs an 'input_schema'"),
        ({"type": "web_search_20250305", "name": "web_search"}, "is a server tool, which the API runs itself"),
        ({"type": "mcp_toolset", "name": "docs"}, "define_agent\\(server_tools="),
    ],
)
def test_helper_definitions_the_api_would_not_route_to_your_code_are_refused(
    definition: dict[str, Any], message: str
) -> None:
    """A custom tool without schema, or a server tool given a handler, fails at definition time."""
    with pytest.raises(AgentDefinitionError, match=message):
        HelperTool(definition=definition, handler=lambda command: "ok")  # type: ignore[arg-type]


def test_strict_tool_is_sent_with_a_strict_schema() -> None:
    """@tool(strict=True) sends strict: true and the schema made strict-compatible by the SDK."""

    @tool(strict=True)
    def search(query: str, limit: int = 3) -> list[str]:
        """Search."""
        return []

    param = triage_agent(helpers=[search]).tool_params()[0]
    assert search.strict
    assert param["strict"] is True
    assert param["input_schema"] == transform_schema(tool(search.fn).input_schema)
    assert param["input_schema"]["additionalProperties"] is False  # type: ignore[index]


def test_strict_helper_tool_transforms_its_schema_and_a_strict_definition_is_sent_as_given() -> None:
    """HelperTool(strict=True) makes the schema strict; a definition saying strict itself is left untouched."""
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    made = HelperTool(definition={"name": "s", "input_schema": schema}, handler=len, strict=True)
    assert made.definition == {"name": "s", "input_schema": transform_schema(schema), "strict": True}
    given = HelperTool(definition={"name": "s", "input_schema": schema, "strict": True}, handler=len)
    assert given.definition == {"name": "s", "input_schema": schema, "strict": True}


def test_strict_needs_a_schema() -> None:
    """An Anthropic-defined tool cannot be strict: it has no schema of yours to make strict."""
    with pytest.raises(AgentDefinitionError, match="strict needs an input_schema"):
        HelperTool(definition={"type": "memory_20250818", "name": "memory"}, handler=len, strict=True)  # type: ignore[typeddict-item]


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (
            {"type": "object", "properties": {"query": {"type": "str"}}},
            "input_schema.properties.query: unknown type 'str'; use one of array, boolean, integer, null, number, "
            "object, string",
        ),
        (
            {"type": "object", "properties": {"filter": {"$ref": "#/$defs/Filter"}}},
            "input_schema.properties.filter: $ref '#/$defs/Filter' does not resolve inside the schema",
        ),
        (
            {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query", "limit"]},
            'input_schema: "required" names [\'limit\'], which are not in "properties"',
        ),
    ],
)
def test_helper_schema_the_api_would_reject_is_refused_at_definition(schema: dict[str, Any], message: str) -> None:
    """The schema checks of `typedagent check` run when the HelperTool is defined: a clear AgentDefinitionError."""
    definition: Any = {"name": "search", "description": "Search.", "input_schema": schema}
    with pytest.raises(AgentDefinitionError) as raised:
        HelperTool(definition=definition, handler=lambda tool_input: "")
    assert str(raised.value) == (
        f"HelperTool 'search': its input_schema is not one the Messages API accepts: {message}. "
        "Fix the schema (or build the tool with @tool from a typed function)."
    )

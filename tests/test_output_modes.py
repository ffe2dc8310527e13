"""Output modes on the definition side: ``OutputTool(schema, mode=...)``, what each sends, what is refused and why."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import pytest
from anthropic import transform_schema
from pydantic import BaseModel, Field
from support import Triage, triage_agent

from typedagent import AgentDefinitionError, HelperTool, OutputTool, define_agent, tool
from typedagent._agent.json_schema import LeanJsonSchema
from typedagent._shared.frozen import thaw


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return query


class Node(BaseModel):
    """A recursive type."""

    name: str
    children: list[Node] = []


class Tagged(BaseModel):
    """An object with a mapping field."""

    tags: dict[str, int]


class MaybeTagged(BaseModel):
    """An object with an optional mapping field (inline in an anyOf)."""

    tags: dict[str, int] | None = None


class Loose(BaseModel):
    """An object with a field of type Any."""

    anything: Any


def test_output_mode_defaults_to_tool() -> None:
    """Without ``mode`` the output is the output tool's input, as before."""
    output = OutputTool(Triage)
    assert output.mode == "tool"
    assert [param["name"] for param in triage_agent(helpers=[lookup]).tool_params()] == ["lookup", "final_output"]


@pytest.mark.parametrize("mode", ["native", "prompted"])
def test_output_text_modes_offer_no_output_tool(mode: Any) -> None:
    """In native and prompted modes the tools are the helpers (and submit when reflecting): no output tool."""
    agent = triage_agent(output=OutputTool(Triage, mode=mode), helpers=[lookup])
    assert [param["name"] for param in agent.tool_params()] == ["lookup"]
    reflecting = triage_agent(output=OutputTool(Triage, mode=mode, reflection_handler=str), helpers=[lookup])
    assert [param["name"] for param in reflecting.tool_params()] == ["lookup", "submit"]
    assert triage_agent(output=OutputTool(Triage, mode=mode)).tool_params() == []


@pytest.mark.parametrize("mode", ["native", "prompted"])
def test_output_text_modes_leave_the_output_name_free(mode: Any) -> None:
    """No output tool is offered, so a helper may have its name (in tool mode that is a definition error)."""

    @tool(name="final_output")
    def final(query: str) -> str:
        """A helper named like the default output tool."""
        return query

    agent = triage_agent(output=OutputTool(Triage, mode=mode), helpers=[final])
    assert [param["name"] for param in agent.tool_params()] == ["final_output"]
    with pytest.raises(AgentDefinitionError, match="has the output tool's name"):
        triage_agent(helpers=[final])


def test_output_native_format_is_the_sdk_transform_of_the_schema() -> None:
    """Native mode's format is ``{"type": "json_schema", "schema": transform_schema(<output schema>)}``."""
    output = OutputTool(Triage, mode="native")
    schema = Triage.model_json_schema(schema_generator=LeanJsonSchema)  # no made-up titles
    schema.pop("title", None)
    assert schema["description"] == "The output type most tests use."  # the docstring stays: no tool carries it
    assert thaw(output._format) == {"type": "json_schema", "schema": transform_schema(schema)}
    assert thaw(output._format)["schema"]["properties"]["severity"]["description"] == "{maximum: 5, minimum: 1}"


def test_output_native_format_wraps_a_type_that_is_not_an_object() -> None:
    """A list output is wrapped in ``{"value": ...}`` for the format as for the output tool."""
    output = OutputTool(list[int], mode="native")
    assert thaw(output._format)["schema"] == {
        "type": "object",
        "properties": {"value": {"type": "array", "items": {"type": "integer"}}},
        "additionalProperties": False,
        "required": ["value"],
    }
    assert output.parse({"value": [1, 2]}) == [1, 2]


@pytest.mark.parametrize("mode", ["tool", "prompted"])
def test_output_only_native_mode_has_a_format(mode: Any) -> None:
    """Tool and prompted modes send no ``output_config.format``."""
    assert OutputTool(Triage, mode=mode)._format is None


def test_output_mode_must_be_one_of_three() -> None:
    """Any other mode is a definition error naming the three."""
    with pytest.raises(AgentDefinitionError, match=r"'tool', 'native' or 'prompted', got 'json'"):
        OutputTool(Triage, mode="json")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


@pytest.mark.parametrize(
    ("mode", "advice"), [("native", "held to the schema by the API already"), ("prompted", "use mode='native'")]
)
def test_output_strict_is_a_tool_mode_option(mode: Any, advice: str) -> None:
    """``strict=True`` sends the output tool strict; a mode without an output tool refuses it, saying what to do."""
    with pytest.raises(AgentDefinitionError, match=rf"mode={mode!r}\) cannot be strict.*{advice}"):
        OutputTool(Triage, mode=mode, strict=True)


@pytest.mark.parametrize(
    ("form", "named", "problem"),
    [
        (Node, "Node", "is recursive"),
        (Tagged, "Tagged", r"has a mapping \(tags: a dict of free keys\)"),
        (dict[str, int], "dict[str, int]", r"has a mapping \(the whole schema"),
        (list[Tagged | None], "list[Tagged | None]", r"has a mapping \(Tagged.tags"),
        (MaybeTagged, "MaybeTagged", r"has a mapping \(tags: a dict"),
        (Loose, "Loose", "cannot be made strict by anthropic.transform_schema"),
    ],
)
def test_output_native_refuses_a_schema_constrained_decoding_cannot_hold(form: Any, named: str, problem: str) -> None:
    """Recursion, a mapping, an ``Any`` field: refused when the OutputTool is made, naming the type and other modes."""
    with pytest.raises(AgentDefinitionError) as raised:
        OutputTool(form, mode="native")
    message = str(raised.value)
    assert message.startswith(f"OutputTool(mode='native'): {named} ")
    assert re.search(problem, message)
    assert message.endswith(
        "Use mode='tool' (without strict) or mode='prompted': the output is validated all the same."
    )


@pytest.mark.parametrize("form", [Node, Tagged, dict[str, int], Loose])
def test_output_strict_tool_refuses_what_native_refuses(form: Any) -> None:
    """A strict output tool has the same limits: the error names the type and advises strict=False."""
    with pytest.raises(AgentDefinitionError, match=r"\(strict=True\): .*Use strict=False \(or mode='prompted'"):
        OutputTool(form, strict=True)


@pytest.mark.parametrize("form", [Node, Tagged, Loose])
def test_output_other_modes_take_any_schema(form: Any) -> None:
    """Tool mode without strict, and prompted mode, send the schema as it is: nothing is refused."""
    assert OutputTool(form).mode == "tool"
    assert OutputTool(form, mode="prompted").mode == "prompted"


def test_strict_helpers_refuse_what_constrained_decoding_cannot_hold() -> None:
    """A strict helper whose input has a mapping is refused when the agent is defined, naming the tool."""

    @tool(strict=True)
    def tag(tags: dict[str, int]) -> str:
        """Tag something."""
        return str(tags)

    with pytest.raises(AgentDefinitionError, match=r"Tool 'tag' \(strict\): its input schema has a mapping \(tags"):
        triage_agent(helpers=[tag])
    raw = {"name": "raw", "input_schema": {"type": "object", "properties": {"x": {}}}}
    with pytest.raises(AgentDefinitionError, match=r"Tool 'raw' \(strict\).*transform_schema.*Drop strict"):
        HelperTool(definition=raw, handler=lambda data: data, strict=True)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        (
            {
                "type": "object",
                "properties": {"node": {"$ref": "#/$defs/Node"}},
                "required": ["node"],
                "additionalProperties": False,
                "$defs": {
                    "Node": {
                        "type": "object",
                        "properties": {"next": {"$ref": "#/$defs/Node"}},
                        "required": ["next"],
                        "additionalProperties": False,
                    }
                },
            },
            "is recursive",
        ),
        (
            {
                "type": "object",
                "properties": {"tags": {"type": "object", "additionalProperties": {"type": "integer"}}},
                "required": ["tags"],
                "additionalProperties": False,
            },
            r"has a mapping \(tags",
        ),
    ],
)
def test_strict_definitions_sent_as_given_refuse_what_constrained_decoding_cannot_hold(
    schema: dict[str, Any], problem: str
) -> None:
    """A definition that says "strict": true itself is sent as given, but what the API refuses is refused here."""
    definition = {"name": "raw", "description": "Raw.", "input_schema": schema, "strict": True}
    with pytest.raises(
        AgentDefinitionError, match=rf"Tool 'raw' \(strict: true in its definition\): its input schema {problem}.*Drop"
    ):
        HelperTool(definition=definition, handler=lambda data: data)  # type: ignore[arg-type]
    lenient = HelperTool(definition={**definition, "strict": False}, handler=lambda data: data)  # type: ignore[arg-type]
    assert lenient.definition["input_schema"] == schema


def test_output_config_format_in_model_settings_is_refused() -> None:
    """The format is the output's: setting it in model_settings says to use mode='native'."""
    with pytest.raises(AgentDefinitionError, match=r"use OutputTool\(Triage, mode='native'\)"):
        triage_agent(model_settings={"output_config": {"format": {"type": "json_schema", "schema": {}}}})
    with pytest.raises(AgentDefinitionError, match=r"output_config'\] is not what messages.create takes"):
        triage_agent(model_settings={"output_config": "high"})
    kept = triage_agent(output=OutputTool(Triage, mode="native"), model_settings={"output_config": {"effort": "low"}})
    assert kept.model_settings["output_config"]["effort"] == "low"


def test_output_mode_survives_with_options() -> None:
    """A copy made with ``with_options`` keeps the output and its mode."""
    agent = triage_agent(output=OutputTool(Triage, mode="native"))
    assert agent.with_options(model="claude-opus-4-5").output.mode == "native"


def test_output_native_constraints_move_into_descriptions() -> None:
    """What the grammar cannot hold (a bound, a pattern) stays in the description the model reads."""

    class Code(BaseModel):
        code: str = Field(pattern=r"^[A-Z]{3}$", description="An airport code.")

    output = OutputTool(Code, mode="native")
    assert thaw(output._format)["schema"]["properties"]["code"] == {
        "type": "string",
        "description": "An airport code.\n\n{pattern: ^[A-Z]{3}$}",
    }
    agent = define_agent(name="codes", model="claude-haiku-4-5", output=output)
    assert agent.output is output


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"] = "dog"
    good: bool


def test_output_native_union_tags_are_required() -> None:
    """The grammar drops a union's discriminator: each member's tag is made required, so the model always writes it."""
    for output in (
        OutputTool(Annotated[Cat | Dog, Field(discriminator="kind")], mode="native"),
        OutputTool(Annotated[Cat | Dog, Field(discriminator="kind")], strict=True),
    ):
        schema = thaw(output._format)["schema"] if output.mode == "native" else output.to_param()["input_schema"]
        assert schema["$defs"]["Cat"]["required"] == ["kind", "lives"]
        assert schema["$defs"]["Dog"]["required"] == ["kind", "good"]
        assert output.parse({"value": {"kind": "dog", "good": True}}) == Dog(good=True)
    plain = OutputTool(Annotated[Cat | Dog, Field(discriminator="kind")]).to_param()["input_schema"]
    assert plain["$defs"]["Cat"]["required"] == ["lives"]  # the schema sent as it is: the discriminator tells

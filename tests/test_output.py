"""Output types: every type pydantic validates, wrapped in ``{"value": ...}`` when its schema is not an object."""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Annotated, Any, Literal

import pydantic
import pytest
from pydantic import BaseModel, Field
from support import assert_api_valid, results_of
from typing_extensions import TypedDict

from typedagent import AgentErrorCode, OutputTool, ValidationConfig, define_agent, execute_agent
from typedagent.testing import ScriptedClient, output_call, submit_call, tool_call


class Item(BaseModel):
    name: str
    qty: int = Field(ge=1)


class Node(BaseModel):
    label: str
    children: list[Node] = []


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"] = "dog"
    good: bool


Pet = Annotated[Cat | Dog, Field(discriminator="kind")]


class Color(Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Movie(TypedDict):
    title: str
    year: int


CASES: list[tuple[Any, Any, dict[str, Any]]] = [
    (list[Item], [Item(name="bolt", qty=3)], {"value": [{"name": "bolt", "qty": 3}]}),
    (int, 42, {"value": 42}),
    (str, "fine", {"value": "fine"}),
    (bool, False, {"value": False}),
    (float, 2.5, {"value": 2.5}),
    (Literal["low", "high"], "high", {"value": "high"}),
    (Color, Color.BLUE, {"value": "blue"}),
    (Point, Point(x=1, y=2), {"x": 1, "y": 2}),
    (Movie, Movie(title="Heat", year=1995), {"title": "Heat", "year": 1995}),
    (Node, Node(label="a", children=[Node(label="b")]), {"label": "a", "children": [{"label": "b", "children": []}]}),
    (Pet, Dog(good=True), {"value": {"kind": "dog", "good": True}}),
    (dict[str, int], {"a": 1}, {"a": 1}),
]


@pytest.mark.parametrize(
    ("form", "value", "tool_input"), CASES, ids=[OutputTool(form).type_name for form, _, _ in CASES]
)
async def test_output_any_type_round_trips(form: Any, value: Any, tool_input: dict[str, Any]) -> None:
    """Each output type runs end to end: the model's input (wrapped or not) comes back as the typed value."""
    agent = define_agent(name="typed", model="claude-sonnet-4-6", output=OutputTool(form))
    client = ScriptedClient([output_call(value)])
    result = await execute_agent(agent, "go", client=client)
    assert_api_valid(result, client)
    assert result.ok is True
    assert result.output == value
    assert type(result.output) is type(value)
    assert result.metadata.attempts[0].candidate == tool_input
    assert agent.output.to_input(value) == tool_input
    assert agent.output.parse(tool_input) == value


def test_output_wraps_a_schema_that_is_not_an_object() -> None:
    """A list output is sent as an object with one required property, ``value``; an object schema is not wrapped."""
    listing = OutputTool(list[Item]).to_param()["input_schema"]
    assert listing == {
        "$defs": {
            "Item": {
                "properties": {
                    "name": {"type": "string"},
                    "qty": {"minimum": 1, "type": "integer"},
                },
                "required": ["name", "qty"],
                "type": "object",
            }
        },
        "additionalProperties": False,
        "properties": {"value": {"items": {"$ref": "#/$defs/Item"}, "type": "array"}},
        "required": ["value"],
        "type": "object",
    }
    assert OutputTool(list[Item]).wrapped is True
    assert OutputTool(Item).wrapped is False
    assert OutputTool(Item).to_param()["input_schema"]["properties"].keys() == {"name", "qty"}


def test_output_discriminated_union_schema() -> None:
    """A union of models with a discriminator is a wrapped ``oneOf`` whose discriminator the model can read."""
    schema = OutputTool(Pet).to_param()["input_schema"]
    value = schema["properties"]["value"]
    assert value["oneOf"] == [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]
    assert value["discriminator"]["propertyName"] == "kind"
    assert set(schema["$defs"]) == {"Cat", "Dog"}


async def test_output_wrapped_schema_errors_name_the_input_path() -> None:
    """A wrapped output that fails the schema is fed back with paths into the input (``value.0.qty``)."""
    agent = define_agent(name="items", model="claude-sonnet-4-6", output=OutputTool(list[Item]))
    client = ScriptedClient(
        [output_call({"value": [{"name": "bolt", "qty": 0}]}), output_call([Item(name="b", qty=1)])]
    )
    result = await execute_agent(agent, "go", client=client)
    assert result.ok is True
    assert result.metadata.attempts[0].validation_errors == ("value.0.qty: Input should be greater than or equal to 1",)
    assert result.metadata.attempts[0].candidate == {"value": [{"name": "bolt", "qty": 0}]}


async def test_output_wrapped_input_without_value_is_rejected() -> None:
    """An unwrapped input for a wrapped output says ``value`` is missing and extra keys are not allowed."""
    agent = define_agent(
        name="n", model="claude-sonnet-4-6", output=OutputTool(int), validation=ValidationConfig(max_attempts=1)
    )
    client = ScriptedClient([tool_call("final_output", {"number": 3})])
    result = await execute_agent(agent, "go", client=client)
    assert result.ok is False
    assert result.error.code is AgentErrorCode.VALIDATION_FAILED
    assert result.metadata.attempts[0].validation_errors == (
        "value: Field required",
        "number: Extra inputs are not permitted",
    )
    assert result.error.last_output == {"number": 3}


async def test_output_optional_type_accepts_none() -> None:
    """``None`` is a valid output of an optional type, not mistaken for a failed validation."""
    agent = define_agent(name="maybe", model="claude-sonnet-4-6", output=OutputTool(Item | None))
    result = await execute_agent(agent, "go", client=ScriptedClient([output_call(None)]))
    assert result.ok is True
    assert result.output is None


async def test_output_reflection_on_a_list_previews_and_submits() -> None:
    """Reflection handlers receive the typed value of any output type."""
    seen: list[list[Item]] = []

    def preview(items: list[Item]) -> str:
        seen.append(items)
        return f"{len(items)} item(s)"

    agent = define_agent(name="r", model="claude-sonnet-4-6", output=OutputTool(list[Item], reflection_handler=preview))
    client = ScriptedClient([output_call([Item(name="a", qty=1)]), submit_call()])
    result = await execute_agent(agent, "go", client=client)
    assert result.ok is True
    assert seen == [[Item(name="a", qty=1)]]
    assert results_of(result.metadata.messages[2]) == [("toolu_01_001", "1 item(s)", False)]


def test_output_parse_raises_for_a_bad_input() -> None:
    """``OutputTool.parse`` turns a raw candidate back into the type, or raises pydantic's ValidationError."""
    output = OutputTool(list[Item])
    assert output.parse({"value": [{"name": "a", "qty": 2}]}) == [Item(name="a", qty=2)]
    with pytest.raises(pydantic.ValidationError, match=r"value\.0\.qty"):
        output.parse({"value": [{"name": "a", "qty": "many"}]})


@pytest.mark.parametrize(
    ("form", "name"),
    [
        (list[Item], "list[Item]"),
        (Literal["a", "b"], "Literal['a', 'b']"),
        (Pet, "Cat | Dog"),
        (Item, "Item"),
        (int, "int"),
        (dict[str, int], "dict[str, int]"),
    ],
)
def test_output_type_name_reads_like_the_annotation(form: Any, name: str) -> None:
    """Messages name the output type as it is written, without module paths."""
    assert OutputTool(form).type_name == name


def test_output_typing_typeddict_on_python_311_says_what_to_use() -> None:
    """A ``typing.TypedDict`` pydantic cannot use on Python < 3.12 is a definition error quoting pydantic's fix."""
    import sys
    import typing

    class Legacy(typing.TypedDict):
        title: str

    if sys.version_info >= (3, 12):
        assert OutputTool(Legacy).wrapped is False
    else:
        with pytest.raises(ValueError, match=r"Legacy cannot produce a JSON schema.*typing_extensions.TypedDict"):
            OutputTool(Legacy)

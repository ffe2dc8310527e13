"""Partial outputs: the output tool's input read while it streams, against an all-optional model of the output type."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from typedagent import OutputTool, Partial
from typedagent._streaming.partial import PartialReader, partial_model


class Step(BaseModel):
    """A nested model."""

    title: str
    done: bool


class Plan(BaseModel):
    """An output with nesting, a list, a literal, an alias and a constraint."""

    name: str = Field(min_length=10)
    kind: Literal["short", "long"]
    steps: list[Step]
    owner_name: str = Field(alias="owner")


@dataclasses.dataclass
class Point:
    """A dataclass output."""

    x: int
    y: int


class Row(TypedDict):
    """A TypedDict output."""

    key: str
    count: int


class Tagged(BaseModel):
    """An output with an optional nested model and an annotated field."""

    step: Step | None = None
    score: Annotated[int, Field(ge=0)]


class Node(BaseModel):
    """A recursive model."""

    label: str
    children: list[Node] = []


def test_partial_reader_shows_fields_as_they_arrive() -> None:
    """A cut string is shown as written; nested models and lists are partial too; constraints are not applied."""
    reader = PartialReader(OutputTool(Plan))
    raw, partial = reader.read('{"name": "Mig", "kind": "short", "steps": [{"title": "Back')
    assert raw == {"name": "Mig", "kind": "short", "steps": [{"title": "Back"}]}
    assert partial is not None
    assert partial.value.name == "Mig"
    assert partial.value.kind == "short"
    assert partial.value.steps[0].title == "Back"
    assert partial.value.steps[0].done is None
    assert partial.value.owner_name is None


def test_partial_reader_leaves_out_a_value_not_valid_yet() -> None:
    """A literal still being written is None until it is one of the allowed values; the others stay."""
    reader = PartialReader(OutputTool(Plan))
    _, partial = reader.read('{"name": "Migration plan", "kind": "sho')
    assert partial is not None
    assert partial.value.kind is None
    assert partial.value.name == "Migration plan"
    _, done = reader.read('{"name": "Migration plan", "kind": "short", "owner": "Ann"}')
    assert done is not None
    assert done.value.kind == "short"
    assert done.value.owner_name == "Ann"


def test_partial_reader_before_anything_readable() -> None:
    """Before the first key, the partial is empty (all None); JSON that is not an object gives nothing."""
    reader = PartialReader(OutputTool(Plan))
    raw, partial = reader.read("{")
    assert raw == {}
    assert partial is not None
    assert partial.value.name is None
    assert reader.read("[1, 2") == ({}, None)
    assert reader.read("}{") == ({}, None)


def test_partial_reader_dataclass_typeddict_and_wrapped_outputs() -> None:
    """Dataclass outputs are partial models, TypedDict outputs dicts of the keys present, wrapped ones whole."""
    _, point = PartialReader(OutputTool(Point)).read('{"x": 3')
    assert point is not None
    assert (point.value.x, point.value.y) == (3, None)
    _, row = PartialReader(OutputTool(Row)).read('{"key": "a", "count": ')
    assert row == Partial(value={"key": "a"})
    words = PartialReader(OutputTool(list[str]))
    assert words.read('{"value": ["a", "b') == ({"value": ["a", "b"]}, Partial(value=["a", "b"]))
    assert words.read('{"value": [1') == ({"value": [1]}, None)


def test_partial_model_handles_recursive_types() -> None:
    """A recursive model gets a partial model whose deeper levels are taken as they come."""
    model = partial_model(Node)
    assert model is not None
    node = model.model_validate({"label": "root", "children": [{"label": "leaf"}]})
    assert node.model_dump()["children"][0]["label"] == "leaf"
    assert partial_model(int) is None
    assert partial_model(list[int]) is None


def test_partial_reader_unions_and_annotated_fields() -> None:
    """An optional nested model is partial too; an annotated field keeps its type but not its constraint."""
    _, partial = PartialReader(OutputTool(Tagged)).read('{"score": -1, "step": {"title": "Go"')
    assert partial is not None
    assert partial.value.score == -1
    assert partial.value.step is not None
    assert partial.value.step.title == "Go"


class Described(BaseModel):
    """An output with a method and a property, which a partial does not have."""

    title: str
    steps: list[Step]

    def describe(self) -> str:
        """A method of the user's class."""
        return f"{self.title}: {len(self.steps)} steps"

    @property
    def first(self) -> Step:
        """A property of the user's class."""
        return self.steps[0]


def test_partial_get_reads_fields_typed_and_none_until_they_arrive() -> None:
    """get() reads a field (nested, indexed) or None while it is missing; the class's methods are never there."""
    _, partial = PartialReader(OutputTool(Described)).read('{"title": "Migr", "steps": [{"title": "Back')
    assert partial is not None
    assert partial.get(lambda t: t.title) == "Migr"
    assert partial.get(lambda t: t.steps[0].title) == "Back"
    assert partial.get(lambda t: t.steps[0].done) is None
    assert partial.get(lambda t: t.steps[1].title) is None  # an index not there yet
    assert partial.get(lambda t: t.describe()) is None  # a partial is not an instance of the class
    assert partial.get(lambda t: t.first) is None
    assert not isinstance(partial.value, Described)
    _, empty = PartialReader(OutputTool(Described)).read("{")
    assert empty is not None
    assert empty.get(lambda t: t.steps[0].title) is None  # None has no index: not arrived
    assert empty.get(lambda t: len(t.title)) is None
    _, row = PartialReader(OutputTool(Row)).read('{"key": "a"')
    assert row is not None
    assert (row.get(lambda t: t["key"]), row.get(lambda t: t["count"])) == ("a", None)


def test_partial_attribute_reads_still_work_at_run_time_and_copies_are_partials() -> None:
    """Code that read fields as attributes still runs; copies and pickles stay Partial objects."""
    import copy
    import pickle

    _, partial = PartialReader(OutputTool(Tagged)).read('{"score": 4')
    assert partial is not None
    assert partial.score == 4  # type: ignore[attr-defined]
    assert copy.deepcopy(partial) == partial
    assert isinstance(copy.deepcopy(partial), Partial)
    assert pickle.loads(pickle.dumps(Partial(value={"score": 4}))) == Partial(value={"score": 4})
    with pytest.raises(AttributeError):
        _ = partial._private  # type: ignore[attr-defined]  # private names are never forwarded

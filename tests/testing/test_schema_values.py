"""Values made up from a JSON schema: each keyword the generator reads yields values the schema and pydantic accept."""

from __future__ import annotations

import datetime
import ipaddress
import random
import re
import uuid
from typing import Any

import pytest
from pydantic import AnyUrl, BaseModel, Field, TypeAdapter

from typedagent.testing._described_limits import restored
from typedagent.testing._schema_values import RandomChooser, SchemaValueError, generate


def made(schema: dict[str, Any], seed: int = 0) -> Any:
    return generate(schema, RandomChooser(random.Random(seed)))


def made_for(form: Any, seeds: int = 25) -> list[Any]:
    """Values for ``form``'s schema over several seeds, each validated by pydantic."""
    adapter = TypeAdapter(form)
    schema = adapter.json_schema()
    values = [made(schema, seed) for seed in range(seeds)]
    for value in values:
        adapter.validate_python(value)
    return values


@pytest.mark.parametrize(
    ("form", "check"),
    [
        (datetime.date, lambda v: datetime.date.fromisoformat(v)),
        (datetime.time, lambda v: datetime.time.fromisoformat(v)),
        (datetime.datetime, lambda v: datetime.datetime.fromisoformat(v)),
        (datetime.timedelta, lambda v: v.startswith("P")),
        (uuid.UUID, lambda v: uuid.UUID(v)),
        (AnyUrl, lambda v: v.startswith("https://example.com/")),
        (ipaddress.IPv4Address, lambda v: ipaddress.IPv4Address(v)),
        (ipaddress.IPv6Address, lambda v: ipaddress.IPv6Address(v)),
    ],
    ids=lambda form: getattr(form, "__name__", "check"),
)
def test_schema_values_string_formats(form: Any, check: Any) -> None:
    """Formats pydantic emits (dates, times, durations, uuids, urls, addresses) get values of that format."""
    for value in made_for(form):
        assert check(value)


def test_schema_values_email_and_hostname_formats() -> None:
    """The remaining formats read like their names."""
    assert re.fullmatch(r"[a-z0-9]+@example\.com", made({"type": "string", "format": "email"}))
    assert made({"type": "string", "format": "hostname"}).endswith(".example.com")


@pytest.mark.parametrize(
    "pattern",
    [
        r"^[A-Z]{3}-\d{2,4}$",
        r"^(ab|cd)+x?$",
        r"^[^a-z]\w\s.$",
        r"^(\d)-\1$",
        r"^\D\W\S$",
        r"^a*?b+?$",
        r"^[a-c0-2_]+$",
        r"^(?:ab){2}$",
        r"^[^\d]{2}$",
        r"^[^a]b$",
    ],
)
def test_schema_values_patterns(pattern: str) -> None:
    """Strings for a pattern match it: literals, classes, categories, groups, back-references, repeats."""
    for seed in range(20):
        assert re.search(pattern, made({"type": "string", "pattern": pattern}, seed)), pattern


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "string", "pattern": r"(?=a)b"}, "a pattern using ASSERT cannot be generated"),
        ({"type": "string", "pattern": r"[^\w\s\-.]"}, "excludes every character"),
        ({"type": "string", "pattern": r"\p{Lu}"}, "is not a regular expression Python reads"),
        ({"type": "string", "pattern": "^a$", "minLength": 3}, "fits its length limits"),
        ({"$ref": "#/$defs/Missing"}, "does not resolve"),
        (
            {
                "$defs": {"N": {"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}, "required": ["n"]}},
                "$ref": "#/$defs/N",
            },
            "nests too deeply",
        ),
    ],
)
def test_schema_values_say_what_they_cannot_make(schema: dict[str, Any], message: str) -> None:
    """A schema no value can be made for is a SchemaValueError saying why."""
    with pytest.raises(SchemaValueError, match=message):
        made(schema)


def test_schema_values_numbers_keep_their_bounds() -> None:
    """Inclusive and exclusive bounds, multiples, and one-sided bounds are all kept."""
    for seed in range(40):
        multiple = made({"type": "integer", "minimum": 3, "maximum": 40, "multipleOf": 7}, seed)
        assert multiple % 7 == 0
        assert 3 <= multiple <= 40
        assert 0 < made({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 3}, seed) < 3
        assert 0 < made({"type": "number", "exclusiveMinimum": 0, "maximum": 1}, seed) <= 1
        assert made({"type": "integer", "minimum": 5000}, seed) >= 5000
        assert made({"type": "number", "maximum": -5000}, seed) <= -5000


def test_schema_values_containers() -> None:
    """Tuples (prefixItems), sets (uniqueItems), mappings (additionalProperties) and allOf merges validate."""
    made_for(tuple[int, str])
    for value in made_for(set[int]):
        assert len(value) == len(set(value))
    made_for(dict[str, float])
    merged = {
        "$defs": {"A": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}},
        "allOf": [{"$ref": "#/$defs/A"}, {"properties": {"b": {"const": 1}}, "required": ["b"]}],
    }
    assert made(merged).keys() == {"a", "b"}
    assert len(made({"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 2})) >= 2


def test_schema_values_type_lists_consts_and_untyped_schemas() -> None:
    """A list of types picks one; a const is itself; a schema without a type is a word."""
    kinds = {type(made({"type": ["string", "null"]}, seed)) for seed in range(20)}
    assert kinds == {str, type(None)}
    assert made({"const": {"fixed": True}}) == {"fixed": True}
    assert isinstance(made({}), str)
    assert made({"properties": {"x": {"type": "boolean"}}, "required": ["x"]}).keys() == {"x"}


class Tree(BaseModel):
    label: str = Field(min_length=1)
    kids: list[Tree] = []
    parent: Tree | None = None


def test_schema_values_recursive_models_end() -> None:
    """Recursion thins out with depth: optional parts and recursive branches are left out deep down."""
    values = made_for(Tree, seeds=30)
    assert any(value.get("kids") for value in values)


def test_schema_values_are_deterministic_for_a_seed() -> None:
    """The same seed makes the same value; another seed another one."""
    schema = TypeAdapter(list[Tree]).json_schema()
    assert made(schema, 3) == made(schema, 3)
    assert [made(schema, seed) for seed in range(5)] != [made(schema, 3)] * 5


def test_schema_values_restore_the_limits_transform_schema_moved() -> None:
    """Bounds and patterns ``transform_schema`` moved into a description are put back; the rest stays as it is."""
    moved = {"type": "string", "description": "A code.\n\n{pattern: ^[A-Z]{3}, x$, minLength: 3, default: AB}"}
    assert restored(moved) == {**moved, "pattern": "^[A-Z]{3}, x$", "minLength": 3}
    assert restored({"type": "integer", "description": "{maximum: 9, minimum: 0}"})["maximum"] == 9
    assert restored({"type": "number", "description": "{minimum: 0.5, maximum: nan}"}) == {
        "type": "number",
        "description": "{minimum: 0.5, maximum: nan}",
        "minimum": 0.5,
    }
    assert restored({"type": "integer", "description": "{minimum: zero, maximum: 3}"})["maximum"] == 3
    kept = {"type": "integer", "minimum": 2, "description": "{minimum: 0}"}
    assert restored(kept) is kept
    for plain in ({"type": "string", "description": "Use {braces}"}, {"type": "string"}):
        assert restored(plain) is plain

"""The definitions sent are lean and lose nothing.

Today's tool and output definitions against the snapshot of those typedagent generated before issue 33
(``tests/data/schemas_before_issue_33.json``, written by ``tests/schema_models.py``).
"""

from __future__ import annotations

import copy
import json
import os
from typing import Any

import pytest
from schema_models import OUTPUTS, SNAPSHOT, TOOLS, definitions

from typedagent import OutputTool
from typedagent._agent.output import DEFAULT_OUTPUT_DESCRIPTION

# The snapshot holds the schemas the locked pydantic and anthropic produce; the releases at the bottom of the ranges
# (make test-lowest) render some of them differently (docstrings, strict transforms), which is not a change of ours.
pytestmark = pytest.mark.skipif(
    os.environ.get("TYPEDAGENT_TEST_MATRIX") == "lowest",
    reason="the schema snapshot is of the locked pydantic and anthropic releases",
)

BEFORE: dict[str, Any] = json.loads(SNAPSHOT.read_text())


def made_up_title(name: str) -> str:
    """The title pydantic gives a field or class that has none: its name, title-cased."""
    return name.title().replace("_", " ").strip()


def without_made_up_titles(node: Any) -> Any:
    """A schema without the titles that only repeat a property's name or a ``$defs`` key; data left as is."""
    if isinstance(node, list):
        return [without_made_up_titles(item) for item in node]
    if not isinstance(node, dict):
        return node
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "$defs") and isinstance(value, dict):
            named = {}
            for name, sub in value.items():
                sub = without_made_up_titles(sub)
                if isinstance(sub, dict) and sub.get("title") in (made_up_title(name), name):
                    sub = {k: v for k, v in sub.items() if k != "title"}
                named[name] = sub
            result[key] = named
        elif key in ("default", "enum", "const", "examples"):
            result[key] = value  # data, not schemas: a "title" key there is the user's
        else:
            result[key] = without_made_up_titles(value)
    return result


def titles(node: Any, path: str = "") -> list[str]:
    """Every ``title`` keyword in a schema, by path (the property named ``title`` is not one)."""
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "title" and isinstance(value, str) and not path.endswith("/properties"):
                found.append(f"{path}: {value}")
            elif key not in ("default", "enum", "const", "examples"):
                found += titles(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, item in enumerate(node):
            found += titles(item, f"{path}/{index}")
    return found


@pytest.mark.parametrize("key", sorted(BEFORE["tools"]))
def test_tool_schemas_lose_only_made_up_titles(key: str) -> None:
    """A @tool's definition is the snapshot's minus the titles repeating names: constraints, enums, defaults stay."""
    before = BEFORE["tools"][key]
    now = TOOLS[key].to_param()
    assert now == {**before, "input_schema": without_made_up_titles(before["input_schema"])}
    assert titles(now["input_schema"]) == []


@pytest.mark.parametrize("key", sorted(BEFORE["outputs"]))
def test_output_schemas_lose_only_made_up_titles_and_move_the_docstring(key: str) -> None:
    """An output tool's definition is the snapshot's minus made-up titles, and the docstring becomes its description.

    With no description given, the output type's docstring leaves the schema's root for the tool's description.
    """
    before = copy.deepcopy(BEFORE["outputs"][key])
    now = OUTPUTS[key].to_param()
    expected_schema = without_made_up_titles(before["input_schema"])
    if before["description"] == DEFAULT_OUTPUT_DESCRIPTION and "description" in expected_schema:
        before["description"] = expected_schema.pop("description")
    assert now == {**before, "input_schema": expected_schema}


def test_custom_titles_and_the_field_named_title_are_kept() -> None:
    """Field(title=...) and ConfigDict(title=...) say something a name does not: they stay, as does a title field."""
    invoice = OUTPUTS["invoice"].to_param()["input_schema"]
    assert invoice["properties"]["custom"]["title"] == "Custom number"
    assert "title" in invoice["properties"]  # the Invoice field called "title"
    household = OUTPUTS["household"].to_param()["input_schema"]
    assert titles(household) == ["/$defs/Owner: Pet owner"]


def test_output_description_is_the_docstring_unless_given() -> None:
    """The docstring describes the output tool; a given description wins; no docstring keeps the generic one."""
    assert OUTPUTS["invoice"].description == "An invoice read from a scanned document."
    assert OUTPUTS["invoice_described"].description == "Hand in the invoice."
    assert OUTPUTS["invoice_described"].to_param()["input_schema"]["description"] == (
        "An invoice read from a scanned document."
    )
    assert OUTPUTS["point"].description == "A point on the plane."
    assert OUTPUTS["movie"].description == "A film."
    assert OUTPUTS["nodoc"].description == DEFAULT_OUTPUT_DESCRIPTION
    assert OUTPUTS["lines"].description == DEFAULT_OUTPUT_DESCRIPTION  # a wrapped list has no docstring of its own
    generic = str(DEFAULT_OUTPUT_DESCRIPTION)
    assert OutputTool(OUTPUTS["invoice"].schema, description=generic).description == generic


def test_definitions_are_smaller_than_the_snapshot() -> None:
    """The lean definitions are at least 15% smaller (JSON bytes) than the snapshot."""
    size = len(json.dumps(definitions(), separators=(",", ":")))
    assert size < 0.85 * len(json.dumps(BEFORE, separators=(",", ":")))

"""Output types and tools whose generated definitions ``tests/data/schemas_before_issue_33.json`` snapshots.

The snapshot was written by ``python tests/schema_models.py`` before the leaner schemas of issue 33 (no nested
``title`` keys, the output model's docstring as the output tool's description): ``tests/test_lean_schemas.py``
checks that today's definitions differ from it only by what that change removed or moved.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from typedagent import OutputTool, tool

SNAPSHOT = Path(__file__).parent / "data" / "schemas_before_issue_33.json"


class Color(enum.Enum):
    """A colour of the brand palette."""

    RED = "red"
    GREEN = "green"


class Address(BaseModel):
    """A postal address."""

    street: str = Field(min_length=1, description="Street and number.")
    postcode: str = Field(pattern=r"^\d{5}$")
    country: Literal["DE", "FR", "IT"] = "DE"


class Line(BaseModel):
    sku: str
    quantity: int = Field(ge=1, le=999)
    unit_price: float = Field(gt=0, description="In EUR.")


class Invoice(BaseModel):
    """An invoice read from a scanned document."""

    title: str = Field(description="The document's own title line.")
    number: str = Field(max_length=20, examples=["INV-2024-001"])
    status: Literal["draft", "sent", "paid"] = "draft"
    color: Color = Color.RED
    billing: Address
    shipping: Address | None = None
    lines: list[Line] = Field(min_length=1, max_length=50)
    tags: list[str] = Field(default_factory=list)
    notes: Annotated[str | None, Field(description="Free text.")] = None
    custom: int = Field(default=0, title="Custom number")


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = Field(default=9, ge=0)


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool = True


class Owner(BaseModel):
    model_config = ConfigDict(title="Pet owner")

    pet: Annotated[Cat | Dog, Field(discriminator="kind")]


class Household(BaseModel):
    """Who lives here."""

    owners: list[Owner] = Field(max_length=4)
    address: Address


class Tree(BaseModel):
    """A recursive node."""

    label: str
    children: list[Tree] = []


@dataclasses.dataclass
class Point:
    """A point on the plane."""

    x: float
    y: float = 0.0


class Movie(TypedDict):
    """A film."""

    name: str
    year: int


class NoDoc(BaseModel):
    value: int


OUTPUTS: dict[str, OutputTool[Any]] = {
    "invoice": OutputTool(Invoice, name="emit_invoice"),
    "invoice_described": OutputTool(Invoice, name="emit_invoice", description="Hand in the invoice."),
    "invoice_strict": OutputTool(Invoice, name="emit_invoice", strict=True),
    "owner": OutputTool(Owner),
    "household": OutputTool(Household),
    "tree": OutputTool(Tree),
    "point": OutputTool(Point),
    "movie": OutputTool(Movie),
    "nodoc": OutputTool(NoDoc),
    "lines": OutputTool(list[Line]),
    "color": OutputTool(Color),
}


@tool
def search_kb(query: str, limit: int = 3, color: Color = Color.RED, address: Address | None = None) -> list[str]:
    """Search the knowledge base.

    Args:
        query: What to look for.
        limit: How many ids to return.
        color: Filter by colour.
        address: Only articles for this address.
    """
    return []


@tool
def reserved(json: str, model_config: Literal["a", "b"] = "a") -> str:
    """Parameters named like pydantic's own."""
    return json


@tool(strict=True)
def strict_lookup(key: str, lines: list[Line]) -> str:
    """Look a key up."""
    return key


TOOLS = {"search_kb": search_kb, "reserved": reserved, "strict_lookup": strict_lookup}


def definitions() -> dict[str, Any]:
    """The definitions sent today for every output type and tool above."""
    return {
        "outputs": {key: output.to_param() for key, output in OUTPUTS.items()},
        "tools": {key: helper.to_param() for key, helper in TOOLS.items()},
    }


if __name__ == "__main__":
    if "--write" not in sys.argv:
        print(json.dumps(definitions(), indent=2))
    else:
        SNAPSHOT.write_text(json.dumps(definitions(), indent=2, ensure_ascii=False) + "\n")

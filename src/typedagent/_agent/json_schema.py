"""JSON schemas of tool inputs and outputs without the titles pydantic makes up from names."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic.json_schema import GenerateJsonSchema

if TYPE_CHECKING:
    from pydantic.json_schema import JsonSchemaMode, JsonSchemaValue
    from pydantic_core import CoreSchema, core_schema

__all__ = ["LeanJsonSchema"]


class LeanJsonSchema(GenerateJsonSchema):
    """pydantic's schema generator, minus the ``title`` it gives every field and class from its name.

    Such a title repeats the property name (``"kb_articles"`` titled ``"Kb Articles"``) or the ``$defs`` key the
    schema refers to, in every definition sent with every request: the model reads the name already. A title you
    set (``Field(title=...)``, ``ConfigDict(title=...)``) says something else, and stays. Constraints,
    descriptions, enums, defaults and examples are untouched.
    """

    def generate(self, schema: CoreSchema, mode: JsonSchemaMode = "validation") -> JsonSchemaValue:
        """The schema, its ``$defs`` without the titles that repeat their key (an enum's, which pydantic sets last)."""
        json_schema = super().generate(schema, mode)
        for key, definition in json_schema.get("$defs", {}).items():
            title = definition.get("title")
            if isinstance(title, str) and (key == title or key.endswith(f"__{title}") or key.startswith(f"{title}-")):
                del definition["title"]
        return json_schema

    def field_title_should_be_set(self, schema: object) -> bool:
        """Never make up a field's title (one given with ``Field(title=...)`` is in the field's schema already)."""
        del schema
        return False

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        """A model's schema without the title that is its class name (``Page[Item]`` too, whose key differs)."""
        return _untitled(super().model_schema(schema), schema["cls"])

    def dataclass_schema(self, schema: core_schema.DataclassSchema) -> JsonSchemaValue:
        """A dataclass's schema without the title that is its class name."""
        return _untitled(super().dataclass_schema(schema), schema["cls"])

    def typed_dict_schema(self, schema: core_schema.TypedDictSchema) -> JsonSchemaValue:
        """A ``TypedDict``'s schema without the title that is its class name."""
        return _untitled(super().typed_dict_schema(schema), schema.get("cls"))

    def enum_schema(self, schema: core_schema.EnumSchema) -> JsonSchemaValue:
        """An enum's schema without the title that is its class name."""
        return _untitled(super().enum_schema(schema), schema["cls"])


def _untitled(json_schema: JsonSchemaValue, cls: Any) -> JsonSchemaValue:
    if cls is not None and json_schema.get("title") == getattr(cls, "__name__", None):
        del json_schema["title"]
    return json_schema

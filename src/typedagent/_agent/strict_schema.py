"""Schemas under the API's constrained decoding (strict tools, native output): made compatible, or refused clearly.

The SDK's ``transform_schema`` makes a JSON schema strict-compatible: constraints the grammar cannot hold move into
descriptions, every object gets ``additionalProperties: false``. What it cannot express is refused here, when the
agent is defined, rather than by the API on the first request: a recursive type (the API refuses it), a mapping
(``dict[str, X]``: forced closed, the model could only ever send ``{}``), and whatever ``transform_schema`` itself
rejects (a field typed ``Any``).
"""

from __future__ import annotations

import copy
from typing import Any, cast

from .._shared.errors import AgentDefinitionError

__all__ = ["inexpressible", "is_recursive", "strict_schema"]


def strict_schema(schema: dict[str, Any], subject: str, alternative: str) -> dict[str, Any]:
    """``schema`` made strict-compatible by the SDK's ``transform_schema``.

    Args:
        schema: The JSON schema (an object schema; its ``$defs`` with it).
        subject: What is defined, as the error names it: ``"OutputTool 'final_output' (mode='native'): Node"``.
        alternative: What to do instead, a sentence: ``"Use mode='prompted', whose output is validated all the same."``

    Raises:
        AgentDefinitionError: the schema holds something constrained decoding cannot express.
    """
    problem = inexpressible(schema)
    if problem is None:
        from anthropic import transform_schema  # only strict schemas pay for importing the SDK

        try:
            return transform_schema(_tags_required(schema))
        except (ValueError, AssertionError, TypeError) as exc:
            problem = f"cannot be made strict by anthropic.transform_schema ({exc})"
    raise AgentDefinitionError(f"{subject} {problem}. {alternative}")


def _tags_required(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with the tag of every discriminated union required in each of its members.

    ``transform_schema`` keeps a union as ``anyOf`` but moves its ``discriminator`` into a description; a tag with a
    default (``kind: Literal["cat"] = "cat"``) would then be optional, and a model held to the grammar could leave it
    out, which pydantic refuses ("Unable to extract tag"). Required, the grammar writes it.
    """
    tagged = copy.deepcopy(schema)
    defs = _mapping(tagged.get("$defs"))
    for node in _nodes(tagged):
        tag = _mapping(node.get("discriminator")).get("propertyName")
        if not isinstance(tag, str):
            continue
        members = [*_items(node.get("oneOf")), *_items(node.get("anyOf"))]
        for member in members:
            ref = _mapping(member).get("$ref")
            target = _mapping(defs.get(ref.rsplit("/", 1)[-1]) if isinstance(ref, str) else member)
            if tag in _mapping(target.get("properties")):
                required = [str(name) for name in _items(target.get("required"))]
                target["required"] = required if tag in required else [tag, *required]
    return tagged


def _mapping(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (a fresh one: writing to it changes nothing)."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def _items(value: object) -> list[object]:
    return cast("list[object]", value) if isinstance(value, list) else []


def _nodes(node: object) -> list[dict[str, Any]]:
    """Every schema object inside ``node`` (``node`` too), depth first."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        fields = cast("dict[str, Any]", node)
        found.append(fields)
        for value in fields.values():
            found.extend(_nodes(value))
    elif isinstance(node, list):
        for item in cast("list[object]", node):
            found.extend(_nodes(item))
    return found


def inexpressible(schema: dict[str, Any]) -> str | None:
    """What in ``schema`` constrained decoding cannot express, as the end of a sentence; None if nothing."""
    if is_recursive(schema):
        return "is recursive (a type that contains itself), and the API refuses recursive strict schemas"
    where = _mapping_at(schema, "")
    if where is not None:
        return (
            f"has a mapping ({where or 'the whole schema'}: a dict of free keys), and strict schemas close every "
            "object, so the model could only ever send {} there"
        )
    return None


def _mapping_at(node: object, path: str) -> str | None:
    """The path of the first object schema without ``properties`` that takes other keys (a ``dict[str, X]``)."""
    if isinstance(node, list):
        for item in cast("list[object]", node):  # the members of a union: the path names the field
            found = _mapping_at(item, path)
            if found is not None:
                return found
        return None
    if not isinstance(node, dict):
        return None
    fields = cast("dict[str, Any]", node)
    closed = fields.get("additionalProperties") is False
    if fields.get("type") == "object" and "properties" not in fields and not closed:
        return path
    for key, value in fields.items():
        if key in ("properties", "$defs") and isinstance(value, dict):
            for name, sub in cast("dict[str, object]", value).items():
                found = _mapping_at(sub, f"{path}.{name}".lstrip("."))
                if found is not None:
                    return found
        elif key in ("items", "anyOf", "oneOf", "allOf", "additionalProperties", "prefixItems"):
            found = _mapping_at(value, path)
            if found is not None:
                return found
    return None


def is_recursive(schema: dict[str, Any]) -> bool:
    """Whether a ``$defs`` entry refers back to itself, directly or through others."""
    defs: dict[str, Any] = schema.get("$defs", {})
    edges = {name: _refs(body) for name, body in defs.items()}

    def reaches(start: str, target: str, seen: set[str]) -> bool:
        for name in edges.get(start, ()):
            if name == target or (name not in seen and reaches(name, target, seen | {name})):
                return True
        return False

    return any(reaches(name, name, {name}) for name in edges)


def _refs(node: object) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in cast("dict[str, object]", node).items():
            if key == "$ref" and isinstance(value, str):
                found.add(value.rsplit("/", 1)[-1])
            else:
                found |= _refs(value)
    elif isinstance(node, list):
        for item in cast("list[object]", node):
            found |= _refs(item)
    return found

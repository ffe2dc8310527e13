"""The structural checks of a tool's JSON schema the Messages API would refuse: run at definition and by ``check``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, cast

from typing_extensions import TypeIs

__all__ = ["JSON_TYPES", "as_list", "as_mapping", "schema_problems"]

JSON_TYPES: Final = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})


def as_mapping(value: object) -> Mapping[str, Any] | None:
    """``value`` as a mapping, or None when it is not one."""
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else None


def _is_list(value: object) -> TypeIs[list[Any]]:
    return isinstance(value, list)


def as_list(value: object) -> list[Any] | None:
    """``value`` as a list, or None when it is not one."""
    return value if _is_list(value) else None


def schema_problems(schema: object, where: str = "", root: object = None) -> list[tuple[str, str]]:
    """Structural problems of a tool's JSON schema as ``(path, message)``; the top must be an object."""
    root = schema if root is None else root
    node = as_mapping(schema)
    if node is None:
        return [(where, f"must be a JSON schema object, got {type(schema).__name__}")]
    found: list[tuple[str, str]] = []
    if not where and node.get("type") != "object":
        found.append((where, 'must have "type": "object" at the top'))
    kind: object = node.get("type")
    kinds = as_list(kind) or ([] if kind is None else [kind])
    for item in kinds:
        if item not in JSON_TYPES:
            found.append((where, f"unknown type {item!r}; use one of {', '.join(sorted(JSON_TYPES))}"))
    ref: object = node.get("$ref")
    if ref is not None and _resolve(root, ref) is None:
        found.append((where, f"$ref {ref!r} does not resolve inside the schema"))
    raw_properties: object = node.get("properties")
    properties = as_mapping(raw_properties)
    if raw_properties is not None and properties is None:
        found.append((where, '"properties" must be an object'))
    for key, sub in (properties or {}).items():
        found.extend(schema_problems(sub, f"{where}.properties.{key}", root))
    raw_required: object = node.get("required")
    if raw_required is not None:
        required = as_list(raw_required)
        if required is None or not all(isinstance(name, str) for name in required):
            found.append((where, '"required" must be a list of property names'))
        else:
            missing = [name for name in required if name not in (properties or {})]
            if missing:
                found.append((where, f'"required" names {missing}, which are not in "properties"'))
    for key in ("items", "additionalProperties", "not"):
        nested = as_mapping(node.get(key))
        if nested is not None:
            found.extend(schema_problems(nested, f"{where}.{key}", root))
    for key in ("anyOf", "oneOf", "allOf"):
        raw_subs: object = node.get(key)
        if raw_subs is None:
            continue
        subs = as_list(raw_subs)
        if subs is None:
            found.append((where, f'"{key}" must be a list of schemas'))
            continue
        for index, sub in enumerate(subs):
            found.extend(schema_problems(sub, f"{where}.{key}[{index}]", root))
    for key, sub in (as_mapping(node.get("$defs")) or {}).items():
        found.extend(schema_problems(sub, f"{where}.$defs.{key}", root))
    return found


def _resolve(root: object, ref: object) -> object:
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    node: object = root
    for part in [p for p in ref[1:].split("/") if p]:
        mapping = as_mapping(node)
        if mapping is None or part not in mapping:
            return None
        node = mapping[part]
    return node

"""``typedagent check``'s checks of how an agent hands over its output: what its mode needs of the model and the API.

A native output's format and every strict tool are compiled by the API into one grammar per request, with limits
on what they hold together (Anthropic's "schema complexity limits"); and only newer models take them at all. A
schema the grammar cannot express at all is refused earlier, when the agent is defined.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, cast

from .._agent.definition import AgentDefinition
from .._api.hop import NO_STRUCTURED_OUTPUTS
from .._shared.frozen import thaw

__all__ = ["MAX_OPTIONAL_PARAMETERS", "MAX_STRICT_TOOLS", "MAX_UNION_PARAMETERS", "output_problems"]

MAX_STRICT_TOOLS: Final = 20
MAX_OPTIONAL_PARAMETERS: Final = 24
MAX_UNION_PARAMETERS: Final = 16
"""Anthropic's limits on the strict schemas of one request, counted together (the strict tools and the native
output's format), as pydantic-ai counts them (``pydantic_ai/models/_anthropic_schema_limits.py``): only what is
reached without following a ``$ref``, so that a request the API accepts is never reported."""


def output_problems(agent: AgentDefinition[Any, Any], params: Sequence[Any]) -> list[str]:
    """Every problem of the agent's output mode and of the strict schemas of its requests, each phrased with its fix.

    ``params`` are the tool definitions a request sends (with ``check --connect``, the toolsets' too).
    """
    output = agent.output
    problems: list[str] = []
    definitions = [cast("Mapping[str, Any]", tool) for tool in params if isinstance(tool, Mapping)]
    strict = [tool for tool in definitions if tool.get("strict")]
    older = NO_STRUCTURED_OUTPUTS.search(agent.model) is not None
    if output.mode == "native" and older:
        problems.append(
            f"output: mode='native', but model {agent.model!r} has no structured outputs (output_config.format): "
            "use mode='prompted' on it, or a newer model"
        )
    if strict and older:
        names = ", ".join(repr(tool.get("name")) for tool in strict)
        problems.append(
            f"strict tools ({names}): model {agent.model!r} does not take strict: true; drop strict, or use a newer "
            "model"
        )
    needs = "mode='native'" if output.mode == "native" else "strict tools" if strict else None
    for alternative in agent.fallback if needs is not None else ():
        if NO_STRUCTURED_OUTPUTS.search(alternative.model) is not None:
            problems.append(
                f"fallback: model {alternative.model!r} has no structured outputs, which {needs} needs: a call never "
                "moves to it (it is skipped); put a newer model in the chain, or use mode='prompted'"
            )
    output_schema = None if output._format is None else thaw(output._format)["schema"]
    exceeded = exceeded_limit([tool.get("input_schema") or {} for tool in strict], output_schema)
    if exceeded is not None:
        problems.append(
            f"strict schemas: {exceeded}. The API compiles every strict schema of a request together (strict tools "
            "and the native output's format) and refuses one over its limits: set strict only on the tools that "
            "need it, simplify the output type, or use mode='tool' (without strict) or mode='prompted'"
        )
    return problems


def exceeded_limit(tool_schemas: Sequence[Mapping[str, Any]], output_schema: Mapping[str, Any] | None) -> str | None:
    """The first limit the strict schemas of one request go over, said as a count; None if they fit."""
    if len(tool_schemas) > MAX_STRICT_TOOLS:
        return f"{len(tool_schemas)} strict tools, over the limit of {MAX_STRICT_TOOLS}"
    optional = unions = 0
    for schema in [*tool_schemas, *([output_schema] if output_schema is not None else [])]:
        for node in _objects(schema):
            required = node.get("required") or ()
            for name, prop in cast("Mapping[str, Any]", node["properties"]).items():
                optional += name not in required
                unions += isinstance(prop, Mapping) and (
                    "anyOf" in prop or isinstance(cast("Mapping[str, Any]", prop).get("type"), list)
                )
    if optional > MAX_OPTIONAL_PARAMETERS:
        return f"{optional} optional parameters, over the limit of {MAX_OPTIONAL_PARAMETERS}"
    if unions > MAX_UNION_PARAMETERS:
        return f"{unions} parameters with union types, over the limit of {MAX_UNION_PARAMETERS}"
    return None


def _objects(node: object) -> Iterator[Mapping[str, Any]]:
    """Every object schema with ``properties`` reached from ``node`` without following a ``$ref`` (nor ``$defs``)."""
    if isinstance(node, list):
        for item in cast("list[object]", node):
            yield from _objects(item)
        return
    if not isinstance(node, Mapping):
        return
    fields = cast("Mapping[str, Any]", node)
    if isinstance(fields.get("properties"), Mapping):
        yield fields
        for prop in cast("Mapping[str, Any]", fields["properties"]).values():
            yield from _objects(prop)
    for key in ("items", "anyOf", "allOf", "oneOf", "prefixItems"):
        if key in fields:
            yield from _objects(fields[key])

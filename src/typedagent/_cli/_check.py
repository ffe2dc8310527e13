"""``typedagent check``: offline validation of agent definitions, for CI."""

from __future__ import annotations

import argparse
import json
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Final, TextIO

from .._agent.calling import TOOL_NAME_RE
from .._agent.definition import AgentDefinition
from .._agent.locate import ImportFailed, Target, UsageError, agents_in, load_agent, load_module, split_target
from .._agent.models import model_warning
from .._agent.schemas import as_list, as_mapping, schema_problems
from .._run.sync import run_blocking
from .._shared.frozen import thaw
from ._check_output import output_problems
from ._progress import make_lines

__all__ = ["add_check_parser", "check_agent", "check_command", "check_params", "schema_problems"]

TOOL_KEYS: Final = frozenset(
    {
        "name",
        "description",
        "input_schema",
        "cache_control",
        "type",
        "strict",
        "eager_input_streaming",
        "input_examples",
        "allowed_callers",
        "defer_loading",
    }
)
"""The keys of ``anthropic.types.ToolParam``: anything else is a typo or another vendor's shape."""


def add_check_parser(commands: Any) -> None:
    """Register ``typedagent check``."""
    parser = commands.add_parser(
        "check",
        help="validate agent definitions offline (for CI)",
        description=(
            "Check agent definitions without calling the API: they build, tool names and schemas are valid, "
            "strict schemas are in the form the SDK's transform_schema produces, every tool has a description, "
            "the output mode suits the model, and the strict schemas of a request keep within the API's limits; "
            "a model id the installed SDK does not know is a warning. One line per problem on stderr. Exit "
            "status: 0 no problems, 1 problems, 2 usage error."
        ),
    )
    parser.add_argument(
        "targets",
        nargs="+",
        metavar="MODULE[:ATTR]",
        help="agents to check; a module without :ATTR checks every agent defined in it",
    )
    parser.add_argument(
        "--show-tools",
        action="store_true",
        help="print the tool definitions (and a native output's format) the API will receive, as JSON on stdout",
    )
    parser.add_argument(
        "--connect",
        action="store_true",
        help="connect the agents' toolsets (start their MCP servers) to check and show their tools too",
    )


def check_command(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """Check every target; return the exit status."""
    lines = make_lines(stderr)
    usage_errors = 0
    problems = 0
    checked: list[tuple[Target, list[Any]]] = []
    for spec in args.targets:
        try:
            with warnings.catch_warnings():
                # The model check warns as the module defines its agents: said once below, as a warn line.
                warnings.filterwarnings("ignore", message=r"model .* is not a model the installed anthropic SDK knows")
                targets = _targets(spec)
        except UsageError as exc:
            lines.line(("error ", "bold red"), f"{spec}: {exc}")
            usage_errors += 1
            continue
        except ImportFailed as exc:
            lines.line(("FAIL  ", "bold red"), f"{spec}: {exc}")
            problems += 1
            continue
        for target in targets:
            params, unconnected = _tools_of(target.agent, connect=args.connect)
            found = [unconnected] if isinstance(unconnected, str) else check_params(params)
            found += output_problems(target.agent, params)
            problems += len(found)
            checked.append((target, params))
            warning = model_warning(target.agent.model)
            if warning is not None:
                lines.line(("warn  ", "bold yellow"), f"{target.label}: {warning}")
            if not found:
                described = _describe(target.agent, params, connected=args.connect)
                lines.line(("ok    ", "bold green"), target.label, (f"  {described}", "dim"))
            for problem in found:
                lines.line(("FAIL  ", "bold red"), f"{target.label}: {problem}")
    if args.show_tools:
        shown = [_shown(target, params) for target, params in checked]
        stdout.write(json.dumps(shown, indent=2, ensure_ascii=False) + "\n")
        stdout.flush()
    verdict = "no problems" if not problems else f"{problems} problem{'s' if problems != 1 else ''}"
    lines.line(
        (f"checked {len(checked)} agent{'s' if len(checked) != 1 else ''}: {verdict}", "bold"),
        f"; {usage_errors} usage error{'s' if usage_errors != 1 else ''}" if usage_errors else "",
    )
    return 2 if usage_errors else 1 if problems else 0


def _shown(target: Target, params: list[Any]) -> dict[str, Any]:
    agent = target.agent
    shown: dict[str, Any] = {
        "target": target.label,
        "agent": agent.name,
        "model": agent.model,
        "output_mode": agent.output.mode,
        "tools": params,
    }
    if agent.output._format is not None:
        shown["output_format"] = thaw(agent.output._format)
    return shown


def _targets(spec: str) -> list[Target]:
    ref, attr = split_target(spec)
    if attr is not None:
        return [load_agent(spec)]
    module = load_module(ref)
    found = agents_in(module)
    if not found:
        raise UsageError(f"{ref} defines no agents at module level: name one as {ref}:ATTR")
    return [Target(label=f"{ref}:{name}", agent=agent, module=module) for name, agent in found]


def _tools_of(agent: AgentDefinition[Any, Any], *, connect: bool) -> tuple[list[Any], str | None]:
    """The tool definitions to check: with ``connect``, the toolsets' too (or why they could not be connected)."""
    if not connect or not agent.toolsets:
        return list(agent.tool_params()), None

    async def connected() -> list[Any]:
        async with agent.connected() as tools:
            return list(tools)

    try:
        return run_blocking(connected()), None
    except (ConnectionError, ValueError) as exc:
        return list(agent.tool_params()), f"toolsets: {exc}"


def _describe(agent: AgentDefinition[Any, Any], params: Sequence[Any], *, connected: bool) -> str:
    helpers = len(agent.helpers)
    servers = len(agent.server_tools)
    server_part = f", {servers} server tool{'s' if servers != 1 else ''}" if servers else ""
    toolsets = len(agent.toolsets)
    toolset_part = ""
    if toolsets:
        what = f"{toolsets} toolset{'s' if toolsets != 1 else ''}"
        if connected:
            remote = len(params) - len(agent.tool_params())
            toolset_part = f", {what} ({remote} tool{'s' if remote != 1 else ''})"
        else:
            toolset_part = f", {what} (not connected: --connect lists their tools)"
    reflection = ", reflection" if agent.reflection_enabled else ""
    mode = agent.output.mode
    output = f"output {agent.output.name!r}" if mode == "tool" else f"output as JSON text ({mode})"
    helper_part = f"{helpers} helper{'s' if helpers != 1 else ''}"
    return f"{agent.name}: {helper_part}{toolset_part}{server_part}, {output}{reflection}"


def check_agent(agent: AgentDefinition[Any, Any]) -> list[str]:
    """Every problem with the tool definitions ``agent`` sends, and with its output mode.

    Its own tool definitions only: its toolsets' need connecting (``check --connect``).
    """
    params = list(agent.tool_params())
    return [*check_params(params), *output_problems(agent, params)]


def check_params(params: Sequence[Any]) -> list[str]:
    """Every problem with the tool definitions ``params``, each phrased with its fix."""
    problems: list[str] = []
    seen: set[str] = set()
    for param in params:
        definition: Mapping[str, Any] = param
        name = definition.get("name")
        label = f"tool {name!r}"
        if _anthropic_defined(definition):
            # A server tool, or a client tool Anthropic defines: the API brings its description and schema.
            problems.extend(_json_problems(label, param))
            continue
        if not isinstance(name, str) or not TOOL_NAME_RE.fullmatch(name):
            problems.append(f"{label}: invalid name; use 1-64 characters from a-z, A-Z, 0-9, '_' and '-'")
        elif name in seen:
            problems.append(f"{label}: two tools have this name; tool names must be unique")
        seen.add(str(name))
        unknown = sorted(set(definition) - TOOL_KEYS)
        if unknown:
            problems.append(
                f"{label}: unknown key(s) {', '.join(map(repr, unknown))}; the Messages API takes "
                "name, description, input_schema (not 'parameters' or 'inputSchema')"
            )
        description = definition.get("description")
        if not isinstance(description, str) or not description.strip():
            problems.append(
                f"{label}: no description; the model reads it to decide when to call the tool "
                "(add a docstring, or pass description=...)"
            )
        schema: object = definition.get("input_schema")
        problems.extend(f"{label}: input_schema{where}: {what}" for where, what in schema_problems(schema))
        problems.extend(_json_problems(label, param))
        strict_schema = as_mapping(schema)
        if definition.get("strict") and strict_schema is not None:
            problems.extend(f"{label}: {problem}" for problem in strict_problems(strict_schema))
    return problems


def _anthropic_defined(definition: Mapping[str, Any]) -> bool:
    kind = definition.get("type")
    return isinstance(kind, str) and kind != "custom"


def _json_problems(label: str, param: object) -> list[str]:
    try:
        json.dumps(param)
    except (TypeError, ValueError) as exc:
        return [f"{label}: the definition is not JSON-serialisable ({exc})"]
    return []


def strict_problems(schema: Mapping[str, Any]) -> list[str]:
    """A ``strict`` tool's schema must be what ``anthropic.transform_schema`` makes of it (a fixed point)."""
    from anthropic import transform_schema

    try:
        strict = transform_schema(dict(schema))
    except Exception as exc:
        return [f"strict, but anthropic.transform_schema rejects its input_schema: {exc}"]
    where = _first_difference(schema, strict, "input_schema")
    if where is None:
        return []
    return [
        f"strict, but its input_schema is not in strict form (transform_schema changes {where}); "
        "build it with anthropic.transform_schema(...) or use OutputTool(..., strict=True)"
    ]


def _first_difference(a: object, b: object, path: str) -> str | None:
    left, right = as_mapping(a), as_mapping(b)
    if left is not None and right is not None:
        for key in sorted(set(left) | set(right), key=str):
            if key not in left or key not in right:
                return f"{path}.{key}"
            deeper = _first_difference(left[key], right[key], f"{path}.{key}")
            if deeper is not None:
                return deeper
        return None
    first, second = as_list(a), as_list(b)
    if first is not None and second is not None:
        if len(first) != len(second):
            return path
        for index, (x, y) in enumerate(zip(first, second, strict=True)):
            deeper = _first_difference(x, y, f"{path}[{index}]")
            if deeper is not None:
                return deeper
        return None
    return None if a == b else path

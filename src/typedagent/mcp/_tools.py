"""An MCP server's tools as the agent's: named (prefixed, made valid), filtered, and called with their input checked."""

from __future__ import annotations

import copy
import hashlib
import importlib
import re
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, cast

from .._agent.remote import ToolsetFailed
from .._shared.limits import Overran, within

if TYPE_CHECKING:
    from .._agent.context import RunContext

__all__ = ["MCPTool", "Options", "build_tools", "unknown_names"]

INVALID_CHARS: Final = re.compile(r"[^a-zA-Z0-9_-]")
MAX_NAME: Final = 64

Caller = Callable[[str, dict[str, Any]], Awaitable[tuple[str | list[dict[str, Any]], bool]]]
"""Calls a tool by the server's name for it; returns the result's content and whether it is an error."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Options:
    """What a toolset does with its server's tools."""

    prefix: str | None = None
    allow: frozenset[str] | None = None
    deny: frozenset[str] = frozenset()
    timeout_s: float | None = None
    requires_approval: bool | frozenset[str] = False

    def keeps(self, name: str) -> bool:
        """Whether the server's tool ``name`` is one of the agent's tools."""
        return (self.allow is None or name in self.allow) and name not in self.deny

    def approval(self, name: str) -> bool:
        """Whether a call of the server's tool ``name`` needs a person's approval."""
        wanted = self.requires_approval
        return wanted if isinstance(wanted, bool) else name in wanted


@dataclass(frozen=True, kw_only=True, slots=True)
class MCPTool:
    """One tool of an MCP server, as the agent has it (the ``RemoteTool`` the loop runs)."""

    name: str
    """The name the model calls it by."""
    server: str
    """The toolset's name."""
    server_name: str
    """The server's own name for the tool."""
    definition: Mapping[str, Any]
    """What the API receives: name, description, input schema."""
    call_timeout_s: float | None
    """A call still running after this many seconds is cancelled, and the model told it timed out."""
    requires_approval: bool
    """Whether a person must approve each call before it runs."""
    call: Caller = field(repr=False, compare=False)
    validator: Any = field(default=None, repr=False, compare=False)
    """The input schema's compiled ``jsonschema`` validator; None when the schema is not one."""

    @property
    def sequential(self) -> bool:
        """Never: calls to one server run together."""
        return False

    @property
    def timeout_s(self) -> None:
        """None: the call's own limit, ``call_timeout_s``, is applied in ``invoke`` (where the call is cancelled)."""
        return None

    def to_param(self) -> dict[str, Any]:
        """The definition sent to the API (a fresh copy)."""
        return copy.deepcopy(dict(self.definition))

    async def invoke(self, tool_input: dict[str, Any], ctx: RunContext[Any]) -> object:
        """Check the input against the tool's schema, call it (within its time limit), return the result's content.

        Raises:
            ToolsetFailed: the input does not match (the server was not called), the call timed out (and was
                cancelled), the server answered with an error result, or the connection failed.
        """
        del ctx
        problems = self._input_problems(tool_input)
        if problems:
            lines = "\n".join(f"- {problem}" for problem in problems)
            raise ToolsetFailed(
                f"Error: invalid input for tool {self.name!r}:\n{lines}\nFix the input and call the tool again."
            )
        call = self.call(self.server_name, tool_input)
        limit = self.call_timeout_s
        try:
            content, is_error = await (call if limit is None else within(call, limit))
        except Overran:
            raise ToolsetFailed(
                f"Error: tool {self.name!r} (MCP server {self.server!r}) timed out after {limit} s; the call was "
                "cancelled. Try again with a smaller request, or go on without it."
            ) from None
        if is_error:
            raise ToolsetFailed(content)
        return content

    def _input_problems(self, tool_input: dict[str, Any]) -> list[str]:
        if self.validator is None:
            return []
        errors = sorted(self.validator.iter_errors(tool_input), key=lambda error: list(error.absolute_path))
        return [f"{_path(error.absolute_path)}: {error.message}" for error in errors]


def build_tools(server: str, listed: Sequence[Mapping[str, Any]], options: Options, call: Caller) -> list[MCPTool]:
    """The agent's tools from a server's listing (the wire form of each ``Tool``), in the server's order.

    Names the API would refuse are made valid (other characters become ``_``; past 64 characters, cut and
    suffixed with a hash), and stay unique.
    """
    tools: list[MCPTool] = []
    taken: set[str] = set()
    for listing in listed:
        name = str(listing.get("name", ""))
        if not options.keeps(name):
            continue
        api_name = _api_name(name, options.prefix, taken)
        taken.add(api_name)
        given: object = listing.get("inputSchema")
        schema: dict[str, Any] = dict(cast("Mapping[str, Any]", given)) if isinstance(given, Mapping) else {}
        schema = schema or {"type": "object"}
        definition: dict[str, Any] = {"name": api_name, "input_schema": schema}
        description = listing.get("description") or listing.get("title")
        if isinstance(description, str) and description:
            definition["description"] = description
        tools.append(
            MCPTool(
                name=api_name,
                server=server,
                server_name=name,
                definition=definition,
                call_timeout_s=options.timeout_s,
                requires_approval=options.approval(name),
                call=call,
                validator=_validator(schema),
            )
        )
    return tools


def unknown_names(listed: Sequence[Mapping[str, Any]], options: Options) -> list[str]:
    """The names ``allow=`` and ``deny=`` give that the server has no tool by (a typo would go unnoticed)."""
    names = {str(listing.get("name", "")) for listing in listed}
    given: Collection[str] = (options.allow or frozenset()) | options.deny
    return sorted(set(given) - names)


def _path(parts: Sequence[object]) -> str:
    return ".".join(str(part) for part in parts) or "(root)"


def _api_name(name: str, prefix: str | None, taken: set[str]) -> str:
    wanted = INVALID_CHARS.sub("_", f"{prefix}_{name}" if prefix else name) or "tool"
    if len(wanted) <= MAX_NAME and wanted not in taken:
        return wanted
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{wanted[: MAX_NAME - 9]}_{digest}"


def _validator(schema: Mapping[str, Any]) -> Any:
    """The compiled validator of ``schema`` (its ``$schema`` dialect, else 2020-12); None when it is no schema."""
    jsonschema: Any = importlib.import_module("jsonschema")  # the mcp package's own dependency; untyped

    try:
        cls: Any = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
        return cls(schema)
    except (jsonschema.SchemaError, TypeError, ValueError):
        return None

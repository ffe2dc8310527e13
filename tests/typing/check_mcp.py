"""Type-checked, never run: MCP toolsets go in ``helpers=`` beside tools, and keep the agent's types.

Every line ending in ``# type: ignore[...]`` must stay an error for mypy (``warn_unused_ignores``),
every ``# pyright: ignore[...]`` one for basedpyright (``reportUnnecessaryTypeIgnoreComment``).
"""

from dataclasses import dataclass
from typing import assert_type

from anthropic.types import ToolParam
from pydantic import BaseModel

from typedagent import AgentDefinition, OutputTool, RunContext, define_agent, tool
from typedagent.mcp import MCPToolset


class Triage(BaseModel):
    severity: int


@dataclass
class Db:
    user: str


@tool
def search_kb(query: str) -> list[str]:
    """Search."""
    return [query]


@tool
def whoami(ctx: RunContext[Db]) -> str:
    """The user."""
    return ctx.deps.user


files = MCPToolset.stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "/srv"], env={"A": "1"}, prefix="fs")
remote = MCPToolset.http("https://mcp.example.com/mcp", headers={"Authorization": "Bearer x"}, allow=["search"])
assert_type(files, MCPToolset)
assert_type(files.name, str | None)

assert_type(
    define_agent(name="a", model="m", output=OutputTool(Triage), helpers=[search_kb, files, remote]),
    AgentDefinition[Triage, None],
)
with_deps = define_agent(name="a", model="m", output=OutputTool(Triage), helpers=[whoami, files], deps_type=Db)
assert_type(with_deps, AgentDefinition[Triage, Db])


async def connected() -> None:
    async with with_deps.connected() as tools:
        assert_type(tools, list[ToolParam])


MCPToolset.stdio("x", requires_approval=["delete"], timeout_s=5, connect_timeout_s=10)
MCPToolset.http("https://h/mcp", headers={"X-Count": 1})  # type: ignore[dict-item]  # pyright: ignore[reportArgumentType]
MCPToolset.stdio("x", timeout_s="5")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
MCPToolset.stdio("x", requires_approval=3)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
MCPToolset("x")  # type: ignore[arg-type, call-arg]  # pyright: ignore[reportCallIssue]
define_agent(name="a", model="m", output=OutputTool(Triage), helpers=files)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]

"""Type-checked, never run: ``@tool`` keeps the function's signature and types the run context.

Every line ending in ``# type: ignore[...]`` must stay an error for mypy (``warn_unused_ignores``),
every ``# pyright: ignore[...]`` one for basedpyright (``reportUnnecessaryTypeIgnoreComment``).
"""

from dataclasses import dataclass
from typing import Any, assert_type

from pydantic import BaseModel

from typedagent import AgentDefinition, OutputTool, RunContext, Tool, define_agent, tool


class Triage(BaseModel):
    severity: int
    summary: str


@dataclass
class Db:
    user: str


@dataclass
class AdminDb(Db):
    admin: bool


@dataclass
class Cache:
    size: int


@tool
def add(a: int, b: int = 1) -> int:
    """Add two numbers."""
    return a + b


@tool
async def search_kb(query: str, limit: int = 3) -> list[str]:
    """Search the knowledge base; returns article ids."""
    return [query] * limit


@tool(name="lookup_user", sequential=True, timeout_s=5)
def lookup(ctx: RunContext[Db], user_id: int) -> str:
    """Look a user up."""
    assert_type(ctx.deps, Db)
    return f"{ctx.deps.user}#{user_id}"


@tool
async def lookup_async(ctx: RunContext[Db], user_id: int) -> str:
    """Look a user up, asynchronously."""
    assert_type(ctx.deps, Db)
    return ctx.deps.user


@tool
def whoami(ctx: RunContext[object]) -> str:
    """Works with any deps."""
    return repr(ctx.deps)


@tool
def cache_size(ctx: RunContext[Cache]) -> int:
    """Needs a Cache."""
    return ctx.deps.size


def _summarise(text: str) -> str:
    return text[:100]


summarise = tool(_summarise, name="summarise", description="Shorten a text.")


# The decorated object is still callable exactly like the function.

assert_type(add(1, 2), int)
assert_type(add(1), int)
assert_type(summarise("a long text"), str)

add("1", 2)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
add()  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
summarise(text=3)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
total: str = add(1, 2)  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]


async def call_async_tool() -> None:
    assert_type(await search_kb("vpn"), list[str])
    assert_type(await search_kb("vpn", limit=5), list[str])
    await search_kb("vpn", limt=5)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]


async def call_with_context(ctx: RunContext[Db], admin_ctx: RunContext[AdminDb], cache_ctx: RunContext[Cache]) -> None:
    assert_type(lookup(ctx, 7), str)
    assert_type(lookup(admin_ctx, user_id=7), str)
    assert_type(await lookup_async(ctx, 7), str)
    assert_type(whoami(cache_ctx), str)
    lookup(cache_ctx, 7)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    lookup(ctx, "7")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


# The deps type is part of the tool's type: a context-free tool (or one taking RunContext[object]) fits
# every agent, a RunContext[Db] tool fits agents whose deps are a Db.


def wants_db_tool(helper: Tool[Db, ..., Any]) -> None:
    del helper


wants_db_tool(lookup)
wants_db_tool(lookup_async)
wants_db_tool(add)
wants_db_tool(search_kb)
wants_db_tool(whoami)
wants_db_tool(cache_size)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]

assert_type(
    define_agent(
        name="support",
        model="claude-sonnet-4-5",
        output=OutputTool(Triage),
        helpers=[add, search_kb, summarise, whoami],
    ),
    AgentDefinition[Triage, None],
)
assert_type(
    define_agent(
        name="support",
        model="claude-sonnet-4-5",
        output=OutputTool(Triage),
        helpers=[add, search_kb, lookup, lookup_async, whoami],
        deps_type=Db,
    ),
    AgentDefinition[Triage, Db],
)
assert_type(
    define_agent(
        name="support",
        model="claude-sonnet-4-5",
        output=OutputTool(Triage),
        helpers=[lookup, whoami],
        deps_type=AdminDb,
    ),
    AgentDefinition[Triage, AdminDb],
)

define_agent(name="s", model="m", output=OutputTool(Triage), helpers=[lookup])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]
define_agent(name="s", model="m", output=OutputTool(Triage), helpers=[lookup], deps_type=Cache)  # type: ignore[misc]  # pyright: ignore[reportCallIssue, reportArgumentType]
define_agent(name="s", model="m", output=OutputTool(Triage), helpers=[lookup, cache_size], deps_type=Db)  # type: ignore[list-item]  # pyright: ignore[reportCallIssue, reportArgumentType]
define_agent(name="s", model="m", output=OutputTool(Triage), helpers=[_summarise])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]


# @tool on a method: read from an instance, the tool is bound like the method (self is gone).


class Library:
    def __init__(self, books: dict[str, str]) -> None:
        self.books = books

    @tool
    def author(self, title: str) -> str:
        """Find a book's author."""
        return self.books.get(title, "unknown")


library = Library({"Dune": "Frank Herbert"})
assert_type(library.author("Dune"), str)
assert_type(library.author(title="Dune"), str)
assert_type(Library.author(library, "Dune"), str)
library.author(3)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
library.author(library, "Dune")  # type: ignore[arg-type, call-arg]  # pyright: ignore[reportCallIssue]
assert_type(
    define_agent(name="s", model="m", output=OutputTool(Triage), helpers=[library.author]),
    AgentDefinition[Triage, None],
)

"""Helper tools (SPEC §3, §5): the @tool forms, run context, result rendering and per-tool timeouts."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import sqlite3
from typing import Any

import pytest
from pydantic import BaseModel
from support import GOOD, results_of, run, triage_agent

from typedagent import AgentDefinitionError, HelperTool, RunContext, Tool, execute_agent, tool
from typedagent.testing import ScriptedClient, output_call, tool_call


class Db:
    """A stand-in dependency."""

    def __init__(self) -> None:
        self.rows = {"42": "Ada"}


@tool
async def customer(ctx: RunContext[Db], customer_id: str) -> str:
    """Find a customer by id."""
    return ctx.deps.rows.get(customer_id, "unknown")


@tool(name="kb", description="Search the knowledge base.")
def search(query: str) -> list[str]:
    """Ignored docstring."""
    return [query]


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Article(BaseModel):
    id: str
    title: str


def test_tool_forms_and_callable() -> None:
    """@tool, @tool(...) and tool(fn) all make Tools that still call the function unchanged."""
    assert isinstance(customer, Tool)
    assert customer.name == "customer"
    assert customer.description == "Find a customer by id."
    assert customer.takes_ctx
    assert customer.input_schema["properties"] == {"customer_id": {"type": "string"}}
    assert search.name == "kb"
    assert search.description == "Search the knowledge base."
    assert search("vpn") == ["vpn"]
    plain = tool(lambda a, b=2: a + b, name="add")
    assert plain(1) == 3
    assert plain.__name__ == "<lambda>"
    assert repr(search).startswith("Tool(name='kb', fn=")


def test_tool_docstring_args_describe_parameters() -> None:
    """The Args: section of a Google docstring describes each parameter; the summary is the description."""

    @tool
    def find(query: str, limit: int = 5) -> list[str]:
        """Find things.

        Longer explanation.

        Args:
            query: What to look for,
                over two lines.
            limit (int): How many.

        Returns:
            Matches.
        """
        return []

    assert find.description == "Find things.\n\nLonger explanation."
    props = find.input_schema["properties"]
    assert props["query"]["description"] == "What to look for, over two lines."
    assert props["limit"]["description"] == "How many."
    assert find.to_param()["description"] == "Find things.\n\nLonger explanation."


async def test_tool_receives_run_context_with_deps() -> None:
    """A tool's RunContext carries the deps, agent name, attempt and iteration."""
    seen: list[tuple[str, int, int]] = []

    @tool
    def where(ctx: RunContext[Db]) -> str:
        """Where am I."""
        seen.append((ctx.agent_name, ctx.attempt, ctx.iteration))
        return "here"

    agent = triage_agent(helpers=[customer, where], deps_type=Db)
    client = ScriptedClient([tool_call("customer", {"customer_id": "42"}), tool_call("where"), output_call(GOOD)])
    result = await execute_agent(agent, "x", client=client, deps=Db())
    assert result.ok
    assert results_of(result.metadata.messages[2]) == [("toolu_01_001", "Ada", False)]
    assert seen == [("triage", 1, 2)]


async def test_tool_results_rendered_as_json() -> None:
    """Models, dataclasses, dicts, lists and other values become JSON text; strings stay as they are."""

    @tool
    def model() -> Article:
        """Model."""
        return Article(id="a1", title="VPN")

    @tool
    def point() -> Point:
        """Dataclass."""
        return Point(x=1, y=2)

    @tool
    def mixed() -> dict[str, Any]:
        """Mixed."""
        return {"when": datetime.date(2026, 1, 2), "n": None, "odd": {1, 2} and "set"}

    @tool
    def number() -> int:
        """Number."""
        return 7

    @tool
    def opaque() -> object:
        """Not JSON-able."""
        return Db()

    client = ScriptedClient(
        [
            tool_call("model"),
            tool_call("point"),
            tool_call("mixed"),
            tool_call("number"),
            tool_call("opaque"),
            output_call(GOOD),
        ]
    )
    result = await run(triage_agent(helpers=[model, point, mixed, number, opaque]), client)
    contents = [results_of(result.metadata.messages[i])[0][1] for i in (2, 4, 6, 8, 10)]
    assert contents[:4] == [
        '{"id":"a1","title":"VPN"}',
        '{"x":1,"y":2}',
        '{"when":"2026-01-02","n":null,"odd":"set"}',
        "7",
    ]
    assert contents[4].startswith('"<test_tools.Db object at')


async def test_tool_timeout_becomes_error_result() -> None:
    """A tool that exceeds its timeout_s is answered with an error and the run goes on."""

    @tool(timeout_s=0.05)
    async def hang() -> str:
        """Hangs."""
        await asyncio.sleep(3600)
        return "never"

    client = ScriptedClient([tool_call("hang"), output_call(GOOD)])
    result = await run(triage_agent(helpers=[hang]), client)
    assert result.ok
    assert results_of(result.metadata.messages[2]) == [
        ("toolu_01_001", "Error: tool 'hang' did not finish within 0.05 s and was abandoned.", True)
    ]


async def test_tool_async_raw_handler_and_timeout() -> None:
    """A raw HelperTool may be async and may carry its own timeout."""

    async def handler(data: dict[str, Any]) -> str:
        await asyncio.sleep(0)
        return f"got {data}"

    raw = HelperTool(
        definition={"name": "raw", "input_schema": {"type": "object"}}, handler=handler, timeout_s=1, sequential=True
    )
    result = await run(triage_agent(helpers=[raw]), ScriptedClient([tool_call("raw", {"a": 1}), output_call(GOOD)]))
    assert results_of(result.metadata.messages[2]) == [("toolu_01_001", "got {'a': 1}", False)]
    assert raw.name == "raw"


async def test_tool_exception_without_message_names_its_type() -> None:
    """A handler exception with an empty message is reported by its class name."""

    @tool
    def empty() -> str:
        """Raises with no message."""
        raise LookupError

    result = await run(triage_agent(helpers=[empty]), ScriptedClient([tool_call("empty"), output_call(GOOD)]))
    assert results_of(result.metadata.messages[2]) == [("toolu_01_001", "Error: LookupError", True)]


async def test_tool_sync_function_returning_awaitable() -> None:
    """A sync callable that returns an awaitable has it awaited (e.g. functools.partial of a coroutine)."""
    import functools

    async def greet(name: str) -> str:
        return f"hi {name}"

    raw = HelperTool(
        definition={"name": "greet", "input_schema": {"type": "object"}},
        handler=lambda data: functools.partial(greet, data["name"])(),
    )
    result = await run(
        triage_agent(helpers=[raw]), ScriptedClient([tool_call("greet", {"name": "Bo"}), output_call(GOOD)])
    )
    assert results_of(result.metadata.messages[2]) == [("toolu_01_001", "hi Bo", False)]


async def test_tools_async_handler_returning_a_coroutine_is_awaited() -> None:
    """An async handler that returns a coroutine has it awaited: the model gets its value, no warning is left."""

    async def inner() -> str:
        return "inner value"

    async def handler(tool_input: dict[str, Any]) -> Any:
        return inner()

    helper = HelperTool(definition={"name": "wrapped", "input_schema": {"type": "object"}}, handler=handler)
    client = ScriptedClient([tool_call("wrapped"), output_call(GOOD)])
    result = await run(triage_agent(helpers=[helper]), client)
    assert result.ok
    assert results_of(result.metadata.messages[2]) == [("toolu_01_001", "inner value", False)]


class Library:
    """A class whose methods are tools."""

    def __init__(self, books: dict[str, str]) -> None:
        self.books = books

    @tool
    def author(self, title: str) -> str:
        """Find a book's author.

        Args:
            title: The book's title.
        """
        return self.books.get(title, "unknown")

    @tool(name="shelf_size")
    async def size(self, ctx: RunContext[None]) -> int:
        """How many books the library has."""
        return len(self.books) + ctx.attempt


async def test_tool_method_binds_to_its_instance() -> None:
    """@tool on a method: used from an instance, the tool is bound, ``self`` is not in its schema, and it runs."""
    library = Library({"Dune": "Frank Herbert"})
    assert library.author.to_param() == {
        "name": "author",
        "description": "Find a book's author.",
        "input_schema": {
            "properties": {"title": {"description": "The book's title.", "type": "string"}},
            "required": ["title"],
            "type": "object",
        },
    }
    assert library.size.to_param()["input_schema"] == {"properties": {}, "type": "object"}
    assert library.author("Dune") == "Frank Herbert"
    assert Library.author(library, "Dune") == "Frank Herbert"  # through the class, like a plain method
    client = ScriptedClient([tool_call("author", {"title": "Dune"}), tool_call("shelf_size"), output_call(GOOD)])
    result = await run(triage_agent(helpers=[library.author, library.size]), client)
    assert result.ok
    assert results_of(result.metadata.messages[2]) == [("toolu_01_001", "Frank Herbert", False)]
    assert results_of(result.metadata.messages[4]) == [("toolu_02_002", "2", False)]


def test_tool_method_from_the_class_is_rejected() -> None:
    """Passing the method through the class (no instance to bind) is a definition error saying what to pass."""
    with pytest.raises(
        AgentDefinitionError, match=r"method of Library: pass it from an instance, helpers=\[obj\.author\]"
    ):
        triage_agent(helpers=[Library.author])


def test_tool_stored_on_a_class_is_not_bound() -> None:
    """A module-level tool stored as a class attribute stays itself when read from an instance."""

    class Holder:
        kb = search

    assert Holder().kb is search


def test_tool_unsupported_parameter_type_points_to_deps() -> None:
    """A parameter type the model cannot send (a connection) points to RunContext deps, not pydantic's config."""

    def query(conn: sqlite3.Connection, sql: str) -> str:
        return sql

    with pytest.raises(AgentDefinitionError) as caught:
        tool(query)
    message = str(caught.value)
    assert "parameter 'conn'" in message
    assert "RunContext" in message
    assert "deps" in message
    assert "arbitrary_types_allowed" not in message


async def test_tool_parameters_named_like_model_attributes() -> None:
    """Parameters named ``json``, ``schema`` or ``model_dump`` work, with no pydantic warning (warnings fail here)."""

    @tool
    def convert(json: str, schema: str = "v1", model_dump: int = 0) -> str:
        """Convert a document."""
        return f"{json}|{schema}|{model_dump}"

    assert convert.input_schema == {
        "properties": {
            "json": {"type": "string"},
            "schema": {"default": "v1", "type": "string"},
            "model_dump": {"default": 0, "type": "integer"},
        },
        "required": ["json"],
        "type": "object",
    }
    client = ScriptedClient(
        [
            tool_call("convert", {"json": "{}", "model_dump": 2}),
            tool_call("convert", {"schema": "v2"}),
            output_call(GOOD),
        ]
    )
    result = await run(triage_agent(helpers=[convert]), client)
    assert results_of(result.metadata.messages[2]) == [("toolu_01_001", "{}|v1|2", False)]
    [(_, content, is_error)] = results_of(result.metadata.messages[4])
    assert is_error
    assert "- json: Field required" in content

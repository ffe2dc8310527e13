"""Type-checked, never run: any output type flows to the result; repairing validators, overrides, limits, testing.

Every line ending in ``# type: ignore[...]`` must stay an error for mypy (``warn_unused_ignores``),
every ``# pyright: ignore[...]`` one for basedpyright (``reportUnnecessaryTypeIgnoreComment``).
"""

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Annotated, Any, Literal, assert_type

from hypothesis.strategies import SearchStrategy
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from typedagent import (
    AgentDefinition,
    AgentError,
    AgentErrorCode,
    AttemptRecord,
    CostLimitContext,
    ExecuteResult,
    ExecutionLimits,
    ExecutionMetadata,
    ModelPrice,
    OutputRejected,
    OutputTool,
    RequestLimitContext,
    RunContext,
    ToolCallLimitContext,
    ValidationConfig,
    define_agent,
    execute_agent,
    execute_agent_sync,
    price_for,
    register_price,
)
from typedagent.testing import SchemaClient, ScriptedClient, outputs, use_client


class Item(BaseModel):
    name: str
    qty: int


class Node(BaseModel):
    label: str
    children: list["Node"] = []


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"


class Dog(BaseModel):
    kind: Literal["dog"] = "dog"


class Color(Enum):
    RED = "red"


@dataclass
class Point:
    x: int


class Movie(TypedDict):
    title: str


@dataclass
class Db:
    user: str


# Any output type: OutputTool(schema) takes the type itself and carries it exactly.

assert_type(OutputTool(list[Item]), OutputTool[list[Item]])
assert_type(OutputTool(int), OutputTool[int])
assert_type(OutputTool(str), OutputTool[str])
assert_type(OutputTool(bool), OutputTool[bool])
assert_type(OutputTool(float), OutputTool[float])
assert_type(OutputTool(Literal["low", "high"]), OutputTool[Literal["low", "high"]])
assert_type(OutputTool(Color), OutputTool[Color])
assert_type(OutputTool(Point), OutputTool[Point])
assert_type(OutputTool(Movie), OutputTool[Movie])
assert_type(OutputTool(Node), OutputTool[Node])
assert_type(OutputTool(Annotated[Cat | Dog, Field(discriminator="kind")]), OutputTool[Cat | Dog])
assert_type(OutputTool(Item | None), OutputTool[Item | None])
assert_type(OutputTool(dict[str, int]), OutputTool[dict[str, int]])

items = define_agent(name="items", model="claude-sonnet-4-6", output=OutputTool(list[Item]))
assert_type(items, AgentDefinition[list[Item], None])
pets = define_agent(
    name="pets", model="claude-sonnet-4-6", output=OutputTool(Annotated[Cat | Dog, Field(discriminator="kind")])
)
assert_type(pets, AgentDefinition[Cat | Dog, None])
level = define_agent(name="level", model="claude-sonnet-4-6", output=OutputTool(Literal["low", "high"]))
assert_type(level, AgentDefinition[Literal["low", "high"], None])
movies = define_agent(name="movies", model="claude-sonnet-4-6", output=OutputTool(Movie), deps_type=Db)
assert_type(movies, AgentDefinition[Movie, Db])

assert_type(items.output.parse({"value": []}), list[Item])
assert_type(items.output.to_input([]), dict[str, Any])

OutputTool(Item(name="bolt", qty=1))  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
OutputTool(list[Item], reflection_handler=lambda item: item.name)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]


async def run_any_type(client: ScriptedClient) -> None:
    assert_type(await execute_agent(items, "go", client=client), ExecuteResult[list[Item]])
    assert_type((await execute_agent(pets, "go", client=client)).unwrap(), Cat | Dog)
    assert_type((await execute_agent(level, "go")).unwrap(), Literal["low", "high"])
    assert_type(execute_agent_sync(movies, "go", deps=Db("ada")).unwrap(), Movie)


def count(listing: list[Item]) -> str:
    return f"{len(listing)} items"


assert_type(OutputTool(list[Item], reflection_handler=count), OutputTool[list[Item]])
assert_type(OutputTool(list[Item], reflection_handler=lambda listing: str(len(listing))), OutputTool[list[Item]])


# Validators may repair: return a value of the output type (or None to keep it), sync or async, with ctx.


def normalise(item: Item) -> Item:
    return item.model_copy(update={"name": item.name.strip()})


async def maybe_fix(item: Item) -> Item | None:
    return None if item.qty > 0 else item.model_copy(update={"qty": 1})


def fix_for_user(item: Item, ctx: RunContext[Db]) -> Item:
    return item.model_copy(update={"name": f"{ctx.deps.user}: {item.name}"})


def rejects(item: Item) -> None:
    if not item.name:
        raise OutputRejected("name the item")


def dedupe(listing: list[Item]) -> list[Item]:
    return list({item.name: item for item in listing}.values())


def wrong_type(item: Item) -> str:
    return item.name


def wrong_list(listing: list[Item]) -> list[str]:
    return [item.name for item in listing]


assert_type(
    define_agent(name="i", model="m", output=OutputTool(Item), validators=[normalise, maybe_fix, rejects]),
    AgentDefinition[Item, None],
)
assert_type(
    define_agent(name="i", model="m", output=OutputTool(Item), validators=[normalise, fix_for_user], deps_type=Db),
    AgentDefinition[Item, Db],
)
assert_type(
    define_agent(name="i", model="m", output=OutputTool(list[Item]), validators=[dedupe]),
    AgentDefinition[list[Item], None],
)
define_agent(name="i", model="m", output=OutputTool(Item), validators=[wrong_type])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]
define_agent(name="i", model="m", output=OutputTool(list[Item]), validators=[wrong_list])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]
define_agent(name="i", model="m", output=OutputTool(list[Item]), validators=[normalise])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]


# with_options keeps the agent's exact type; its options are checked like define_agent's.

assert_type(items.with_options(model="claude-haiku-4-5", max_tokens=1024), AgentDefinition[list[Item], None])
assert_type(movies.with_options(instructions=lambda ctx: f"For {ctx.deps.user}."), AgentDefinition[Movie, Db])
assert_type(
    items.with_options(validation=ValidationConfig(max_attempts=1, force_output_on_last_iteration=True)),
    AgentDefinition[list[Item], None],
)
items.with_options(max_tokens="1024")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
items.with_options(tools=[])  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
movies.with_options(instructions=lambda ctx: ctx.deps.usr)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]


# Limits, cost, the forced-output record and the new error contexts.

limits = ExecutionLimits(max_requests=10, max_tool_calls=20, max_cost_usd=0.5, max_total_tokens=50_000)
ExecutionLimits(max_cost_usd="0.5")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
ValidationConfig(force_output_on_last_iteration=1.5)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


def accounting(metadata: ExecutionMetadata, record: AttemptRecord, error: AgentError) -> None:
    assert_type(metadata.cost_usd, float | None)
    assert_type(metadata.tool_calls, int)
    assert_type(record.output_forced, bool)
    assert_type(error.context_for(AgentErrorCode.REQUEST_LIMIT_EXCEEDED), RequestLimitContext | None)
    assert_type(error.context_for(AgentErrorCode.TOOL_CALL_LIMIT_EXCEEDED), ToolCallLimitContext | None)
    assert_type(error.context_for(AgentErrorCode.COST_LIMIT_EXCEEDED), CostLimitContext | None)


register_price("my-proxy-model", ModelPrice(input=3, output=15, cache_write=3.75, cache_read=0.3))
assert_type(price_for("claude-sonnet-4-6"), ModelPrice | None)
register_price("my-proxy-model", {"input": 3})  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


# Testing: SchemaClient is a client, use_client hands back the client it was given, outputs() is typed.

with use_client(SchemaClient(seed=1)) as model:
    assert_type(model, SchemaClient)
assert_type(outputs(items), SearchStrategy[list[Item]])
assert_type(outputs(pets), SearchStrategy[Cat | Dog])
assert_type(outputs(OutputTool(Color)), SearchStrategy[Color])
use_client("client")  # type: ignore[type-var]  # pyright: ignore[reportArgumentType]


def property_test(check: Callable[[Item], Item | None]) -> None:
    define_agent(name="i", model="m", output=OutputTool(Item), validators=[check])


# Output modes: the mode is one of three literals and changes nothing about the output's type.

native = define_agent(name="native", model="claude-sonnet-4-6", output=OutputTool(list[Item], mode="native"))
assert_type(native, AgentDefinition[list[Item], None])
assert_type(OutputTool(Item, mode="prompted", reflection_handler=lambda item: item.name), OutputTool[Item])
assert_type(native.output.mode, Literal["tool", "native", "prompted"])
OutputTool(Item, mode="json")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]

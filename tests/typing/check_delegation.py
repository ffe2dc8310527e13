"""Type-checked, never run: agents as tools (``as_tool``) and history processors follow the deps types.

Every line ending in ``# type: ignore[...]`` must stay an error for mypy (``warn_unused_ignores``),
every ``# pyright: ignore[...]`` one for basedpyright (``reportUnnecessaryTypeIgnoreComment``).
"""

from dataclasses import dataclass

from anthropic.types import MessageParam
from pydantic import BaseModel

from typedagent import OutputTool, RunContext, define_agent
from typedagent.history import drop_thinking_before, keep_last_turns, summarize_older


class Facts(BaseModel):
    facts: list[str]


class Query(BaseModel):
    topic: str


@dataclass
class Shop:
    name: str


@dataclass
class Catalogue:
    items: list[str]


plain = define_agent(name="plain", model="claude-sonnet-4-6", output=OutputTool(Facts))
listing = define_agent(name="listing", model="claude-sonnet-4-6", output=OutputTool(Facts), deps_type=Catalogue)


def catalogue_of(shop: Shop) -> Catalogue:
    return Catalogue(items=[shop.name])


# An agent without deps is a helper of any agent; one with deps, of an agent with the same deps or through deps=.
define_agent(name="a", model="m", output=OutputTool(Facts), helpers=[plain.as_tool()])
define_agent(name="b", model="m", output=OutputTool(Facts), helpers=[plain.as_tool()], deps_type=Shop)
define_agent(name="c", model="m", output=OutputTool(Facts), helpers=[listing.as_tool()], deps_type=Catalogue)
define_agent(
    name="d", model="m", output=OutputTool(Facts), helpers=[listing.as_tool(deps=catalogue_of)], deps_type=Shop
)
define_agent(
    name="e",
    model="m",
    output=OutputTool(Facts),
    helpers=[listing.as_tool(input_type=Query, prompt=lambda query: query.topic, deps=catalogue_of)],
    deps_type=Shop,
)


def shop_name(shop: Shop) -> str:
    return shop.name


# The deps function must return the sub-agent's deps; the prompt function takes the input type.
listing.as_tool(deps=shop_name)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType,reportCallIssue]
listing.as_tool(input_type=Query, prompt=lambda query: query.missing)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue,reportUnknownLambdaType,reportUnknownMemberType]
plain.as_tool(input_type=dict)  # type: ignore[type-var]  # pyright: ignore[reportArgumentType,reportCallIssue]


def trim(messages: list[MessageParam]) -> list[MessageParam]:
    return messages[-5:]


async def with_shop(ctx: RunContext[Shop], messages: list[MessageParam]) -> list[MessageParam]:
    return messages if ctx.deps.name else messages[-1:]


summariser = define_agent(name="summariser", model="claude-haiku-4-5", output=OutputTool(Facts))

define_agent(
    name="f",
    model="m",
    output=OutputTool(Facts),
    history_processors=[trim, keep_last_turns(3), drop_thinking_before(1), summarize_older(summariser, keep_last=2)],
)
define_agent(name="g", model="m", output=OutputTool(Facts), deps_type=Shop, history_processors=[trim, with_shop])
define_agent(name="h", model="m", output=OutputTool(Facts), history_processors=[with_shop])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]

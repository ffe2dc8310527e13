"""Type-checked, never run: what ``define_agent`` infers, and the configurations it must reject.

Every line ending in ``# type: ignore[...]`` must stay an error for mypy (``warn_unused_ignores``),
every ``# pyright: ignore[...]`` one for basedpyright (``reportUnnecessaryTypeIgnoreComment``).
"""

from dataclasses import dataclass
from typing import Any, assert_type

from anthropic.types import ToolParam, WebSearchTool20250305Param
from pydantic import BaseModel
from typing_extensions import TypeForm

from typedagent import (
    AgentDefinition,
    HelperTool,
    ModelSettings,
    OutputRejected,
    OutputTool,
    RunContext,
    ValidationConfig,
    define_agent,
    tool,
)
from typedagent.server_tools import tool_search, web_search


class Triage(BaseModel):
    severity: int
    summary: str


class Invoice(BaseModel):
    total: float


@dataclass
class Db:
    user: str


@dataclass
class Cache:
    size: int


# The output type flows from OutputTool(Model); the deps type from deps_type, defaulting to None.

agent = define_agent(name="triage", model="claude-sonnet-4-5", output=OutputTool(Triage))
assert_type(agent, AgentDefinition[Triage, None])
assert_type(agent.output, OutputTool[Triage])
assert_type(agent.output.schema, TypeForm[Triage])

db_agent = define_agent(name="triage", model="claude-sonnet-4-5", output=OutputTool(Triage), deps_type=Db)
assert_type(db_agent, AgentDefinition[Triage, Db])

define_agent(name="triage", model="claude-sonnet-4-5", output=Triage)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
OutputTool(Triage(severity=1, summary="an instance, not a type"))  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


# Reflection handlers take the output type and return text, sync or async.


def preview(triage: Triage) -> str:
    return f"severity {triage.severity}: {triage.summary}"


async def preview_async(triage: Triage) -> str:
    return triage.summary


def preview_any(model: BaseModel) -> str:
    return model.model_dump_json()


def preview_invoice(invoice: Invoice) -> str:
    return str(invoice.total)


def preview_number(triage: Triage) -> int:
    return triage.severity


assert_type(OutputTool(Triage, reflection_handler=preview), OutputTool[Triage])
assert_type(OutputTool(Triage, reflection_handler=preview_async), OutputTool[Triage])
assert_type(OutputTool(Triage, reflection_handler=preview_any), OutputTool[Triage])
assert_type(OutputTool(Triage, reflection_handler=lambda triage: triage.summary), OutputTool[Triage])

OutputTool(Triage, reflection_handler=preview_invoice)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
OutputTool(Triage, reflection_handler=preview_number)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
OutputTool(Triage, reflection_handler=lambda triage: triage.severity)  # type: ignore[arg-type, return-value]  # pyright: ignore[reportArgumentType]
OutputTool(Triage, reflection_handler=lambda triage: triage.sumary)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]


# Validators take the output (and optionally the run context), sync or async, and return None.


def cites_something(triage: Triage) -> None:
    if not triage.summary:
        raise OutputRejected("write a summary")


async def cites_something_async(triage: Triage) -> None:
    if triage.severity > 5:
        raise OutputRejected("severity is 1-5")


def known_user(triage: Triage, ctx: RunContext[Db]) -> None:
    assert_type(ctx.deps, Db)
    if ctx.deps.user not in triage.summary:
        raise OutputRejected("name the user")


async def known_user_async(triage: Triage, ctx: RunContext[Db]) -> None:
    assert_type(ctx.deps, Db)


def any_model(model: BaseModel) -> None:
    if not model.model_fields_set:
        raise OutputRejected("fill in the fields")


def checks_invoice(invoice: Invoice) -> None:
    if invoice.total < 0:
        raise OutputRejected("negative total")


def returns_verdict(triage: Triage) -> bool:
    return bool(triage.summary)


def known_size(triage: Triage, ctx: RunContext[Cache]) -> None:
    del triage, ctx


assert_type(
    define_agent(
        name="triage",
        model="claude-sonnet-4-5",
        output=OutputTool(Triage),
        validators=[cites_something, cites_something_async, any_model],
    ),
    AgentDefinition[Triage, None],
)
assert_type(
    define_agent(
        name="triage",
        model="claude-sonnet-4-5",
        output=OutputTool(Triage),
        validators=[cites_something, cites_something_async, known_user, known_user_async, any_model],
        deps_type=Db,
    ),
    AgentDefinition[Triage, Db],
)

define_agent(name="t", model="m", output=OutputTool(Triage), validators=[checks_invoice])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]
define_agent(name="t", model="m", output=OutputTool(Triage), validators=[returns_verdict])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]
define_agent(name="t", model="m", output=OutputTool(Triage), validators=[known_user])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]
define_agent(name="t", model="m", output=OutputTool(Triage), validators=[known_size], deps_type=Db)  # type: ignore[list-item]  # pyright: ignore[reportCallIssue, reportArgumentType]

# A lambda validator's parameters are inferred by pyright only; mypy leaves them Any (documented gap).
define_agent(name="t", model="m", output=OutputTool(Triage), validators=[lambda triage: print(triage.sumary)])  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]


# Dynamic instructions take the run context and return the system prompt.


def instructions_for(ctx: RunContext[Db]) -> str:
    assert_type(ctx.deps, Db)
    return f"You triage tickets for {ctx.deps.user}."


assert_type(
    define_agent(
        name="triage",
        model="claude-sonnet-4-5",
        output=OutputTool(Triage),
        instructions=instructions_for,
        deps_type=Db,
    ),
    AgentDefinition[Triage, Db],
)
assert_type(
    define_agent(
        name="triage",
        model="claude-sonnet-4-5",
        output=OutputTool(Triage),
        instructions=lambda ctx: f"You triage tickets for {ctx.deps.user}.",
        deps_type=Db,
    ),
    AgentDefinition[Triage, Db],
)

define_agent(name="t", model="m", output=OutputTool(Triage), instructions=lambda ctx: ctx.deps.usr, deps_type=Db)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]
define_agent(name="t", model="m", output=OutputTool(Triage), instructions=lambda ctx: ctx.deps.user)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]
define_agent(name="t", model="m", output=OutputTool(Triage), instructions=instructions_for)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


# Raw helpers: an Anthropic tool definition and a handler taking the model's input dict, sync or async.


def search(tool_input: dict[str, Any]) -> str:
    return str(tool_input["query"])


async def search_async(tool_input: dict[str, Any]) -> list[str]:
    return [str(tool_input["query"])]


def search_text(query: str) -> str:
    return query


SCHEMA: dict[str, object] = {"type": "object", "properties": {"query": {"type": "string"}}}
definition: ToolParam = {"name": "search", "description": "Search the knowledge base.", "input_schema": SCHEMA}
raw = HelperTool(definition=definition, handler=search)
raw_async = HelperTool(
    definition={"name": "search", "description": "Search the knowledge base.", "input_schema": SCHEMA},
    handler=search_async,
)
untyped_definition = {"name": "search", "input_schema": SCHEMA}

assert_type(
    define_agent(name="triage", model="claude-sonnet-4-5", output=OutputTool(Triage), helpers=[raw, raw_async]),
    AgentDefinition[Triage, None],
)
assert_type(
    define_agent(name="triage", model="claude-sonnet-4-5", output=OutputTool(Triage), helpers=[raw], deps_type=Db),
    AgentDefinition[Triage, Db],
)

HelperTool(definition={"name": "search"}, handler=search)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
HelperTool(definition={"name": "search", "input_schema": SCHEMA, "descripton": "typo"}, handler=search)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
HelperTool(definition="search", handler=search)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
HelperTool(definition=untyped_definition, handler=search)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
HelperTool(definition=definition, handler=search_text)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


# Tools Anthropic defines are declared by type and name (the SDK's typed dicts), strict tools by a flag.
memory = HelperTool(definition={"type": "memory_20250818", "name": "memory"}, handler=search)
assert_type(HelperTool(definition=definition, handler=search, strict=True).strict, bool)
assert_type(tool(strict=True)(search_text).strict, bool)

# Server tools: the typed constructors, the SDK's typed dicts, or any dict with a type and a name.
sdk_search: WebSearchTool20250305Param = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}
assert_type(
    define_agent(
        name="researcher",
        model="claude-sonnet-4-5",
        output=OutputTool(Triage),
        server_tools=[web_search(max_uses=3, user_location={"type": "approximate", "city": "Paris"}), sdk_search],
    ),
    AgentDefinition[Triage, None],
)
define_agent(name="r", model="m", output=OutputTool(Triage), server_tools=[{"type": "x_20990101", "name": "x"}])
define_agent(name="r", model="m", output=OutputTool(Triage), server_tools=web_search())  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
web_search(max_uses="3")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
web_search(user_location={"city": "Paris"})  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
tool_search("fuzzy")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


# ValidationConfig: two positive ints, keyword-only.

assert_type(ValidationConfig(max_attempts=5, max_iterations_per_attempt=20), ValidationConfig)
assert_type(
    define_agent(
        name="triage", model="claude-sonnet-4-5", output=OutputTool(Triage), validation=ValidationConfig(max_attempts=1)
    ),
    AgentDefinition[Triage, None],
)

ValidationConfig(max_attempts="3")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
ValidationConfig(max_attempts=2.5)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
ValidationConfig(3)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
ValidationConfig(max_retries=3)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
define_agent(name="t", model="m", output=OutputTool(Triage), validation={"max_attempts": 3})  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
define_agent(name="t", model="m", output=OutputTool(Triage), validation=ValidationConfig)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]


# model_settings is a ModelSettings: a dict literal with the SDK's keys type-checks as it is; a misspelt key or a
# value of the wrong shape does not.

define_agent(
    name="settings",
    model="claude-sonnet-4-6",
    output=OutputTool(Triage),
    model_settings={"thinking": {"type": "enabled", "budget_tokens": 2048}, "stop_sequences": ["END"]},
)
settings: ModelSettings = {"metadata": {"user_id": "u-1"}, "extra_headers": {"x-trace": "1"}, "timeout": 30.0}
define_agent(name="settings", model="claude-sonnet-4-6", output=OutputTool(Triage), model_settings=settings)
agent.with_options(model_settings={"service_tier": "auto"})
define_agent(name="t", model="claude-sonnet-4-6", output=OutputTool(Triage), model_settings={"stop_sequence": []})  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
define_agent(name="typo", model="claude-sonnet-4-6", output=OutputTool(Triage), model_settings={"thinking": "on"})  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
agent.with_options(model_settings={"metdata": {"user_id": "u"}})  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]

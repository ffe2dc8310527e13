"""Type-checked, never run: ``execute_many`` yields ``ManyResult[Output]``; inputs must fit the agent's deps.

Every line ending in ``# type: ignore[...]`` must stay an error for mypy (``warn_unused_ignores``),
every ``# pyright: ignore[...]`` one for basedpyright (``reportUnnecessaryTypeIgnoreComment``).
"""

from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from dataclasses import dataclass
from typing import assert_type

from pydantic import BaseModel

from typedagent import (
    ExecuteResult,
    ManyResult,
    MessageBatches,
    OutputTool,
    RateLimits,
    RunInput,
    define_agent,
    execute_many,
    execute_many_sync,
)
from typedagent.testing import ScriptedClient


class Triage(BaseModel):
    severity: int
    summary: str


@dataclass
class Db:
    user: str


agent = define_agent(name="triage", model="claude-sonnet-4-5", output=OutputTool(Triage))
db_agent = define_agent(name="triage", model="claude-sonnet-4-5", output=OutputTool(Triage), deps_type=Db)


def prompts() -> Iterator[str]:
    yield "Ticket 1"


async def keyed() -> AsyncIterator[RunInput[Db]]:
    yield RunInput("Ticket 1", deps=Db("ada"), key="t1")


# Each result carries the agent's output type; prompts, keyed inputs and async sources all fit.


async def run_async(client: ScriptedClient) -> None:
    stream = execute_many(agent, ["Ticket 1", RunInput("Ticket 2", key="t2")], client=client)
    assert_type(stream, AsyncGenerator[ManyResult[Triage], None])
    async for item in stream:
        assert_type(item, ManyResult[Triage])
        assert_type(item.result, ExecuteResult[Triage])
        assert_type(item.key, str)
        assert_type(item.index, int)
        assert_type(item.result.unwrap(), Triage)
    async for item in execute_many(agent, prompts(), concurrency=8, rate_limits=RateLimits(max_wait_s=60)):
        assert_type(item, ManyResult[Triage])
    async for item in execute_many(db_agent, keyed(), journal="run.jsonl"):
        assert_type(item, ManyResult[Triage])
    async for item in execute_many(agent, prompts(), rate_limits=None):
        assert_type(item, ManyResult[Triage])

    execute_many(db_agent, ["Ticket 1"])  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
    execute_many(db_agent, [RunInput("Ticket 1", deps="ada")])  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
    execute_many(agent, [RunInput("Ticket 1", deps=Db("ada"))])  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
    execute_many(agent, [42])  # type: ignore[list-item]  # pyright: ignore[reportCallIssue, reportArgumentType]
    execute_many(agent, ["a"], concurrency="8")  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]


def run_sync() -> None:
    results = execute_many_sync(agent, ["Ticket 1"])
    assert_type(results, list[ManyResult[Triage]])
    assert_type(execute_many_sync(db_agent, [RunInput("t", deps=Db("ada"))]), list[ManyResult[Triage]])


# RunInput infers its deps type; without deps it is RunInput[None]; its fields are keyword-only after the prompt.


def inputs() -> None:
    assert_type(RunInput("Ticket"), RunInput[None])
    assert_type(RunInput("Ticket", deps=Db("ada")), RunInput[Db])
    assert_type(RunInput("Ticket", key="t1").key, str | None)
    RunInput("Ticket", None, "t1")  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]


def transports() -> None:
    # Model calls online (default) or in Message Batches, by name or with settings; nothing else.
    execute_many_sync(agent, ["a"], transport="message_batches")
    execute_many_sync(agent, ["a"], transport=MessageBatches(poll_s=30, max_submissions=2))
    execute_many(agent, ["a"], transport="online")
    execute_many_sync(agent, ["a"], transport="batch")  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]
    MessageBatches(30)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]

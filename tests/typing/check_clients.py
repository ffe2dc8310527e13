"""Type-checked, never run: what ``execute_agent(client=...)`` accepts as a client.

Every line ending in ``# type: ignore[...]`` must stay an error for mypy (``warn_unused_ignores``),
every ``# pyright: ignore[...]`` one for basedpyright (``reportUnnecessaryTypeIgnoreComment``).
"""

from collections.abc import Awaitable
from typing import Any

from anthropic import Anthropic, AsyncAnthropic
from anthropic.types import Message
from pydantic import BaseModel

from typedagent import MessagesClient, OutputTool, define_agent, execute_agent
from typedagent.testing import FunctionClient, RecordingClient, ReplayClient, ScriptedClient


class Out(BaseModel):
    n: int


agent = define_agent(name="clients", model="claude-sonnet-4-5", output=OutputTool(Out))


class AsyncWrapper:
    """``messages.create`` as an ``async def``."""

    def __init__(self, inner: MessagesClient) -> None:
        self.inner = inner
        self.messages = self

    async def create(self, **params: Any) -> Message:
        return await self.inner.messages.create(**params)


class ForwardingWrapper:
    """``messages.create`` as a plain function returning the inner call's awaitable."""

    def __init__(self, inner: MessagesClient) -> None:
        self.inner = inner
        self.messages = self

    def create(self, **params: Any) -> Awaitable[Message]:
        return self.inner.messages.create(**params)


class ReturnsAMessage:
    """A ``create`` that returns the message itself, not an awaitable: not a client."""

    def __init__(self) -> None:
        self.messages = self

    def create(self, **params: Any) -> Message:
        raise NotImplementedError


async def clients(scripted: ScriptedClient, replay: ReplayClient) -> None:
    for client in (
        AsyncAnthropic(),
        scripted,
        replay,
        FunctionClient(lambda request: "hi"),
        RecordingClient(scripted, "cassette.json"),
        AsyncWrapper(scripted),
        ForwardingWrapper(AsyncAnthropic()),
    ):
        await execute_agent(agent, "go", client=client)
    await execute_agent(agent, "go", client=ReturnsAMessage())  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
    await execute_agent(agent, "go", client=Anthropic())  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]

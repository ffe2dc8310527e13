"""Toolsets: tools that live outside the agent's code (an MCP server's), seen through one small protocol.

The definition and the loop know a toolset only as a ``Toolset``: something that, once connected, lists tools
(each a ``RemoteTool``, run like a helper) and says when it can no longer be used. ``typedagent.mcp`` implements
it; nothing here imports an MCP package.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .context import RunContext

__all__ = ["RemoteTool", "Toolset", "ToolsetConnection", "ToolsetFailed", "ToolsetUnavailable", "connect_all"]


class ToolsetUnavailable(ConnectionError):
    """A toolset could not be connected, or its connection was lost: the message says which, why and what to do.

    A ``ConnectionError``, so ``except ConnectionError`` catches it around ``agent.connected()``; an execution
    returns it as a ``TOOLSET_UNAVAILABLE`` failure instead.
    """

    def __init__(self, message: str, *, toolset: str) -> None:
        super().__init__(message)
        self.message = message
        self.toolset = toolset
        """The toolset's name (or its command or URL when it has none yet)."""


class ToolsetFailed(Exception):
    """A remote tool call ended in an error result: ``content`` is exactly what the model reads."""

    def __init__(self, content: str | list[dict[str, Any]]) -> None:
        super().__init__(content if isinstance(content, str) else "tool error")
        self.content = content


class RemoteTool(Protocol):
    """One tool of a connected toolset, run by the loop like a helper."""

    @property
    def name(self) -> str:
        """The name the model calls it by (the toolset's prefix included)."""
        ...

    @property
    def server(self) -> str:
        """The name of the toolset it belongs to (reported in tool events and spans)."""
        ...

    @property
    def sequential(self) -> bool:
        """Run the whole batch of helper calls one by one when this tool is among them."""
        ...

    @property
    def timeout_s(self) -> float | None:
        """Always None: a remote tool applies its own time limit inside ``invoke``."""
        ...

    @property
    def requires_approval(self) -> bool:
        """Whether a person must approve each call before it runs."""
        ...

    def to_param(self) -> Mapping[str, Any]:
        """The definition sent to the API (a fresh copy)."""
        ...

    async def invoke(self, tool_input: dict[str, Any], ctx: RunContext[Any]) -> object:
        """Run the call: return the result's content, or raise ``ToolsetFailed`` with an error result's content."""
        ...


class ToolsetConnection(Protocol):
    """A toolset, connected: its tools as they are now, and why it can no longer be used, once it cannot."""

    @property
    def server(self) -> str:
        """The toolset's name: the one it was given, else the one the server gives itself."""
        ...

    @property
    def version(self) -> int:
        """A number that changes whenever ``tools()`` would answer differently."""
        ...

    @property
    def failure(self) -> str | None:
        """Why the connection can no longer be used (the server died, the connection dropped); None while it can."""
        ...

    def tools(self) -> Sequence[RemoteTool]:
        """The tools as they are now."""
        ...

    async def settled(self) -> None:
        """Wait (briefly) for a tool listing under way, after the server said its tools changed, to finish."""
        ...


class Toolset(ABC):
    """Tools that live elsewhere (an MCP server's), known only once connected; given in ``define_agent(helpers=)``."""

    __slots__ = ()

    @property
    @abstractmethod
    def label(self) -> str:
        """How messages name the toolset before it is connected: its ``name=``, else its command or URL."""

    @property
    def requires_approval(self) -> bool:
        """Whether any of its tools may need a person's approval before a call runs."""
        return False

    @abstractmethod
    def connection(self) -> AbstractAsyncContextManager[ToolsetConnection]:
        """Use the toolset for a while: entering connects it (or joins the connection open in this event loop).

        Leaving releases it; the last user leaving closes the connection.

        Raises:
            ToolsetUnavailable: it could not be connected (the message says why and what to do).
        """


def _own_connection(toolset: Toolset) -> AbstractAsyncContextManager[ToolsetConnection]:
    return toolset.connection()


@asynccontextmanager
async def connect_all(
    toolsets: Sequence[Toolset],
    open_one: Callable[[Toolset], AbstractAsyncContextManager[ToolsetConnection]] | None = None,
) -> AsyncGenerator[list[ToolsetConnection]]:
    """Connect every toolset (together: one slow server does not wait for another) for the block; release all after.

    ``open_one`` opens a toolset (a cassette's tape records or replays it); by default, its own ``connection()``.

    Raises:
        ToolsetUnavailable: one could not be connected (those that were are released first).
    """
    if not toolsets:
        yield []
        return
    import asyncio

    async with AsyncExitStack() as stack:
        opener = open_one or _own_connection
        entered = [asyncio.ensure_future(_enter(stack, opener(toolset))) for toolset in toolsets]
        try:
            connections = await asyncio.gather(*entered)
        except BaseException:
            for task in entered:
                task.cancel()
            await asyncio.gather(*entered, return_exceptions=True)
            raise
        yield list(connections)


async def _enter(stack: AsyncExitStack, manager: AbstractAsyncContextManager[ToolsetConnection]) -> ToolsetConnection:
    return await stack.enter_async_context(manager)

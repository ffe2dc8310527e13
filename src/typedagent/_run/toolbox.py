"""An execution's tools as they are now: the agent's helpers and the tools of its connected toolsets."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import TYPE_CHECKING, Any, cast

from .._agent.remote import RemoteTool, Toolset, ToolsetConnection, ToolsetUnavailable, connect_all
from .._agent.tools import HelperTool, Tool
from .._agent.toolset import ToolNameClash, connected_params

if TYPE_CHECKING:
    from .._agent.definition import AgentDefinition
    from .._agent.tools import Helper

__all__ = ["Toolbox", "ToolsetProblem", "connect_toolsets", "may_wait"]

Opener = Callable[[Toolset], AbstractAsyncContextManager[ToolsetConnection]]


class ToolsetProblem(Exception):
    """A toolset cannot be used: it failed to connect, its connection was lost, or its tools clash."""

    def __init__(self, toolset: str, message: str) -> None:
        super().__init__(message)
        self.toolset = toolset
        self.message = message


class Toolbox:
    """The tools an execution can run now: the agent's helpers, and its toolsets' tools once connected."""

    __slots__ = ("_agent", "_connections", "_remote", "_versions", "may_wait")

    def __init__(self, agent: AgentDefinition[Any, Any], connections: Sequence[ToolsetConnection] = ()) -> None:
        self._agent = agent
        self._connections = tuple(connections)
        self._remote: dict[str, RemoteTool] = {}
        self._versions: tuple[int, ...] | None = None
        self.may_wait = any(may_wait(helper) for helper in agent.helpers)
        """Whether a call of one of its tools may wait for a decision (approval, an external result)."""

    @property
    def connected(self) -> bool:
        """Whether it holds toolsets' connections (whose tools may change between model calls)."""
        return bool(self._connections)

    def helper(self, name: str) -> Helper[Any] | RemoteTool | None:
        """The helper, or the toolset's tool, called ``name``; None when the agent has no such tool now."""
        found = self._agent.helper(name)
        if found is None and self._remote:
            return self._remote.get(name)
        return found

    def server_of(self, name: str) -> str | None:
        """The toolset whose tool ``name`` is, None for the agent's own tools."""
        tool = self._remote.get(name) if self._remote else None
        return None if tool is None else tool.server

    async def update(self, params: dict[str, Any]) -> None:
        """Before a model call: make ``params["tools"]`` list the toolsets' tools as they are now.

        A listing under way (the server just said its tools changed) is waited for, so the next request offers
        the tools as they are after the call that changed them.

        Raises:
            ToolsetProblem: a connection was lost, or a toolset's tool is named like another tool.
        """
        for connection in self._connections:
            await connection.settled()
        for connection in self._connections:
            failure = connection.failure
            if failure is not None:
                raise ToolsetProblem(connection.server, failure)
        versions = tuple(connection.version for connection in self._connections)
        if versions == self._versions:
            return
        agent = self._agent
        try:
            params["tools"] = connected_params(agent._tool_params, len(agent.helpers), self._connections)
        except ToolNameClash as clash:
            raise ToolsetProblem(clash.toolset, str(clash)) from None
        self._remote = {tool.name: tool for connection in self._connections for tool in connection.tools()}
        self._versions = versions
        self.may_wait = any(may_wait(tool) for tool in (*agent.helpers, *self._remote.values()))


def may_wait(tool: Helper[Any] | RemoteTool) -> bool:
    """Whether a call of ``tool`` may wait for a decision: it may need approval, or its result comes from outside."""
    if isinstance(tool, HelperTool | Tool):
        return tool.external or tool.requires_approval is not False
    return bool(tool.requires_approval)  # a toolset's tool (an MCP server's)


async def connect_toolsets(agent: AgentDefinition[Any, Any], client: object, stack: AsyncExitStack) -> Toolbox:
    """Connect the agent's toolsets until ``stack`` closes (through the client's tape, when it records or replays).

    Raises:
        ToolsetProblem: a toolset could not be connected.
    """
    try:
        connections = await stack.enter_async_context(connect_all(agent.toolsets, _opener(client)))
    except ToolsetUnavailable as exc:
        raise ToolsetProblem(exc.toolset, exc.message) from exc
    return Toolbox(agent, connections)


def _opener(client: object) -> Opener | None:
    """The client's way to open a toolset, when it records or replays them (a cassette); None for the toolset's own.

    Looks through the clients that forward each call unchanged (``forwards_to``), as the rate limiter does.
    """
    seen: object = client
    for _ in range(8):
        tape: object = getattr(seen, "_open_toolset", None)
        if callable(tape):
            return cast("Opener", tape)
        seen = getattr(seen, "forwards_to", None)
        if seen is None:
            break
    return None

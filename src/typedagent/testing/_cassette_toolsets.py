"""Toolsets in cassettes: what an MCP server listed and answered, recorded with the model's calls and replayed.

A recorded toolset is a log of what the execution saw, in order: each tool listing, each call (its input and
the exact content the model read), and the loss of the connection. A replay answers from the log without the
server: it lists the recorded tools, and answers each call with the first unused recorded call of the same tool
and input, moving on to the listing that followed it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, cast

from .._agent.remote import RemoteTool, Toolset, ToolsetConnection, ToolsetFailed, ToolsetUnavailable

if TYPE_CHECKING:
    from .._agent.context import RunContext

__all__ = ["ToolsetRecorder", "ToolsetReplayer"]

Log = list[dict[str, Any]]


class ToolsetRecorder:
    """Records every toolset a ``RecordingClient``'s executions use, by the toolset's label."""

    def __init__(self, save: Callable[[], None]) -> None:
        self.logs: dict[str, Log] = {}
        self._save = save

    @asynccontextmanager
    async def open(self, toolset: Toolset) -> AsyncGenerator[ToolsetConnection]:
        """Connect ``toolset`` and record what goes through the connection."""
        log = self.logs.setdefault(toolset.label, [])
        try:
            manager = toolset.connection()
            live = await manager.__aenter__()
        except ToolsetUnavailable as exc:
            log.append({"unavailable": exc.message, "server": exc.toolset})
            self._save()
            raise
        try:
            yield _Recording(live, log, self._save)
        finally:
            await manager.__aexit__(None, None, None)


class _Recording:
    """A live connection whose listings, calls and loss are written to the log."""

    def __init__(self, live: ToolsetConnection, log: Log, save: Callable[[], None]) -> None:
        self._live = live
        self._log = log
        self._save = save
        self._seen: int | None = None
        self._lost = False

    @property
    def server(self) -> str:
        return self._live.server

    @property
    def version(self) -> int:
        return self._live.version

    async def settled(self) -> None:
        await self._live.settled()

    @property
    def failure(self) -> str | None:
        failure = self._live.failure
        if failure is not None and not self._lost:
            self._lost = True
            self._log.append({"failure": failure})
            self._save()
        return failure

    def tools(self) -> list[RemoteTool]:
        tools = list(self._live.tools())
        if self._live.version != self._seen:
            self._seen = self._live.version
            listing = [
                {"definition": dict(tool.to_param()), "requires_approval": tool.requires_approval} for tool in tools
            ]
            self._log.append({"server": self.server, "tools": listing})
            self._save()
        return [_RecordedTool(tool, self._log, self._save) for tool in tools]


class _RecordedTool:
    """A live tool whose calls are written to the log, with exactly what the model reads."""

    def __init__(self, tool: RemoteTool, log: Log, save: Callable[[], None]) -> None:
        self._tool = tool
        self._log = log
        self._save = save
        self.name = tool.name
        self.server = tool.server
        self.sequential = tool.sequential
        self.timeout_s = tool.timeout_s
        self.requires_approval = tool.requires_approval

    def to_param(self) -> Mapping[str, Any]:
        return self._tool.to_param()

    async def invoke(self, tool_input: dict[str, Any], ctx: RunContext[Any]) -> object:
        entry: dict[str, Any] = {"name": self.name, "input": copy.deepcopy(tool_input)}
        try:
            content = await self._tool.invoke(tool_input, ctx)
        except ToolsetFailed as exc:
            entry.update(content=exc.content, is_error=True)
            raise
        else:
            entry.update(content=_plain(content), is_error=False)
            return content
        finally:
            if "content" in entry:
                self._log.append({"call": entry})
                self._save()


def _plain(content: object) -> Any:
    return json.loads(json.dumps(content, default=str))


class ToolsetReplayer:
    """Answers a ``ReplayClient``'s toolsets from the cassette's logs; a call it cannot answer is drift."""

    def __init__(
        self, logs: Mapping[str, Log], path: str, drift: Callable[[str], None], error: type[Exception]
    ) -> None:
        self._logs = logs
        self._path = path
        self._drift = drift
        self._error = error
        """What a replay that cannot start raises (``CassetteError``)."""
        self._used: set[tuple[str, int]] = set()

    @asynccontextmanager
    async def open(self, toolset: Toolset) -> AsyncGenerator[ToolsetConnection]:
        """The recorded toolset, without its server."""
        log = self._logs.get(toolset.label)
        if log is None:
            raise self._error(
                f"ReplayClient: {self._path!r} has no recording of toolset {toolset.label!r} (it holds "
                f"{sorted(self._logs) or 'none'}). Re-record the cassette with this toolset."
            )
        first = log[0] if log else {}
        if "unavailable" in first:
            raise ToolsetUnavailable(str(first["unavailable"]), toolset=str(first.get("server", toolset.label)))
        yield _Replayed(self, toolset.label, log)

    def answer(self, key: str, log: Log, name: str, tool_input: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """The first unused recorded call of tool ``name`` with this input: its place in the log and its entry."""
        for index, event in enumerate(log):
            call = event.get("call")
            fits = call is not None and call["name"] == name and call["input"] == tool_input
            if fits and (key, index) not in self._used:
                self._used.add((key, index))
                return index, cast("dict[str, Any]", call)
        self._drift(
            f"ReplayClient: toolset {key!r} was called as {name}({json.dumps(tool_input)}), which {self._path!r} "
            "has no unused recording of. The run drifted from the recording: fix the agent, or re-record the "
            "cassette if the change is intended."
        )
        return None


class _Replayed:
    """A recorded connection: its listings and loss advance as the recorded calls are replayed."""

    def __init__(self, replayer: ToolsetReplayer, key: str, log: Log) -> None:
        self._replayer = replayer
        self._key = key
        self._log = log
        self.version = 0
        self.failure: str | None = None
        self.server = key
        self._tools: list[RemoteTool] = []
        self._apply(0)

    def tools(self) -> list[RemoteTool]:
        return self._tools

    async def settled(self) -> None:
        return None

    def _apply(self, start: int) -> None:
        """Take on the listings and the loss recorded from ``start`` up to the next call."""
        for event in self._log[start:]:
            if "call" in event:
                break
            if "failure" in event:
                self.failure = str(event["failure"])
            elif "tools" in event:
                self.server = str(event.get("server", self._key))
                self._tools = [_ReplayedTool(self, listing) for listing in event["tools"]]
                self.version += 1

    async def call(self, name: str, tool_input: dict[str, Any]) -> object:
        found = self._replayer.answer(self._key, self._log, name, tool_input)
        if found is None:
            raise ToolsetFailed(f"Error: the cassette has no recorded result for this call of {name!r}.")
        index, call = found
        self._apply(index + 1)
        if call["is_error"]:
            raise ToolsetFailed(call["content"])
        return call["content"]


class _ReplayedTool:
    """A recorded tool: its definition as recorded, its calls answered from the log."""

    sequential = False
    timeout_s = None

    def __init__(self, connection: _Replayed, listing: Mapping[str, Any]) -> None:
        self._connection = connection
        self._definition: dict[str, Any] = dict(listing["definition"])
        self.name = str(self._definition["name"])
        self.server = connection.server
        self.requires_approval = bool(listing.get("requires_approval", False))

    def to_param(self) -> Mapping[str, Any]:
        return copy.deepcopy(self._definition)

    async def invoke(self, tool_input: dict[str, Any], ctx: RunContext[Any]) -> object:
        del ctx
        return await self._connection.call(self.name, tool_input)

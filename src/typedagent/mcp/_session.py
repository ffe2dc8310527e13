"""One connection to an MCP server, opened and closed by one owner task; any task may list and call through it.

The MCP SDK's transports and sessions hold anyio task groups, which must be left by the task that entered them:
so one task (the owner) enters them, publishes the session, waits to be told to stop, and leaves them. The
executions using the connection, in whatever tasks, only call through the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Mapping
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, Final

from .._agent.remote import ToolsetFailed, ToolsetUnavailable
from .._shared.errors import safe_str
from ._content import result_content
from ._tools import MCPTool, Options, build_tools, unknown_names
from ._transports import Transport, root_cause

if TYPE_CHECKING:
    from mcp import ClientSession

__all__ = ["Connection"]

logger = logging.getLogger("typedagent")

CLOSE_S: Final = 10.0
"""How long closing waits for the owner to leave its contexts before cancelling it (the stdio transport's own
shutdown takes at most about 6 s: close stdin, wait 2 s, SIGTERM the process group, 2 s, SIGKILL)."""
SETTLE_S: Final = 5.0
"""How long an execution waits, before its next model call, for the tool listing a change notice started."""
MAX_PAGES: Final = 100
"""Pages of ``tools/list`` read at most (a server that keeps handing out cursors must not hang the connection)."""


class Connection:
    """A live connection to one MCP server: its session, its tools as the agent has them, and its health."""

    def __init__(self, transport: Transport, options: Options, name: str | None, connect_timeout_s: float) -> None:
        self.transport = transport
        self.options = options
        self.name = name
        self.server = name or transport.label
        """The toolset's name: the one it was given, else the server's own (its command or URL until it says)."""
        self.users = 0
        self.version = 0
        self.failure: str | None = None
        self._tools: list[MCPTool] = []
        self._session: ClientSession | None = None
        self._connect_timeout_s = connect_timeout_s
        self._timed_out = False
        self._relists = 0
        self._listing = 0
        self._listed = asyncio.Event()
        self._listed.set()
        loop = asyncio.get_running_loop()
        self._ready: asyncio.Future[None] = loop.create_future()
        self._ready.add_done_callback(_retrieve)
        self._stop = asyncio.Event()
        self._closing: asyncio.Task[None] | None = None
        # A fresh context: the owner outlives the execution that started it, and must not carry its span or key.
        self._owner = loop.create_task(self._own(), context=contextvars.Context())
        self._timer = loop.call_later(connect_timeout_s, self._too_slow)

    def tools(self) -> list[MCPTool]:
        """The server's tools as the agent has them now."""
        return self._tools

    async def settled(self) -> None:
        """Wait, at most ``SETTLE_S``, for the listings under way (after change notices) to finish."""
        if self._listing:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._listed.wait(), SETTLE_S)

    @property
    def closing(self) -> bool:
        """Whether it is closing (or closed): no new user may join it."""
        return self._closing is not None

    async def ready(self) -> None:
        """Wait until the session is initialized and its tools listed.

        Raises:
            ToolsetUnavailable: it could not be (the message says why and what to do).
        """
        await asyncio.shield(self._ready)

    async def close(self) -> None:
        """Close the session and stop (or disconnect from) the server; from any task, however often."""
        if self._closing is None:
            self._closing = asyncio.get_running_loop().create_task(self._close())
        await asyncio.shield(self._closing)

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[str | list[dict[str, Any]], bool]:
        """Call the server's tool ``name``; the result's content and whether it is an error.

        Raises:
            ToolsetFailed: the connection is gone or failed during the call, or the server refused the request.
        """
        session = self._session
        if session is None or self.failure is not None:
            raise ToolsetFailed(f"Error: MCP server {self.server!r} cannot be reached: {self.failure or 'closed'}")
        from mcp.shared.exceptions import MCPError

        try:
            result = await session.call_tool(name, arguments)
        except MCPError as exc:
            if exc.code != -32000:  # not CONNECTION_CLOSED: the server refused this request only
                raise ToolsetFailed(f"Error: MCP server {self.server!r} refused the call: {exc.message}") from None
            self._lose(exc)
            raise ToolsetFailed(self._lost_during_call()) from None
        except RuntimeError as exc:  # the SDK found the structured content off the tool's own output schema
            raise ToolsetFailed(f"Error: {safe_str(exc)}") from None
        except Exception as exc:  # the transport broke (anyio's closed or broken stream, a socket error)
            self._lose(exc)
            raise ToolsetFailed(self._lost_during_call()) from None
        return result_content(result.model_dump(by_alias=True, mode="json", exclude_none=True))

    def _lost_during_call(self) -> str:
        return (
            f"Error: the connection to MCP server {self.server!r} was lost during the call, which may or may not "
            f"have run: {self.failure}"
        )

    async def _own(self) -> None:
        try:
            async with AsyncExitStack() as stack:
                session, init = await self.transport.open(stack, self._on_message)
                if self.name is None and init.server_info.name:
                    self.server = init.server_info.name
                listed = await _list(session)
                self._check_filters(listed)
                self._session = session
                self._adopt(listed)
                self._timer.cancel()
                self._ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            self._fail(exc)
            if not isinstance(exc, Exception):
                raise
        finally:
            self._session = None
            self.transport.finish()

    def _check_filters(self, listed: list[dict[str, Any]]) -> None:
        unknown = unknown_names(listed, self.options)
        if unknown:
            names = ", ".join(str(listing.get("name")) for listing in listed) or "none"
            raise _Misconfigured(
                f"allow= or deny= names {', '.join(map(repr, unknown))}, which the server has no tool called "
                f"(a typo would let a tool through, or keep one out). Its tools: {names}."
            )

    def _adopt(self, listed: list[dict[str, Any]]) -> None:
        self._tools = build_tools(self.server, listed, self.options, self.call)
        self.version += 1

    def _fail(self, exc: BaseException) -> None:
        cause = root_cause(exc)
        if isinstance(cause, _Misconfigured):
            why = str(cause)
        elif self._timed_out:
            why = (
                f"it did not finish connecting within {self._connect_timeout_s} s (raise "
                f"connect_timeout_s= if it is slow to start). {self.transport.explain(exc)}"
            )
        elif isinstance(exc, asyncio.CancelledError) and not self._ready.done():
            why = "it was closed before it finished connecting"
        else:
            why = self.transport.explain(exc)
        if not self._ready.done():
            self._ready.set_exception(
                ToolsetUnavailable(f"MCP server {self.server!r} could not be connected: {why}", toolset=self.server)
            )
        elif not self._stop.is_set():
            self._lose(exc, why)

    def _lose(self, exc: BaseException, why: str | None = None) -> None:
        if self.failure is None:
            self.failure = why or self.transport.explain(exc)
            logger.warning("MCP server %r: the connection was lost: %s", self.server, self.failure)

    def _too_slow(self) -> None:
        if not self._ready.done():
            self._timed_out = True
            self._owner.cancel()

    async def _on_message(self, message: object) -> None:
        """Notifications and transport errors from the session: a changed tool list is listed again."""
        from mcp.types import ToolListChangedNotification

        session = self._session
        if not isinstance(message, ToolListChangedNotification) or session is None:
            return
        self._relists += 1
        turn = self._relists
        self._listing += 1
        self._listed.clear()
        try:
            listed = await _list(session)
        except Exception as exc:
            logger.debug("MCP server %r: listing its changed tools failed: %s", self.server, safe_str(exc))
            return
        finally:
            self._listing -= 1
            if not self._listing:
                self._listed.set()
        if turn == self._relists:  # a newer notification's listing wins
            self._adopt(listed)

    async def _close(self) -> None:
        self._timer.cancel()
        owner = self._owner
        if owner.done():
            return
        if self._ready.done():
            self._stop.set()
        else:
            owner.cancel()
        for _ in range(2):
            done, _ = await asyncio.wait({owner}, timeout=CLOSE_S)
            if done:
                return
            owner.cancel()
        logger.warning("MCP server %r: its connection did not close within %s s; abandoned", self.server, 2 * CLOSE_S)


class _Misconfigured(Exception):
    """The toolset's options do not fit the server (its message says how)."""


async def _list(session: ClientSession) -> list[dict[str, Any]]:
    """Every tool the server lists, page after page, in the wire form (camelCase keys)."""
    from mcp.types import PaginatedRequestParams

    listed: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await session.list_tools(params=None if cursor is None else PaginatedRequestParams(cursor=cursor))
        listed.extend(_wire(tool) for tool in page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return listed


def _wire(tool: Any) -> dict[str, Any]:
    dumped: Mapping[str, Any] = tool.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dict(dumped)


def _retrieve(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()

"""How a connection reaches its MCP server: a child process over stdio, or a URL over streamable HTTP (or SSE)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, Protocol, cast

from .._shared.errors import safe_str

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import InitializeResult

__all__ = ["Http", "Opened", "Stdio", "Transport", "root_cause"]

STDERR_TAIL: Final = 2000
"""How much of a stdio server's stderr an error quotes (its end: where a crash says why)."""
HTTP_TIMEOUT_S: Final = 30.0
HTTP_READ_TIMEOUT_S: Final = 300.0
"""The MCP SDK's own defaults: a call may stream its answer for minutes."""

Handler = Callable[[Any], Awaitable[None]]
Opened = tuple["ClientSession", "InitializeResult"]


class Transport(Protocol):
    """Opens the session to the server (in the owner task's stack) and explains what went wrong."""

    @property
    def label(self) -> str:
        """The server's command or URL, as error messages show it."""
        ...

    def fresh(self) -> Transport:
        """A copy for one connection: what it keeps of that connection (a process's stderr) is its own."""
        ...

    async def open(self, stack: AsyncExitStack, handler: Handler) -> Opened:
        """Start or reach the server and initialize a session with it; ``stack`` closes both."""
        ...

    def explain(self, exc: BaseException) -> str:
        """What ``exc`` means for this server, and what to do."""
        ...

    def finish(self) -> None:
        """Release what the transport holds once its connection is over."""
        ...


def root_cause(exc: BaseException) -> BaseException:
    """The first exception inside ``exc`` that is not a group (anyio's task groups wrap what fails in them)."""
    found = exc
    inner: object = getattr(found, "exceptions", None)
    while isinstance(inner, tuple) and inner:
        found = cast("tuple[BaseException, ...]", inner)[0]
        inner = getattr(found, "exceptions", None)
    return found


def _session(read: Any, write: Any, handler: Handler) -> ClientSession:
    from mcp import ClientSession

    return ClientSession(read, write, message_handler=cast("Any", handler))


@dataclass(slots=True)
class Stdio:
    """A server run as a child process, spoken to over its stdin and stdout; its stderr is kept for errors."""

    command: str
    args: Sequence[str]
    env: Mapping[str, str] | None
    cwd: str | None
    _errlog: IO[str] | None = field(default=None, init=False)

    @property
    def label(self) -> str:
        """The command line."""
        return " ".join([self.command, *self.args])

    def fresh(self) -> Stdio:
        """A copy with no stderr file yet."""
        return Stdio(self.command, self.args, self.env, self.cwd)

    async def open(self, stack: AsyncExitStack, handler: Handler) -> Opened:
        """Start the process (in its own process group) and initialize a session over its pipes."""
        from mcp import StdioServerParameters, stdio_client

        self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115 - kept open
        params = StdioServerParameters(
            command=self.command, args=list(self.args), env=None if self.env is None else dict(self.env), cwd=self.cwd
        )
        read, write = await stack.enter_async_context(stdio_client(params, errlog=self._errlog))
        session = await stack.enter_async_context(_session(read, write, handler))
        return session, await session.initialize()

    def explain(self, exc: BaseException) -> str:
        """Why the process could not start or stopped answering, with the end of its stderr."""
        cause = root_cause(exc)
        if isinstance(cause, OSError) and not isinstance(cause, ConnectionError):
            return (
                f"could not start {self.command!r} ({cause.strerror or safe_str(cause)}): check that it is installed "
                "and on PATH (or give its full path), and that cwd= exists."
            )
        what = _mcp_error(cause) or f"{type(cause).__name__}: {safe_str(cause)}"
        tail = self.stderr_tail()
        said = f" The end of its stderr:\n{tail}" if tail else " It wrote nothing to stderr."
        return f"{what}.{said}"

    def stderr_tail(self) -> str:
        """The end of what the process wrote to stderr (read without moving the file's offset, which it shares)."""
        errlog = self._errlog
        if errlog is None or errlog.closed:
            return ""
        try:
            errlog.flush()
            size = os.fstat(errlog.fileno()).st_size
            data = os.pread(errlog.fileno(), STDERR_TAIL * 4, max(0, size - STDERR_TAIL * 4))
        except OSError:
            return ""
        return data.decode("utf-8", "replace")[-STDERR_TAIL:].strip()

    def finish(self) -> None:
        """Close the stderr file (the process is gone by now)."""
        if self._errlog is not None:
            self._errlog.close()


@dataclass(slots=True)
class Http:
    """A server at a URL: streamable HTTP, or SSE when the server only speaks that (as the MCP spec advises)."""

    url: str
    headers: Mapping[str, str]

    @property
    def label(self) -> str:
        """The URL."""
        return self.url

    def fresh(self) -> Http:
        """A copy (an HTTP transport keeps nothing of a connection: the same would do)."""
        return Http(self.url, self.headers)

    async def open(self, stack: AsyncExitStack, handler: Handler) -> Opened:
        """Initialize over streamable HTTP; when the server refuses that with an HTTP error, over SSE."""
        import httpx2
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared.exceptions import MCPError

        timeout = httpx2.Timeout(HTTP_TIMEOUT_S, read=HTTP_READ_TIMEOUT_S)
        http = await stack.enter_async_context(httpx2.AsyncClient(headers=dict(self.headers), timeout=timeout))
        first = AsyncExitStack()
        try:
            read, write = await first.enter_async_context(streamable_http_client(self.url, http_client=http))
            session = await first.enter_async_context(_session(read, write, handler))
            init = await session.initialize()
        except MCPError as exc:
            await first.aclose()
            return await self._open_sse(stack, handler, exc)
        except BaseException:
            await first.aclose()
            raise
        stack.push_async_callback(first.aclose)
        return session, init

    async def _open_sse(self, stack: AsyncExitStack, handler: Handler, refused: BaseException) -> Opened:
        from mcp.client.sse import sse_client

        try:
            streams = sse_client(
                self.url, headers=dict(self.headers), timeout=HTTP_TIMEOUT_S, sse_read_timeout=HTTP_READ_TIMEOUT_S
            )
            read, write = await stack.enter_async_context(streams)
            session = await stack.enter_async_context(_session(read, write, handler))
            return session, await session.initialize()
        except Exception as exc:
            raise _NeitherTransport(refused, exc) from exc

    def explain(self, exc: BaseException) -> str:
        """Why the URL could not be used, and what to check."""
        if isinstance(exc, _NeitherTransport):
            return (
                f"it refused streamable HTTP ({self._describe(exc.streamable)}) and SSE "
                f"({self._describe(exc.sse)}): check the URL (servers usually answer at /mcp, or /sse for SSE)."
            )
        return self._describe(exc)

    def _describe(self, exc: BaseException) -> str:
        cause = root_cause(exc)
        status = getattr(getattr(cause, "response", None), "status_code", None)
        if isinstance(status, int):
            hint = " (check headers=, e.g. its Authorization)" if status in (401, 403) else ""
            return f"HTTP {status}{hint}"
        name = type(cause).__name__
        if "Connect" in name or isinstance(cause, OSError):
            return f"cannot connect ({safe_str(cause) or name}): is the server running at {self.url}?"
        if getattr(cause, "code", None) == -32000 and name == "MCPError":
            return f"the connection closed: is the server still running at {self.url}?"
        return _mcp_error(cause) or f"{name}: {safe_str(cause)}"

    def finish(self) -> None:
        """Nothing to release: the HTTP client closed with the connection."""


class _NeitherTransport(Exception):
    def __init__(self, streamable: BaseException, sse: BaseException) -> None:
        super().__init__("neither streamable HTTP nor SSE")
        self.streamable = streamable
        self.sse = sse


def _mcp_error(cause: BaseException) -> str | None:
    code = getattr(cause, "code", None)
    message = getattr(cause, "message", None)
    if type(cause).__name__ != "MCPError" or not isinstance(code, int):
        return None
    if code == -32000:  # CONNECTION_CLOSED: the transport ended (the process exited, or its output ended)
        return "the server closed the connection (its process exited?)"
    return f"the server answered with MCP error {code}: {message}"


def path_text(cwd: str | os.PathLike[str] | None) -> str | None:
    """``cwd`` as a string (``StdioServerParameters`` takes one)."""
    return None if cwd is None else str(Path(cwd))

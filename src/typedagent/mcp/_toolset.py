"""``MCPToolset``: an MCP server's tools for an agent, connected when first needed and shared while in use."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import weakref
from collections.abc import AsyncGenerator, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Final, cast

from .._agent.calling import TOOL_NAME_RE
from .._agent.remote import Toolset, ToolsetConnection
from .._shared.errors import AgentDefinitionError
from .._shared.numbers import is_finite_number
from ._session import Connection
from ._tools import Options
from ._transports import Http, Stdio, Transport, path_text

if TYPE_CHECKING:
    from ._tools import MCPTool

__all__ = ["MCPToolset"]

CONNECT_TIMEOUT_S: Final = 30.0


class MCPToolset(Toolset):
    """The tools of an MCP server, run by typedagent: put it in ``define_agent(helpers=[...])`` beside helper tools.

    Build one with ``MCPToolset.stdio(...)`` (a server typedagent starts as a child process) or
    ``MCPToolset.http(...)`` (a server at a URL). The server starts, or is connected to, when an execution first
    needs it; every execution running at the time (``execute_many``'s included) shares that connection, and the last
    one to finish closes it (a stdio server's process ends with it). ``async with agent.connected():`` holds it open
    for a block. The tool list is read once and read again when the server says it changed.

    Its tools are called like helpers: the model's input is checked against the tool's input schema first, the
    result (text, images, embedded resources, structured content) becomes the ``tool_result`` content, and an
    error result reaches the model as a tool error. A server that cannot be started or reached fails the execution
    with ``TOOLSET_ERROR``; one that dies mid-run fails the call in flight (the model sees why), then the execution.
    """

    __slots__ = ("__weakref__", "_by_loop", "_name", "_options", "_timeout", "_transport")

    def __init__(self, transport: Transport, *, name: str | None, options: Options, connect_timeout_s: float) -> None:
        self._transport = transport
        self._name = name
        self._options = options
        self._timeout = connect_timeout_s
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Slot] = weakref.WeakKeyDictionary()

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        name: str | None = None,
        prefix: str | None = None,
        allow: Collection[str] | None = None,
        deny: Collection[str] = (),
        timeout_s: float | None = None,
        requires_approval: bool | Collection[str] = False,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
    ) -> MCPToolset:
        """A server typedagent starts as a child process and speaks to over its stdin and stdout.

        The process runs in its own process group; it is stopped (stdin closed, then SIGTERM, then SIGKILL) when
        the connection closes. What it writes to stderr is kept, and quoted when it fails.

        Args:
            command: The program (``"npx"``, ``"uvx"``, ``sys.executable``, a path).
            args: Its arguments.
            env: Environment variables for it, added to a minimal environment (``PATH``, ``HOME``, ``USER``, …):
                it does not see the rest of yours, your API keys included.
            cwd: Its working directory.
            name: The toolset's name in tool events, spans and errors; default: the name the server gives itself.
            prefix: Prepended to each tool's name with ``_`` (``prefix="fs"``: ``read_file`` is ``fs_read_file``),
                so two servers' tools, or a server's and a helper's, do not clash.
            allow: The server's tool names (unprefixed) the agent gets; default: all.
            deny: The server's tool names (unprefixed) the agent does not get.
            timeout_s: A call still running after this many seconds is cancelled, and the model told it timed out.
            requires_approval: ``True`` for every tool, or the server's tool names (unprefixed) whose calls a person
                must approve first.
            connect_timeout_s: How long starting the server and listing its tools may take.

        Raises:
            AgentDefinitionError: an option is invalid (the message says how to fix it).
            ImportError: the ``mcp`` package is not installed.
        """
        if not isinstance(command, str) or not command:
            raise AgentDefinitionError(f"MCPToolset.stdio(command=...) must name a program, got {command!r}.")
        if isinstance(args, str) or not all(isinstance(arg, str) for arg in args):
            raise AgentDefinitionError(
                f"MCPToolset.stdio(args=...) must be a list of strings, got {args!r}: write args=['server.py']."
            )
        transport = Stdio(command, tuple(args), None if env is None else dict(env), path_text(cwd))
        return cls._build(transport, name, prefix, allow, deny, timeout_s, requires_approval, connect_timeout_s)

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        prefix: str | None = None,
        allow: Collection[str] | None = None,
        deny: Collection[str] = (),
        timeout_s: float | None = None,
        requires_approval: bool | Collection[str] = False,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
    ) -> MCPToolset:
        """A server at a URL, over streamable HTTP (or SSE, when the server only speaks that).

        Args:
            url: The server's endpoint (``http://127.0.0.1:8000/mcp``; ``…/sse`` for an SSE server).
            headers: Sent with every request (``{"Authorization": "Bearer …"}``).
            name: The toolset's name in tool events, spans and errors; default: the name the server gives itself.
            prefix: Prepended to each tool's name with ``_``, so tools of different servers do not clash.
            allow: The server's tool names (unprefixed) the agent gets; default: all.
            deny: The server's tool names (unprefixed) the agent does not get.
            timeout_s: A call still running after this many seconds is cancelled, and the model told it timed out.
            requires_approval: ``True`` for every tool, or the server's tool names (unprefixed) whose calls a person
                must approve first.
            connect_timeout_s: How long connecting and listing the tools may take.

        Raises:
            AgentDefinitionError: an option is invalid (the message says how to fix it).
            ImportError: the ``mcp`` package is not installed.
        """
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise AgentDefinitionError(f"MCPToolset.http(url=...) must be an http:// or https:// URL, got {url!r}.")
        if headers is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
            raise AgentDefinitionError("MCPToolset.http(headers=...) must map header names to string values.")
        transport = Http(url, dict(headers or {}))
        return cls._build(transport, name, prefix, allow, deny, timeout_s, requires_approval, connect_timeout_s)

    @classmethod
    def _build(
        cls,
        transport: Transport,
        name: str | None,
        prefix: str | None,
        allow: Collection[str] | None,
        deny: Collection[str],
        timeout_s: float | None,
        requires_approval: bool | Collection[str],
        connect_timeout_s: float,
    ) -> MCPToolset:
        if importlib.util.find_spec("mcp") is None:
            raise ImportError("typedagent.mcp needs the mcp package (2.x): pip install 'typedagent[mcp]'.")
        if name is not None and (not isinstance(name, str) or not name):
            raise AgentDefinitionError(f"MCPToolset(name=...) must be a non-empty string, got {name!r}.")
        if prefix is not None and (not isinstance(prefix, str) or not TOOL_NAME_RE.fullmatch(prefix)):
            raise AgentDefinitionError(
                f"MCPToolset(prefix=...) must be 1-64 characters from a-z, A-Z, 0-9, '_' and '-', got {prefix!r}."
            )
        for label, value in (("timeout_s", timeout_s), ("connect_timeout_s", connect_timeout_s)):
            if value is not None and not (is_finite_number(value) and value > 0):
                raise AgentDefinitionError(
                    f"MCPToolset({label}=...) must be a finite positive number of seconds, got {value!r}."
                )
        approval = requires_approval
        options = Options(
            prefix=prefix,
            allow=None if allow is None else _names("allow", allow),
            deny=_names("deny", deny),
            timeout_s=timeout_s,
            requires_approval=approval if isinstance(approval, bool) else _names("requires_approval", approval),
        )
        return cls(transport, name=name, options=options, connect_timeout_s=float(connect_timeout_s))

    @property
    def name(self) -> str | None:
        """The name it was given (None: the server's own, known once connected)."""
        return self._name

    @property
    def label(self) -> str:
        """Its name, else its command or URL."""
        return self._name or self._transport.label

    @property
    def prefix(self) -> str | None:
        """Prepended (with ``_``) to each of its tools' names."""
        return self._options.prefix

    @property
    def requires_approval(self) -> bool:
        """Whether any of its tools needs a person's approval before a call runs (``requires_approval=``)."""
        wanted = self._options.requires_approval
        return wanted if isinstance(wanted, bool) else bool(wanted)

    def __reduce__(self) -> tuple[Any, ...]:
        # Its connections belong to this process's event loops: a copy elsewhere (a Ray worker) starts without any.
        return (_rebuild, (self._transport.fresh(), self._name, self._options, self._timeout))

    def __repr__(self) -> str:
        kind = "stdio" if isinstance(self._transport, Stdio) else "http"
        return f"MCPToolset.{kind}({self._transport.label!r}, name={self._name!r})"

    def connection(self) -> AbstractAsyncContextManager[ToolsetConnection]:
        """Use the server for a while: connect (or join the connection open in this event loop), release after."""
        return self._connected()

    @asynccontextmanager
    async def _connected(self) -> AsyncGenerator[ToolsetConnection]:
        connection = await self._acquire()
        try:
            yield _View(connection)
        finally:
            await self._release(connection)

    async def _acquire(self) -> Connection:
        loop = asyncio.get_running_loop()
        slot = self._by_loop.get(loop)
        if slot is None:
            slot = self._by_loop[loop] = _Slot()
        current = slot.current
        if current is None or current.failure is not None or current.closing:
            current = slot.current = Connection(self._transport.fresh(), self._options, self._name, self._timeout)
        current.users += 1
        try:
            await current.ready()
        except BaseException:
            await self._release(current)
            raise
        return current

    async def _release(self, connection: Connection) -> None:
        connection.users -= 1
        if connection.users:
            return
        slot = self._by_loop.get(asyncio.get_running_loop())
        if slot is not None and slot.current is connection:
            slot.current = None
        await connection.close()


def _rebuild(transport: Transport, name: str | None, options: Options, timeout: float) -> MCPToolset:
    return MCPToolset(transport, name=name, options=options, connect_timeout_s=timeout)


class _Slot:
    """The connection an event loop's executions share (None while none runs)."""

    __slots__ = ("current",)

    def __init__(self) -> None:
        self.current: Connection | None = None


class _View:
    """A connection as an execution sees it (``ToolsetConnection``)."""

    __slots__ = ("_connection",)

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    @property
    def server(self) -> str:
        """The toolset's name."""
        return self._connection.server

    @property
    def version(self) -> int:
        """Changes whenever the tools do."""
        return self._connection.version

    @property
    def failure(self) -> str | None:
        """Why the connection can no longer be used; None while it can."""
        failure = self._connection.failure
        return None if failure is None else f"The connection to MCP server {self.server!r} was lost: {failure}"

    def tools(self) -> list[MCPTool]:
        """The tools as they are now."""
        return self._connection.tools()

    async def settled(self) -> None:
        """Wait (briefly) for a listing under way to finish."""
        await self._connection.settled()


def _names(label: str, value: object) -> frozenset[str]:
    if isinstance(value, str) or not isinstance(value, Collection):
        raise AgentDefinitionError(
            f"MCPToolset({label}=...) must be a list of the server's tool names, got {value!r}: write {label}=['name']."
        )
    names: frozenset[object] = frozenset(cast("Collection[object]", value))
    if not all(isinstance(name, str) for name in names):
        raise AgentDefinitionError(f"MCPToolset({label}=...) must hold tool names (strings), got {value!r}.")
    return cast("frozenset[str]", names)

"""A loopback HTTP/1.1 server with keep-alive: started in a thread or served in a loop, stopped from anywhere."""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Self

from ._http import HttpReply, json_reply
from ._items import ScriptError, error_body

__all__ = ["LoopbackServer"]


class LoopbackServer:
    """Serves HTTP/1.1 on a local port and answers each request with ``_answer`` (a subclass's).

    A request the subclass could not answer is listed in ``problems``; with ``strict``, leaving the ``with``
    block raises ``ScriptError`` listing them.
    """

    strict: bool = True

    def __init__(self, *, host: str, port: int) -> None:
        self.problems: list[str] = []
        """Requests that could not be answered, with the reason."""
        self._host = host
        self._port = port
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def _answer(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> HttpReply:
        raise NotImplementedError

    @property
    def port(self) -> int:
        """The bound port (known once started)."""
        if not self._port:
            raise RuntimeError(f"{type(self).__name__} is not started: use it as a context manager or call start().")
        return self._port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``: pass it as ``AsyncAnthropic(base_url=...)``."""
        return f"http://{self._host}:{self.port}"

    def start(self) -> Self:
        """Serve from a background thread; returns once the port is bound."""
        if self._thread is not None:
            raise RuntimeError(f"{type(self).__name__} is already running.")
        ready = threading.Event()
        failures: list[BaseException] = []

        def run() -> None:
            try:
                asyncio.run(self.serve(on_ready=lambda _url: ready.set()))
            except BaseException as exc:  # reported to the starting thread, which raises it
                failures.append(exc)
                ready.set()

        self._thread = threading.Thread(target=run, name=type(self).__name__, daemon=True)
        self._thread.start()
        ready.wait()
        if failures:
            self._thread.join()
            self._thread = None
            raise failures[0]
        return self

    def stop(self) -> None:
        """Close every connection and stop serving (no-op when not running)."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self.request_stop()
        thread.join()

    def request_stop(self) -> None:
        """Ask ``serve()`` to return; safe from any thread."""
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None:
            loop.call_soon_threadsafe(stopping.set)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
        self._raise_problems(exc)

    async def __aenter__(self) -> Self:
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)
        self._raise_problems(exc)

    def _raise_problems(self, exc: BaseException | None) -> None:
        if exc is None and self.strict and self.problems:
            listing = "\n".join(f"  - {problem}" for problem in self.problems)
            raise ScriptError(f"{type(self).__name__} could not answer {len(self.problems)} request(s):\n{listing}")

    async def serve(self, *, on_ready: Callable[[str], object] | None = None, handle_signals: bool = False) -> None:
        """Serve in the running event loop until ``request_stop()`` (or SIGTERM/SIGINT with ``handle_signals``).

        ``on_ready`` receives the base URL once the port is bound.
        """
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        server = await asyncio.start_server(self._connection, self._host, self._port, backlog=4096)
        self._port = server.sockets[0].getsockname()[1]
        if handle_signals:
            for signum in (signal.SIGTERM, signal.SIGINT):
                self._loop.add_signal_handler(signum, self._stopping.set)
        try:
            if on_ready is not None:
                on_ready(self.base_url)
            await self._stopping.wait()
        finally:
            if handle_signals:
                for signum in (signal.SIGTERM, signal.SIGINT):
                    self._loop.remove_signal_handler(signum)
            server.close()
            # A connection accepted just before close has a handler task that has not run yet (so is not in
            # _tasks): let it start, then cancel every handler, each closing its transport (never left to the
            # garbage collector, which would warn of an unclosed socket).
            await asyncio.sleep(0)
            while self._tasks:
                for task in list(self._tasks):
                    task.cancel()
                await asyncio.gather(*self._tasks, return_exceptions=True)
                await asyncio.sleep(0)
            await server.wait_closed()
            self._loop = self._stopping = None

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    return
                method, target, version, headers, body = request
                try:
                    reply = await self._answer(method, target, headers, body)
                except Exception as exc:  # a bug or an unusable item: tell the client, do not hang it
                    self.problems.append(f"request failed in the server: {type(exc).__name__}: {exc}")
                    message = f"{type(self).__name__} failed: {type(exc).__name__}: {exc}"
                    reply = json_reply(500, error_body("api_error", message), {"x-should-retry": "false"})
                if reply.action == "drop":
                    writer.transport.abort()
                    return
                if reply.action == "hang":
                    await reader.read()  # answer nothing until the client gives up and closes
                    return
                keep_alive = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
                if reply.stream is not None:
                    if not await reply.stream.write(writer, keep_alive, reply.headers) or not keep_alive:
                        if reply.stream.fault == "stall":
                            await reader.read()  # silence until the client gives up and closes
                        return
                    continue
                writer.write(reply.encode(keep_alive))
                await writer.drain()
                if not keep_alive:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            return  # the client went away or sent something that is not HTTP
        except asyncio.CancelledError:
            return  # the server is stopping; ending normally keeps asyncio from logging each connection
        finally:
            self._tasks.discard(task)
            writer.close()


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, str, dict[str, str], bytes] | None:
    """One HTTP/1.1 request, or None when the client closed the connection between requests."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise
        return None
    request_line, *lines = head[:-4].decode("latin-1").split("\r\n")
    method, target, version = request_line.split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        chunks: list[bytes] = []
        while size := int((await reader.readuntil(b"\r\n")).strip().split(b";")[0], 16):
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
        await reader.readuntil(b"\r\n")  # the empty trailer
        return method, target, version, headers, b"".join(chunks)
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return method, target, version, headers, body

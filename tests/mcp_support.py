"""Real MCP servers for the tests: the demo server (``mcp_servers/demo.py``) over stdio and over HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from typedagent.mcp import MCPToolset

DEMO = Path(__file__).resolve().parent / "mcp_servers" / "demo.py"


def stdio_demo(markers: Path | None = None, *, env: dict[str, str] | None = None, **options: Any) -> MCPToolset:
    """The demo server, started by the toolset as a child process; with ``markers``, it leaves files there."""
    extra = dict(env or {})
    if markers is not None:
        extra["DEMO_MARKERS"] = str(markers)
    return MCPToolset.stdio(sys.executable, [str(DEMO), "stdio"], env=extra, **options)


@contextlib.contextmanager
def http_demo(markers: Path | None = None, kind: str = "http", **env: str) -> Iterator[HttpDemo]:
    """The demo server in its own process, serving streamable HTTP (or SSE) on a free port of 127.0.0.1."""
    environ = {**os.environ, **env}
    if markers is not None:
        environ["DEMO_MARKERS"] = str(markers)
    process = subprocess.Popen(
        [sys.executable, str(DEMO), kind], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environ
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("PORT "), (line, process.stderr.read() if process.stderr else "")
        yield HttpDemo(process, int(line.split()[1]), kind)
    finally:
        process.kill()
        process.wait(10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


class HttpDemo:
    """A running HTTP demo server."""

    def __init__(self, process: subprocess.Popen[str], port: int, kind: str) -> None:
        self.process = process
        self.port = port
        self.url = f"http://127.0.0.1:{port}/{'sse' if kind == 'sse' else 'mcp'}"

    def toolset(self, **options: Any) -> MCPToolset:
        return MCPToolset.http(self.url, **options)


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie, exited but not reaped, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pid: int, seconds: float = 10.0) -> bool:
    """Wait until process ``pid`` is gone; whether it went in time (blocking: for tests with no event loop)."""
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


async def gone(pid: int, seconds: float = 10.0) -> bool:
    """Wait until process ``pid`` is gone, letting the event loop run meanwhile; whether it went in time."""
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


def started_pids(markers: Path) -> list[int]:
    """The process ids of every demo server started with ``markers``."""
    return sorted(int(path.name.removeprefix("started-")) for path in markers.glob("started-*"))

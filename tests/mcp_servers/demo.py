"""A real MCP server for typedagent's tests, written with the ``mcp`` package's server API (``MCPServer``).

Run as ``demo.py stdio`` (the test suite starts it as a child process) or ``demo.py http`` / ``demo.py sse`` (it
binds a free port on 127.0.0.1 and prints ``PORT <n>`` on stdout once it serves). With ``DEMO_MARKERS`` set to a
folder, it writes a file there when a call is cancelled and when it starts, so tests see what happened inside.
"""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import sys
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from pydantic import BaseModel

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
MARKERS = os.environ.get("DEMO_MARKERS")


def mark(name: str, text: str = "") -> None:
    """Leave a file for the test to find."""
    if MARKERS:
        Path(MARKERS, name).write_text(text)


class DemoServer(MCPServer):
    """An ``MCPServer`` that leaves a line in the ``listings`` marker each time a client lists its tools."""

    async def list_tools(self) -> Any:
        count_listing()
        return await super().list_tools()


def count_listing() -> None:
    """Add a line to the ``listings`` marker."""
    if MARKERS:
        with Path(MARKERS, "listings").open("a") as listings:
            listings.write(f"{os.getpid()}\n")


server = DemoServer(os.environ.get("DEMO_NAME", "demo"), version="1.0", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return text


@server.tool()
def picture() -> Image:
    """A 1x1 PNG image."""
    return Image(data=PNG, format="png")


class Weather(BaseModel):
    city: str
    temp_c: float


@server.tool()
def weather(city: str) -> Weather:
    """Structured output: the weather in a city."""
    return Weather(city=city, temp_c=21.5)


@server.tool()
def fail(reason: str) -> str:
    """Always fails, with the reason given."""
    raise ToolError(f"failed on purpose: {reason}")


@server.tool()
def mixed() -> CallToolResult:
    """Text, an image, a text resource, a PDF resource, a resource link and audio, in one result."""
    return CallToolResult(
        content=[
            TextContent(text="here is everything"),
            ImageContent(data=base64.b64encode(PNG).decode(), mime_type="image/png"),
            EmbeddedResource(
                resource=TextResourceContents(uri="file:///notes.txt", mime_type="text/plain", text="the notes")
            ),
            EmbeddedResource(
                resource=BlobResourceContents(
                    uri="file:///report.pdf", mime_type="application/pdf", blob=base64.b64encode(PDF).decode()
                )
            ),
            ResourceLink(name="manual", uri="https://example.com/manual", mime_type="text/html"),
            AudioContent(data=base64.b64encode(b"RIFF....").decode(), mime_type="audio/wav"),
        ]
    )


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer; a cancelled call leaves a marker."""
    mark("slow-started", str(seconds))
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        mark("cancelled", str(seconds))
        raise
    return f"slept {seconds}"


@server.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Add a tool called ``name`` and tell clients the tool list changed."""

    def added() -> str:
        return f"I am {name}"

    server.add_tool(added, name=name, description="A tool added while the server ran.")
    await ctx.info(f"adding {name}")
    await ctx.notify_tools_changed()
    await ctx.session.send_tool_list_changed()
    return f"added {name}"


@server.tool()
def refuse() -> str:
    """Answers with a JSON-RPC error instead of a result."""
    raise MCPError(-32050, "this server refuses on purpose")


@server.tool()
def off_schema() -> Annotated[CallToolResult, Weather]:
    """Declares the Weather output schema, then sends structured content that does not fit it."""
    return CallToolResult(content=[TextContent(text="{}")], structured_content={"city": 3})


@server.tool()
def crash() -> str:
    """The process exits at once, mid-call."""
    sys.stderr.write("demo: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of an HTTP request header (empty over stdio)."""
    headers = ctx.headers or {}
    return headers.get(name.lower(), "")


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


def serve_http(kind: str) -> None:
    """Serve on a free port of 127.0.0.1 (bound here, so no other process can take it), printing it."""
    import uvicorn

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    app = server.sse_app(host="127.0.0.1") if kind == "sse" else server.streamable_http_app(host="127.0.0.1")
    userver = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))

    async def run() -> None:
        task = asyncio.create_task(userver.serve(sockets=[sock]))
        while not userver.started and not task.done():  # noqa: ASYNC110 - uvicorn offers no event to await
            await asyncio.sleep(0.01)
        print(f"PORT {sock.getsockname()[1]}", flush=True)
        await task

    asyncio.run(run())


if __name__ == "__main__":
    mark(f"started-{os.getpid()}")
    if os.environ.get("DEMO_FAIL_AT_START"):
        sys.stderr.write("demo: cannot start: the database is locked\n")
        sys.exit(2)
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        serve_http(sys.argv[1])

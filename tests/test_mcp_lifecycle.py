"""When MCP servers start, are shared and stop (issue 29); what a server that fails or dies does to an execution."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (the dev extra brings it)")

from mcp_support import alive, gone, http_demo, started_pids, stdio_demo, wait_gone
from support import GOOD, triage_agent

from typedagent import (
    AgentErrorCode,
    ExecuteCallbacks,
    RunInput,
    ToolsetErrorContext,
    execute_agent,
    execute_agent_sync,
    execute_many,
    execute_many_sync,
)
from typedagent.mcp import MCPToolset
from typedagent.testing import FunctionClient, ScriptedClient, output_call, tool_call


def _pid_of(result: Any) -> int:
    """The pid the demo's ``pid`` tool answered in the execution's first tool result."""
    return int(result.metadata.messages[2]["content"][0]["content"])


def _pid_script() -> list[Any]:
    return [tool_call("pid", {}), output_call(GOOD)]


async def test_mcp_server_starts_per_execution_and_stops_after(tmp_path: Path) -> None:
    """Without connected(), each execution starts the server and stops it when it ends: no process is left."""
    agent = triage_agent(helpers=[stdio_demo(tmp_path)])
    first = await execute_agent(agent, "go", client=ScriptedClient(_pid_script()))
    assert first.ok
    assert await gone(_pid_of(first))
    second = await execute_agent(agent, "go", client=ScriptedClient(_pid_script()))
    assert await gone(_pid_of(second))
    assert _pid_of(first) != _pid_of(second)
    assert started_pids(tmp_path) == sorted([_pid_of(first), _pid_of(second)])


async def test_mcp_connected_holds_one_server_for_the_block(tmp_path: Path) -> None:
    """Inside agent.connected() every execution uses one server, which stops cleanly when the block ends."""
    agent = triage_agent(helpers=[stdio_demo(tmp_path)])
    async with agent.connected() as tools:
        assert "pid" in [t["name"] for t in tools]
        assert tools[-1]["name"] == "final_output"
        results = [await execute_agent(agent, "go", client=ScriptedClient(_pid_script())) for _ in range(3)]
        pids = {_pid_of(result) for result in results}
        assert len(pids) == 1
        (pid,) = pids
        assert alive(pid)
    assert await gone(pid)
    assert started_pids(tmp_path) == [pid]


def _listings(markers: Path) -> int:
    """How many times clients listed the demo server's tools (the server counts them in a marker file)."""
    listings = markers / "listings"
    return len(listings.read_text().splitlines()) if listings.exists() else 0


async def test_mcp_tool_list_is_read_once_and_again_when_the_server_says_it_changed(tmp_path: Path) -> None:
    """The executions sharing a connection do not list the tools again; a tools/list_changed notice does."""
    agent = triage_agent(helpers=[stdio_demo(tmp_path)])
    async with agent.connected():
        assert _listings(tmp_path) == 1
        for _ in range(3):
            client = ScriptedClient([tool_call("echo", {"text": "x"}), output_call(GOOD)])
            assert (await execute_agent(agent, "go", client=client)).ok
        assert _listings(tmp_path) == 1
        client = ScriptedClient([tool_call("add_tool", {"name": "fresh"}), tool_call("fresh", {}), output_call(GOOD)])
        assert (await execute_agent(agent, "go", client=client)).ok
        assert _listings(tmp_path) == 2
        assert "fresh" in [t["name"] for t in client.requests[1]["tools"]]


async def test_mcp_toolset_is_named_as_the_server_names_itself(tmp_path: Path) -> None:
    """Without name=, tool events and errors use the name the server gives itself; name= overrides it."""
    events: list[Any] = []
    callbacks = ExecuteCallbacks(
        on_tool_call=lambda s, e: events.append(e), on_tool_result=lambda s, e: events.append(e)
    )
    for toolset in (stdio_demo(env={"DEMO_NAME": "inventory"}), stdio_demo(env={"DEMO_NAME": "inventory"}, name="x")):
        client = ScriptedClient([tool_call("crash", {}), output_call(GOOD)])
        result = await execute_agent(triage_agent(helpers=[toolset]), "go", client=client, callbacks=callbacks)
        assert not result.ok
        assert result.error.context == ToolsetErrorContext(toolset=toolset.name or "inventory", attempt=1, iteration=1)
    assert [(type(e).__name__, e.server) for e in events] == [
        ("ToolCall", "inventory"),
        ("ToolResult", "inventory"),
        ("ToolCall", "x"),
        ("ToolResult", "x"),
    ]


async def test_mcp_execute_many_shares_one_server_among_concurrent_executions(tmp_path: Path) -> None:
    """Concurrent executions of execute_many share the server the first one started; it stops after the last."""

    async def answer(request: Any) -> Any:
        await asyncio.sleep(0.05)
        return tool_call("pid", {}) if len(request["messages"]) == 1 else output_call(GOOD)

    agent = triage_agent(helpers=[stdio_demo(tmp_path)])
    inputs = [RunInput(f"ticket {n}", key=str(n)) for n in range(8)]
    results = [item async for item in execute_many(agent, inputs, client=FunctionClient(answer), concurrency=8)]
    assert all(item.result.ok for item in results)
    pids = {_pid_of(item.result) for item in results}
    assert len(pids) == 1
    assert started_pids(tmp_path) == sorted(pids)
    assert await gone(pids.pop())


async def test_mcp_server_that_cannot_start_is_a_clear_failure() -> None:
    """A missing program is TOOLSET_ERROR at once, saying to check the command; nothing is sent to the model."""
    client = ScriptedClient([output_call(GOOD)])
    agent = triage_agent(helpers=[MCPToolset.stdio("/nonexistent/mcp-server", ["--flag"])])
    started = time.monotonic()
    result = await execute_agent(agent, "go", client=client)
    assert time.monotonic() - started < 5
    assert not result.ok
    assert result.error.code is AgentErrorCode.TOOLSET_ERROR
    assert result.error.context == ToolsetErrorContext(toolset="/nonexistent/mcp-server --flag", attempt=0, iteration=0)
    assert result.error.message == (
        "MCP server '/nonexistent/mcp-server --flag' could not be connected: could not start "
        "'/nonexistent/mcp-server' (No such file or directory): check that it is installed and on PATH (or give its "
        "full path), and that cwd= exists."
    )
    assert client.requests == []


async def test_mcp_server_exiting_at_start_quotes_its_stderr(tmp_path: Path) -> None:
    """A server that exits before answering fails the execution with the end of what it wrote to stderr."""
    agent = triage_agent(helpers=[stdio_demo(tmp_path, env={"DEMO_FAIL_AT_START": "1"}, name="inventory")])
    result = await execute_agent(agent, "go", client=ScriptedClient([output_call(GOOD)]))
    assert not result.ok
    assert result.error.code is AgentErrorCode.TOOLSET_ERROR
    assert result.error.message == (
        "MCP server 'inventory' could not be connected: the server closed the connection (its process exited?). "
        "The end of its stderr:\ndemo: cannot start: the database is locked"
    )
    (pid,) = started_pids(tmp_path)
    assert await gone(pid)


async def test_mcp_server_that_never_answers_times_out_and_is_stopped(tmp_path: Path) -> None:
    """A process that never speaks MCP fails the execution after connect_timeout_s, and is killed."""
    script = tmp_path / "silent.py"
    script.write_text(
        "import os, pathlib, sys, time\npathlib.Path(sys.argv[1]).write_text(str(os.getpid()))\ntime.sleep(60)\n"
    )
    pid_file = tmp_path / "pid"
    agent = triage_agent(
        helpers=[MCPToolset.stdio(sys.executable, [str(script), str(pid_file)], connect_timeout_s=1.5)]
    )
    started = time.monotonic()
    result = await execute_agent(agent, "go", client=ScriptedClient([output_call(GOOD)]))
    assert time.monotonic() - started < 10
    assert not result.ok
    assert result.error.code is AgentErrorCode.TOOLSET_ERROR
    assert "could not be connected: it did not finish connecting within 1.5 s (raise connect_timeout_s=" in (
        result.error.message
    )
    assert await gone(int(pid_file.read_text()))


async def test_mcp_server_dying_mid_run_fails_the_call_then_the_execution(tmp_path: Path) -> None:
    """A crash mid-call is a tool error the model sees, then TOOLSET_ERROR quoting stderr; never a hang."""
    agent = triage_agent(helpers=[stdio_demo(tmp_path)])
    client = ScriptedClient([tool_call("crash", {}), output_call(GOOD)])
    started = time.monotonic()
    result = await execute_agent(agent, "go", client=client)
    assert time.monotonic() - started < 15
    assert not result.ok
    assert result.error.code is AgentErrorCode.TOOLSET_ERROR
    assert result.error.context == ToolsetErrorContext(toolset="demo", attempt=1, iteration=1)
    lost = "the server closed the connection (its process exited?). The end of its stderr:\ndemo: crashing on purpose"
    assert result.error.message == f"The connection to MCP server 'demo' was lost: {lost}"
    assert result.metadata.messages[2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01_001",
            "content": "Error: the connection to MCP server 'demo' was lost during the call, which may or may not have "
            f"run: {lost}",
            "is_error": True,
        }
    ]
    assert len(client.requests) == 1
    (pid,) = started_pids(tmp_path)
    assert await gone(pid)
    again = await execute_agent(agent, "go", client=ScriptedClient(_pid_script()))
    assert again.ok  # the next execution starts the server afresh


async def test_mcp_cancelled_execution_stops_its_server(tmp_path: Path) -> None:
    """Cancelling the task running an execution (Ctrl-C in asyncio.run) stops the server it started."""
    agent = triage_agent(helpers=[stdio_demo(tmp_path)])
    client = ScriptedClient([tool_call("slow", {"seconds": 60}), output_call(GOOD)])
    running = asyncio.ensure_future(execute_agent(agent, "go", client=client))
    deadline = time.monotonic() + 30
    while not (tmp_path / "slow-started").exists():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    (pid,) = started_pids(tmp_path)
    assert await gone(pid)


def test_mcp_sync_wrapper_runs_the_tools_and_stops_the_server(tmp_path: Path) -> None:
    """execute_agent_sync runs MCP tools like execute_agent and leaves no server behind."""
    result = execute_agent_sync(
        triage_agent(helpers=[stdio_demo(tmp_path)]), "go", client=ScriptedClient(_pid_script())
    )
    assert result.ok
    assert wait_gone(_pid_of(result))


def test_mcp_execute_many_sync_shares_one_server_and_stops_it(tmp_path: Path) -> None:
    """execute_many_sync's concurrent executions share one server, which is stopped when the call returns."""

    def answer(request: Any) -> Any:
        time.sleep(0.05)
        return tool_call("pid", {}) if len(request["messages"]) == 1 else output_call(GOOD)

    agent = triage_agent(helpers=[stdio_demo(tmp_path)])
    inputs = [RunInput(f"ticket {n}", key=str(n)) for n in range(4)]
    results = execute_many_sync(agent, inputs, client=FunctionClient(answer), concurrency=4)
    assert [item.result.ok for item in results] == [True] * 4
    pids = {_pid_of(item.result) for item in results}
    assert started_pids(tmp_path) == sorted(pids)
    assert len(pids) == 1
    assert wait_gone(pids.pop())


def test_mcp_server_exits_when_its_parent_is_killed(tmp_path: Path) -> None:
    """A parent killed with SIGKILL (no cleanup at all) leaves no server: it sees its stdin close, and exits."""
    script = tmp_path / "parent.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import asyncio, sys
            sys.path.insert(0, {str(Path(__file__).parent)!r})
            from mcp_support import stdio_demo
            from support import triage_agent

            async def main():
                agent = triage_agent(helpers=[stdio_demo(__import__("pathlib").Path({str(tmp_path)!r}))])
                async with agent.connected():
                    print("connected", flush=True)
                    await asyncio.sleep(60)

            asyncio.run(main())
            """
        )
    )
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        assert parent.stdout.readline().strip() == "connected"
        (pid,) = started_pids(tmp_path)
        assert alive(pid)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        assert wait_gone(pid)
    finally:
        parent.kill()
        parent.wait(10)
        if parent.stdout is not None:
            parent.stdout.close()


async def test_mcp_http_server_dying_mid_run_fails_the_call_then_the_execution(tmp_path: Path) -> None:
    """An HTTP server that goes away mid-call: the call fails at once (the model sees why), then the execution."""
    with http_demo(tmp_path) as server:
        client = ScriptedClient([tool_call("crash", {}), output_call(GOOD)])
        started = time.monotonic()
        result = await execute_agent(triage_agent(helpers=[server.toolset()]), "go", client=client)
        assert time.monotonic() - started < 15
    assert not result.ok
    assert result.error.code is AgentErrorCode.TOOLSET_ERROR
    assert result.error.message.startswith("The connection to MCP server 'demo' was lost: ")
    content = result.metadata.messages[2]["content"][0]
    assert content["is_error"] is True
    assert content["content"].startswith("Error: the connection to MCP server 'demo' was lost during the call")


async def test_mcp_http_server_not_running_is_a_clear_failure() -> None:
    """A URL nobody answers at fails the execution at once, asking whether the server runs there."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    result = await execute_agent(triage_agent(helpers=[MCPToolset.http(url)]), "go", client=ScriptedClient([]))
    assert not result.ok
    assert result.error.code is AgentErrorCode.TOOLSET_ERROR
    assert result.error.message.startswith(f"MCP server {url!r} could not be connected: cannot connect (")
    assert result.error.message.endswith(f"is the server running at {url}?")


async def test_mcp_sse_server_is_reached_over_sse(tmp_path: Path) -> None:
    """A server that only speaks SSE is reached through the same MCPToolset.http, named as it names itself."""
    servers: list[str | None] = []
    callbacks = ExecuteCallbacks(on_tool_result=lambda s, e: servers.append(e.server))
    with http_demo(tmp_path, kind="sse", DEMO_NAME="legacy") as server:
        client = ScriptedClient([tool_call("echo", {"text": "over sse"}), output_call(GOOD)])
        agent = triage_agent(helpers=[server.toolset()])
        result = await execute_agent(agent, "go", client=client, callbacks=callbacks)
    assert result.ok
    assert servers == ["legacy", None]
    assert result.metadata.messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_01_001", "content": "over sse"}
    ]


def _silent_server(tmp_path: Path, name: str = "silent") -> tuple[list[str], Path]:
    """A process that starts and never speaks MCP; it writes its pid to a file."""
    script = tmp_path / f"{name}.py"
    pid_file = tmp_path / f"{name}.pid"
    script.write_text(
        "import os, pathlib, sys, time\npathlib.Path(sys.argv[1]).write_text(str(os.getpid()))\ntime.sleep(60)\n"
    )
    return [str(script), str(pid_file)], pid_file


async def test_mcp_abort_while_a_server_starts_stops_it(tmp_path: Path) -> None:
    """The abort event set while a server is starting ends the execution within 100 ms and stops the process."""
    args, pid_file = _silent_server(tmp_path)
    agent = triage_agent(helpers=[MCPToolset.stdio(sys.executable, args)])
    abort = asyncio.Event()
    running = asyncio.ensure_future(execute_agent(agent, "go", client=ScriptedClient([]), abort_event=abort))
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    stopped = time.monotonic()
    abort.set()
    result = await running
    assert time.monotonic() - stopped < 0.1
    assert not result.ok
    assert result.error.code is AgentErrorCode.EXECUTION_CANCELLED
    assert await gone(int(pid_file.read_text()))


async def test_mcp_one_toolset_failing_to_start_stops_the_others(tmp_path: Path) -> None:
    """With two toolsets, one that cannot start fails the execution, and the other's server is stopped too."""
    args, pid_file = _silent_server(tmp_path)
    slow = MCPToolset.stdio(sys.executable, args, name="slow")
    missing = MCPToolset.stdio("/nonexistent/mcp-server", name="missing")
    result = await execute_agent(triage_agent(helpers=[slow, missing]), "go", client=ScriptedClient([]))
    assert not result.ok
    assert result.error.code is AgentErrorCode.TOOLSET_ERROR
    assert result.error.context == ToolsetErrorContext(toolset="missing", attempt=0, iteration=0)
    await asyncio.sleep(1.0)  # a process started just before the other failed has written its pid by now
    if pid_file.exists() and pid_file.read_text():  # it may not have got as far as starting
        assert await gone(int(pid_file.read_text()))


async def test_mcp_url_answering_neither_transport_says_what_each_answered(tmp_path: Path) -> None:
    """A URL where neither streamable HTTP nor SSE answers fails with both answers and a hint about the path."""
    with http_demo(tmp_path) as server:
        url = f"http://127.0.0.1:{server.port}/nothing-here"
        result = await execute_agent(triage_agent(helpers=[MCPToolset.http(url)]), "go", client=ScriptedClient([]))
    assert not result.ok
    assert result.error.code is AgentErrorCode.TOOLSET_ERROR
    assert result.error.message == (
        f"MCP server {url!r} could not be connected: it refused streamable HTTP (the server answered with MCP error "
        "-32601: Not Found) and SSE (HTTP 404): check the URL (servers usually answer at /mcp, or /sse for SSE)."
    )

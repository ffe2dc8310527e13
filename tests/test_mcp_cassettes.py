"""Cassettes record MCP-backed runs with their servers and replay them without (issue 29)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (the dev extra brings it)")

from mcp_support import DEMO, http_demo, stdio_demo
from support import GOOD, triage_agent

from typedagent import AgentErrorCode, execute_agent
from typedagent.mcp import MCPToolset
from typedagent.testing import (
    CassetteError,
    RecordingClient,
    ReplayClient,
    ScriptedClient,
    output_call,
    response,
    tool_call,
)


def _script() -> list[Any]:
    return [
        response(tool_call("echo", {"text": "recorded"}), tool_call("picture", {}), tool_call("fail", {"reason": "r"})),
        tool_call("add_tool", {"name": "late"}),
        tool_call("late", {}),
        output_call(GOOD),
    ]


def _gone_server() -> MCPToolset:
    """The same toolset as the recorded one (same command line), whose server cannot start: replay needs none."""
    return MCPToolset.stdio(sys.executable, [str(DEMO), "stdio"], env={"DEMO_FAIL_AT_START": "1"})


async def test_mcp_cassette_records_with_the_server_and_replays_without(tmp_path: Path) -> None:
    """A recorded run replays to the same conversation and output with no server running."""
    path = tmp_path / "mcp.json"
    recorder = RecordingClient(ScriptedClient(_script()), path)
    recorded = await execute_agent(triage_agent(helpers=[stdio_demo()]), "go", client=recorder)
    assert recorded.ok
    data = json.loads(path.read_text())
    (label,) = data["toolsets"]
    assert label == f"{sys.executable} {DEMO} stdio"
    log = data["toolsets"][label]
    assert [next(iter(event)) if "call" in event else ("tools" if "tools" in event else "?") for event in log] == [
        "tools",
        "call",
        "call",
        "call",
        "call",
        "tools",
        "call",
    ]
    # The three calls of the first response run at once: the log holds them in the order they finished.
    assert sorted(event["call"]["name"] for event in log[1:4]) == ["echo", "fail", "picture"]
    assert next(event["call"] for event in log[1:4] if event["call"]["name"] == "fail") == {
        "name": "fail",
        "input": {"reason": "r"},
        "content": "Error executing tool fail: failed on purpose: r",
        "is_error": True,
    }

    replay = ReplayClient(path)
    replayed = await execute_agent(triage_agent(helpers=[_gone_server()]), "go", client=replay)
    assert replayed.ok, replayed
    assert replayed.output == recorded.output
    assert replayed.metadata.messages == recorded.metadata.messages
    replay.assert_all_played()


async def test_mcp_replay_of_a_call_not_recorded_fails_with_a_cassette_error(tmp_path: Path) -> None:
    """A call the cassette has no recording of (other input) stops the replay with a CassetteError naming it."""
    path = tmp_path / "mcp.json"
    recorder = RecordingClient(ScriptedClient([tool_call("echo", {"text": "a"}), output_call(GOOD)]), path)
    assert (await execute_agent(triage_agent(helpers=[stdio_demo()]), "go", client=recorder)).ok
    drifted = json.loads(path.read_text())
    drifted["calls"][0]["response"]["content"][0]["input"] = {"text": "b"}
    path.write_text(json.dumps(drifted))
    with pytest.raises(CassetteError, match=r"was called as echo\(\{\"text\": \"b\"\}\), which .* has no unused"):
        await execute_agent(triage_agent(helpers=[_gone_server()]), "go", client=ReplayClient(path))


async def test_mcp_replay_of_a_toolset_not_recorded_fails_with_a_cassette_error(tmp_path: Path) -> None:
    """A toolset the cassette did not record is a CassetteError, naming the toolsets it holds."""
    path = tmp_path / "plain.json"
    recorder = RecordingClient(ScriptedClient([output_call(GOOD)]), path)
    assert (await execute_agent(triage_agent(), "go", client=recorder)).ok
    with pytest.raises(CassetteError, match="has no recording of toolset 'other'"):
        await execute_agent(
            triage_agent(helpers=[MCPToolset.http("http://x/mcp", name="other")]), "go", client=ReplayClient(path)
        )


async def test_mcp_cassette_replays_a_server_that_failed(tmp_path: Path) -> None:
    """A server that could not start, or died mid-run, fails the replay the same way."""
    path = tmp_path / "dead.json"
    recorder = RecordingClient(ScriptedClient([tool_call("crash", {}), output_call(GOOD)]), path)
    recorded = await execute_agent(triage_agent(helpers=[stdio_demo()]), "go", client=recorder)
    assert recorded.error.code is AgentErrorCode.TOOLSET_ERROR
    replayed = await execute_agent(triage_agent(helpers=[_gone_server()]), "go", client=ReplayClient(path))
    assert not replayed.ok
    assert (replayed.error.code, replayed.error.message) == (recorded.error.code, recorded.error.message)
    assert replayed.metadata.messages == recorded.metadata.messages

    unavailable = tmp_path / "unavailable.json"
    missing = MCPToolset.stdio("/nonexistent/server")
    first = await execute_agent(
        triage_agent(helpers=[missing]), "go", client=RecordingClient(ScriptedClient([]), unavailable)
    )
    again = await execute_agent(triage_agent(helpers=[missing]), "go", client=ReplayClient(unavailable))
    assert (again.error.code, again.error.message) == (first.error.code, first.error.message)


async def test_mcp_cassette_keeps_no_credentials_from_headers(tmp_path: Path) -> None:
    """A bearer token in a tool result is redacted in the cassette, like every other credential."""
    path = tmp_path / "secret.json"
    with http_demo() as server:
        toolset = server.toolset(headers={"Authorization": "Bearer sk-ant-api03-secret"})
        script = [tool_call("header", {"name": "Authorization"}), output_call(GOOD)]
        recorded = await execute_agent(
            triage_agent(helpers=[toolset]), "go", client=RecordingClient(ScriptedClient(script), path)
        )
    assert recorded.ok
    text = path.read_text()
    assert "sk-ant-api03-secret" not in text
    assert "[REDACTED]" in text

"""Calling an MCP server's tools (issue 29): results as tool-result content, input checks, options, time limits."""

from __future__ import annotations

import asyncio
import base64
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (the dev extra brings it)")

from mcp_support import HttpDemo, http_demo, stdio_demo
from support import GOOD, assert_api_valid, triage_agent

from typedagent import (
    AgentDefinitionError,
    AgentErrorCode,
    Approve,
    Deny,
    ExecuteCallbacks,
    ExecutePaused,
    ExecutionLimits,
    PausedState,
    PendingCall,
    ToolCall,
    ToolResult,
    ToolsetErrorContext,
    ValidationConfig,
    execute_agent,
    tool,
)
from typedagent._run.caching import PAD_FROM, PADDING_HEADER, estimated_tokens
from typedagent.testing import FunctionClient, MessagesRequest, ScriptedClient, output_call, response, tool_call

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
PDF = base64.b64encode(b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n").decode()


@pytest.fixture(scope="module")
def markers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("markers")


@pytest.fixture(scope="module")
def server(markers: Path) -> Iterator[HttpDemo]:
    """One demo server over streamable HTTP for the module (each test connects to it afresh)."""
    with http_demo(markers) as demo:
        yield demo


def _tool_results(result: Any, index: int = 2) -> list[dict[str, Any]]:
    message = result.metadata.messages[index]
    assert message["role"] == "user"
    return list(message["content"])


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_mcp_results_become_tool_result_content(transport: str, server: HttpDemo) -> None:
    """Text, images, structured content, embedded resources and error results reach the model as they came."""
    toolset = stdio_demo() if transport == "stdio" else server.toolset()
    client = ScriptedClient(
        [
            response(
                tool_call("echo", {"text": "hello"}),
                tool_call("picture", {}),
                tool_call("weather", {"city": "Oslo"}),
                tool_call("fail", {"reason": "no"}),
                tool_call("mixed", {}),
            ),
            output_call(GOOD),
        ]
    )
    result = await execute_agent(triage_agent(helpers=[toolset]), "go", client=client)
    assert result.ok, result
    assert_api_valid(result, client)
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    assert _tool_results(result) == [
        {"type": "tool_result", "tool_use_id": "toolu_01_001", "content": "hello"},
        {"type": "tool_result", "tool_use_id": "toolu_01_002", "content": [image]},
        {"type": "tool_result", "tool_use_id": "toolu_01_003", "content": '{"city":"Oslo","temp_c":21.5}'},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01_004",
            "content": "Error executing tool fail: failed on purpose: no",
            "is_error": True,
        },
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01_005",
            "content": [
                {"type": "text", "text": "here is everything"},
                image,
                {
                    "type": "document",
                    "source": {"type": "text", "media_type": "text/plain", "data": "the notes"},
                    "title": "file:///notes.txt",
                },
                {
                    "type": "document",
                    "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
                    "title": "file:///report.pdf",
                },
                {"type": "text", "text": "[resource link: manual <https://example.com/manual> (text/html)]"},
                {"type": "text", "text": "[audio (audio/wav, 8 bytes): the Messages API takes no audio]"},
            ],
        },
    ]
    tools = client.requests[0]["tools"]
    assert [t["name"] for t in tools] == [
        "echo",
        "picture",
        "weather",
        "fail",
        "mixed",
        "slow",
        "add_tool",
        "refuse",
        "off_schema",
        "crash",
        "header",
        "pid",
        "final_output",
    ]
    assert tools[0] == {
        "name": "echo",
        "description": "Say the text back.",
        "input_schema": {
            "properties": {"text": {"title": "Text", "type": "string"}},
            "required": ["text"],
            "title": "echoArguments",
            "type": "object",
        },
    }


async def test_mcp_input_is_checked_against_the_schema_before_the_call(server: HttpDemo) -> None:
    """Input that does not fit the tool's input schema is answered with the problems; the server is not called."""
    client = ScriptedClient(
        [
            response(tool_call("echo", {"text": 5}), tool_call("weather", {}), tool_call("slow", {"seconds": "x"})),
            output_call(GOOD),
        ]
    )
    result = await execute_agent(triage_agent(helpers=[server.toolset()]), "go", client=client)
    assert result.ok
    assert [(r["content"], r.get("is_error")) for r in _tool_results(result)] == [
        (
            "Error: invalid input for tool 'echo':\n- text: 5 is not of type 'string'\n"
            "Fix the input and call the tool again.",
            True,
        ),
        (
            "Error: invalid input for tool 'weather':\n- (root): 'city' is a required property\n"
            "Fix the input and call the tool again.",
            True,
        ),
        (
            "Error: invalid input for tool 'slow':\n- seconds: 'x' is not of type 'number'\n"
            "Fix the input and call the tool again.",
            True,
        ),
    ]


async def test_mcp_protocol_errors_and_off_schema_results_are_tool_errors(server: HttpDemo) -> None:
    """A call the server refuses, or whose result breaks its own output schema, is a tool error; the server stays.

    The refusal is a JSON-RPC error instead of a result; the server checks its own output schema.
    """
    client = ScriptedClient(
        [
            response(tool_call("refuse", {}), tool_call("off_schema", {})),
            tool_call("echo", {"text": "still here"}),
            output_call(GOOD),
        ]
    )
    result = await execute_agent(triage_agent(helpers=[server.toolset()]), "go", client=client)
    assert result.ok
    refused, off_schema = _tool_results(result)
    assert (refused["content"], refused["is_error"]) == (
        "Error: MCP server 'demo' refused the call: this server refuses on purpose",
        True,
    )
    assert (off_schema["content"], off_schema["is_error"]) == ("Error executing tool off_schema", True)
    assert _tool_results(result, 4)[0]["content"] == "still here"


async def test_mcp_prefix_allow_and_deny_shape_the_tools(server: HttpDemo) -> None:
    """prefix= names the tools, allow= and deny= (the server's own names) pick them; a call reaches the server."""
    toolset = server.toolset(prefix="demo", allow=["echo", "weather", "fail"], deny=["fail"])
    client = ScriptedClient([tool_call("demo_echo", {"text": "through the prefix"}), output_call(GOOD)])
    result = await execute_agent(triage_agent(helpers=[toolset]), "go", client=client)
    assert result.ok
    assert [t["name"] for t in client.requests[0]["tools"]] == ["demo_echo", "demo_weather", "final_output"]
    assert _tool_results(result) == [
        {"type": "tool_result", "tool_use_id": "toolu_01_001", "content": "through the prefix"}
    ]


async def test_mcp_allow_naming_a_tool_the_server_lacks_fails_before_any_model_call(server: HttpDemo) -> None:
    """A typo in allow= (or deny=) is TOOLSET_ERROR naming it and the server's tools; no request is sent."""
    client = ScriptedClient([output_call(GOOD)])
    result = await execute_agent(triage_agent(helpers=[server.toolset(allow=["ecco"])]), "go", client=client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.TOOLSET_ERROR
    assert result.error.context == ToolsetErrorContext(toolset="demo", attempt=0, iteration=0)
    assert "allow= or deny= names 'ecco', which the server has no tool called" in result.error.message
    assert "Its tools: echo, picture, weather" in result.error.message
    assert client.requests == []


async def test_mcp_tool_named_like_a_helper_is_a_clear_error(server: HttpDemo) -> None:
    """A server tool named like a helper fails the execution and connected(), saying to set a prefix."""

    @tool
    def echo(text: str) -> str:
        """The agent's own echo."""
        return text

    agent = triage_agent(helpers=[echo, server.toolset()])
    client = ScriptedClient([output_call(GOOD)])
    result = await execute_agent(agent, "go", client=client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.TOOLSET_ERROR
    assert result.error.message.startswith(
        "Tool 'echo' of toolset 'demo' has the name of another tool of the agent: give the toolset a prefix"
    )
    assert client.requests == []
    with pytest.raises(AgentDefinitionError, match="give the toolset a prefix"):
        async with agent.connected():
            pass
    prefixed = triage_agent(helpers=[echo, server.toolset(prefix="mcp")])
    async with prefixed.connected() as tools:
        assert [t["name"] for t in tools][:3] == ["echo", "mcp_echo", "mcp_picture"]


async def test_mcp_call_past_timeout_s_is_cancelled_and_reported(server: HttpDemo, markers: Path) -> None:
    """A call past the toolset's timeout_s is cancelled on the server, and the model is told it timed out."""
    (markers / "cancelled").unlink(missing_ok=True)
    client = ScriptedClient([tool_call("slow", {"seconds": 30}), output_call(GOOD)])
    durations: list[float] = []
    callbacks = ExecuteCallbacks(on_tool_result=lambda s, e: durations.append(e.duration_ms))
    agent = triage_agent(helpers=[server.toolset(timeout_s=0.5)])
    async with agent.connected():  # connecting is not what this measures
        result = await execute_agent(agent, "go", client=client, callbacks=callbacks)
    assert result.ok
    assert 500 <= durations[0] < 600, durations  # cancelled within 100 ms of its limit
    assert _tool_results(result) == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01_001",
            "content": "Error: tool 'slow' (MCP server 'demo') timed out after 0.5 s; the call was cancelled. "
            "Try again with a smaller request, or go on without it.",
            "is_error": True,
        }
    ]
    await _eventually(lambda: (markers / "cancelled").exists())
    assert (markers / "cancelled").read_text() == "30.0"


async def _eventually(check: Any, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "never happened"
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("stop", ["abort", "deadline"])
async def test_mcp_abort_and_deadline_cancel_the_call_in_flight(stop: str, server: HttpDemo, markers: Path) -> None:
    """The abort event (or the deadline) ends the execution within 100 ms and cancels the call on the server."""
    for name in ("cancelled", "slow-started"):
        (markers / name).unlink(missing_ok=True)
    agent = triage_agent(helpers=[server.toolset()])
    abort = threading.Event()
    limits = ExecutionLimits(timeout_s=2.0) if stop == "deadline" else None
    client = ScriptedClient([tool_call("slow", {"seconds": 30}), output_call(GOOD)])
    async with agent.connected():  # connecting is not what this measures
        stopped = time.monotonic() + 2.0  # the deadline (the execution's clock starts a little later)
        running = asyncio.ensure_future(execute_agent(agent, "go", client=client, abort_event=abort, limits=limits))
        await _eventually(lambda: (markers / "slow-started").exists())
        if stop == "abort":
            stopped = time.monotonic()
            abort.set()
        result = await running
        took = time.monotonic() - stopped
    assert not result.ok
    expected = AgentErrorCode.EXECUTION_CANCELLED if stop == "abort" else AgentErrorCode.TIMEOUT
    assert result.error.code is expected
    assert took < 0.1, took
    await _eventually(lambda: (markers / "cancelled").exists())
    assert _tool_results(result) == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01_001",
            "content": "Error: abandoned: the execution stopped (its abort event or deadline) while this tool was "
            "running. It may still finish in the background, but its result is discarded.",
            "is_error": True,
        }
    ]


async def test_mcp_changed_tool_list_reaches_the_next_request() -> None:
    """Over stdio (one ordered pipe) the request after the call that changed the tools offers the new list."""
    client = ScriptedClient([tool_call("add_tool", {"name": "fresh"}), tool_call("fresh", {}), output_call(GOOD)])
    result = await execute_agent(triage_agent(helpers=[stdio_demo()]), "go", client=client)
    assert result.ok
    names = [[t["name"] for t in request["tools"]] for request in client.requests]
    assert "fresh" not in names[0]
    assert names[1] == [*names[0][:-1], "fresh", "final_output"]
    assert names[2] == names[1]
    assert [r["content"] for r in _tool_results(result, 4)] == ["I am fresh"]


async def test_mcp_changed_tool_list_over_http_reaches_a_later_request(server: HttpDemo) -> None:
    """Over HTTP the change notice comes on its own stream, so a request soon after offers the new tool."""

    def model(request: MessagesRequest) -> Any:
        offered = [t["name"] for t in request["tools"]]
        turns = len(request["messages"])
        if turns == 1:
            return tool_call("add_tool", {"name": "later"})
        if "later" in offered and not any("I am later" in str(m["content"]) for m in request["messages"]):
            return tool_call("later", {})
        if "later" in offered:
            return output_call(GOOD)
        assert turns < 40, "the changed tool list never arrived"
        return tool_call("echo", {"text": "wait"})

    client = FunctionClient(model)
    agent = triage_agent(helpers=[server.toolset()], validation=ValidationConfig(max_iterations_per_attempt=40))
    result = await execute_agent(agent, "go", client=client)
    assert result.ok, result
    assert "later" not in [t["name"] for t in client.requests[0]["tools"]]
    assert "I am later" in str(result.metadata.messages[-3]["content"])


async def test_mcp_tool_events_and_stream_events_carry_the_server_name(server: HttpDemo) -> None:
    """on_tool_call / on_tool_result (and stream_agent's tool events) name the toolset; the agent's own do not."""
    from typedagent import ToolCallFinished, ToolCallStarted, stream_agent

    events: list[Any] = []
    callbacks = ExecuteCallbacks(
        on_tool_call=lambda s, e: events.append(e), on_tool_result=lambda s, e: events.append(e)
    )
    agent = triage_agent(helpers=[server.toolset(name="files", prefix="fs")])
    client = ScriptedClient([tool_call("fs_echo", {"text": "x"}), output_call(GOOD)])
    async with stream_agent(agent, "go", client=client, callbacks=callbacks) as run:
        streamed = [e for e in [event async for event in run] if isinstance(e, ToolCallStarted | ToolCallFinished)]
    calls = [e for e in events if isinstance(e, ToolCall)]
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [(e.name, e.kind, e.server) for e in calls] == [
        ("fs_echo", "helper", "files"),
        ("final_output", "output", None),
    ]
    assert [(e.name, e.content, e.server) for e in results] == [
        ("fs_echo", "x", "files"),
        ("final_output", "Output accepted.", None),
    ]
    assert [(type(e).__name__, e.name, e.server) for e in streamed] == [
        ("ToolCallStarted", "fs_echo", "files"),
        ("ToolCallFinished", "fs_echo", "files"),
        ("ToolCallStarted", "final_output", None),
        ("ToolCallFinished", "final_output", None),
    ]


async def test_mcp_execute_tool_span_names_the_server(server: HttpDemo, captured_spans: Any) -> None:
    """Each MCP tool call is an execute_tool span with the server's name; a helper's span has none."""

    @tool
    def local(text: str) -> str:
        """A helper."""
        return text

    agent = triage_agent(helpers=[local, server.toolset()])
    client = ScriptedClient(
        [response(tool_call("echo", {"text": "x"}), tool_call("local", {"text": "y"})), output_call(GOOD)]
    )
    assert (await execute_agent(agent, "go", client=client)).ok
    spans = {
        s.name: dict(s.attributes or {})
        for s in captured_spans.get_finished_spans()
        if s.name.startswith("execute_tool")
    }
    assert spans["execute_tool echo"]["typedagent.tool.server"] == "demo"
    assert spans["execute_tool echo"]["gen_ai.tool.type"] == "extension"
    assert spans["execute_tool echo"]["typedagent.tool.kind"] == "helper"
    assert "typedagent.tool.server" not in spans["execute_tool local"]
    assert spans["execute_tool local"]["gen_ai.tool.type"] == "function"


async def test_mcp_calls_count_as_tool_calls_for_the_limit(server: HttpDemo) -> None:
    """max_tool_calls counts MCP calls as it counts helper calls: a response past it runs none of them."""
    client = ScriptedClient([response(tool_call("echo", {"text": "a"}), tool_call("echo", {"text": "b"}))])
    limits = ExecutionLimits(max_tool_calls=1)
    result = await execute_agent(triage_agent(helpers=[server.toolset()]), "go", client=client, limits=limits)
    assert not result.ok
    assert result.error.code is AgentErrorCode.TOOL_CALL_LIMIT_EXCEEDED


async def test_mcp_http_headers_reach_the_server(server: HttpDemo) -> None:
    """headers= go with every request to the server."""
    toolset = server.toolset(headers={"X-Team": "blue"})
    client = ScriptedClient([tool_call("header", {"name": "X-Team"}), output_call(GOOD)])
    result = await execute_agent(triage_agent(helpers=[toolset]), "go", client=client)
    assert [r["content"] for r in _tool_results(result)] == ["blue"]


async def test_mcp_calls_in_the_cli_progress_name_their_server(server: HttpDemo) -> None:
    """The command line's live progress says which MCP server ran a call; its JSON events carry ``server``."""
    import io
    import json
    import re

    from typedagent._cli._progress import Progress

    agent = triage_agent(helpers=[server.toolset(name="files")])
    human, machine = io.StringIO(), io.StringIO()
    for progress in (Progress(human), Progress(machine, json_events=True)):
        progress.start(agent, label="x", mode="scripted")
        client = ScriptedClient([tool_call("echo", {"text": "hi"}), output_call(GOOD)])
        progress.finish(await execute_agent(agent, "go", client=client, callbacks=progress.callbacks()))
    lines = re.sub(r"\d+\.\d+ (ms|s)\b", "T", human.getvalue()).splitlines()
    assert '    ✓ echo {"text": "hi"} → hi · on MCP server files · T' in lines
    events = [json.loads(line) for line in machine.getvalue().splitlines()]
    echo = [e for e in events if e.get("name") == "echo"]
    assert [(e["event"], e["server"]) for e in echo] == [("tool_call", "files"), ("tool_result", "files")]
    assert all("server" not in e for e in events if e.get("name") == "final_output")


async def test_mcp_tools_requiring_approval_pause_and_resume(server: HttpDemo) -> None:
    """A toolset's tool named in requires_approval waits for a decision like a helper's; the others run at once."""
    agent = triage_agent(helpers=[server.toolset(requires_approval=["echo"])])
    script = [
        response(tool_call("echo", {"text": "rm -rf"}), tool_call("weather", {"city": "Oslo"})),
        output_call(GOOD),
    ]
    client = ScriptedClient(script)
    paused = await execute_agent(agent, "go", client=client, pausable=True)
    assert isinstance(paused, ExecutePaused), paused
    assert [(call.name, call.input, call.kind) for call in paused.pending] == [("echo", {"text": "rm -rf"}, "approval")]
    state = PausedState.from_json(paused.state.to_json())
    results: list[ToolResult] = []
    callbacks = ExecuteCallbacks(on_tool_result=lambda s, e: results.append(e))
    decisions = {"toolu_01_001": Approve(input={"text": "ls"})}
    edited = await execute_agent(agent, resume=state, decisions=decisions, client=client, callbacks=callbacks)
    assert edited.ok, edited
    assert [(e.name, e.content, e.server) for e in results if e.name == "echo"] == [("echo", "ls", "demo")]
    assert _tool_results(edited) == [
        {"type": "tool_result", "tool_use_id": "toolu_01_001", "content": "ls"},
        {"type": "tool_result", "tool_use_id": "toolu_01_002", "content": '{"city":"Oslo","temp_c":21.5}'},
    ]
    client = ScriptedClient(script[1:])
    denied = await execute_agent(agent, resume=state, decisions={"toolu_01_001": Deny("not that")}, client=client)
    assert denied.ok, denied
    assert _tool_results(denied)[0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_01_001",
        "content": "Error: not that",
        "is_error": True,
    }

    asked: list[PendingCall] = []

    def policy(call: PendingCall) -> Approve:
        asked.append(call)
        return Approve()

    inline = await execute_agent(agent, "go", client=ScriptedClient(script), approve=policy)
    assert inline.ok, inline
    assert [call.name for call in asked] == ["echo"]
    assert _tool_results(inline)[0] == {"type": "tool_result", "tool_use_id": "toolu_01_001", "content": "rm -rf"}


async def test_a_toolset_s_tools_count_toward_the_cached_static_prefix() -> None:
    """Own tools + system prompt too short to cache (or pad), the toolset's tools enough: the prefix is marked."""
    probe = ScriptedClient([output_call(GOOD)])
    assert (await execute_agent(triage_agent(helpers=[stdio_demo()]), "hi", client=probe)).ok
    sent = probe.requests[0]
    names = {definition["name"] for definition in triage_agent().tool_params()}
    own = [definition for definition in sent["tools"] if definition["name"] in names]
    assert len(own) < len(sent["tools"])
    least = 1024 * PAD_FROM  # the shortest prefix typedagent marks (padding it up to Sonnet's 1,024 tokens)
    shortfall = least - estimated_tokens(own, sent["system"])
    extra = shortfall * 3.5 - 70  # instructions that leave the agent's own prefix under it
    instructions = "Triage the ticket. " + "x" * int(extra)
    assert (
        estimated_tokens(own, instructions + sent["system"])
        < least
        <= estimated_tokens(sent["tools"], instructions + sent["system"])
    )
    client = ScriptedClient([output_call(GOOD)])
    agent = triage_agent(instructions=instructions, helpers=[stdio_demo()])
    assert (await execute_agent(agent, "hi", client=client)).ok
    system = client.requests[0]["system"]
    assert isinstance(system, list)
    assert system[-1]["cache_control"] == {"type": "ephemeral"}
    assert system[-1]["text"].startswith(instructions)
    written = system[-1]["text"].split("\n\n" + PADDING_HEADER)[0]
    assert estimated_tokens(own, written) < least  # the agent's own tools would not have been marked

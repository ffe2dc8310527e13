"""Server and MCP tool calls are reported to on_tool_call / on_tool_result, and shown by the CLI's progress."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from support import GOOD, handing_over, recorded, run, triage_agent

from typedagent import ExecuteCallbacks, ExecutionState, ToolCall, ToolResult, execute_agent, tool
from typedagent._cli._check import check_agent
from typedagent._cli._progress import Progress
from typedagent._run.server_calls import result_text
from typedagent.server_tools import web_fetch, web_search
from typedagent.testing import (
    FunctionClient,
    ScriptedClient,
    output_call,
    response,
    tool_call,
    web_search_call,
    web_search_result,
)


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"found {query}"


def _recording() -> tuple[list[tuple[str, str, str, str]], ExecuteCallbacks]:
    """``(hook, id, name, kind or content)`` for each tool event, and the callbacks that record them."""
    events: list[tuple[str, str, str, str]] = []

    def on_call(state: ExecutionState, event: ToolCall) -> None:
        events.append(("call", event.id, event.name, event.kind))

    def on_result(state: ExecutionState, event: ToolResult) -> None:
        events.append(("result", event.id, event.name, event.content))

    return events, ExecuteCallbacks(on_tool_call=on_call, on_tool_result=on_result)


async def test_server_tool_calls_and_results_fire_the_tool_hooks_in_block_order() -> None:
    """Each server call fires on_tool_call (kind "server") and its result on_tool_result, before client calls.

    The response is web_search_response.json (recorded web search and advisor blocks, a lookup call).
    """
    events, callbacks = _recording()
    responses = [recorded("web_search_response.json"), output_call(GOOD)]
    client = FunctionClient(lambda request: responses.pop(0))
    result = await run(triage_agent(helpers=[lookup], server_tools=[web_search()]), client, callbacks=callbacks)  # type: ignore[arg-type]
    assert result.ok
    assert events[:5] == [
        ("call", "srvtoolu_01EoSNE7k4dUJyGatASCV5qs", "web_search", "server"),
        (
            "result",
            "srvtoolu_01EoSNE7k4dUJyGatASCV5qs",
            "web_search",
            "2 results: Paris - Wikipedia (https://en.wikipedia.org/wiki/Paris); "
            "Population of Paris | INSEE (https://www.insee.fr/en/statistiques)",
        ),
        ("call", "srvtoolu_01HjzmxWnLPCkNoLmrowWNBc", "advisor", "server"),
        ("result", "srvtoolu_01HjzmxWnLPCkNoLmrowWNBc", "advisor", "Check the city proper, not the metro area."),
        ("call", "toolu_01A09q90qw90lq917835lq9", "lookup", "helper"),
    ]


async def test_every_tool_result_carries_the_kind_of_its_call() -> None:
    """on_tool_result's ToolResult has the kind its ToolCall had: server, mcp, helper, output, submit, unknown."""
    kinds: list[tuple[str, str, str]] = []
    callbacks = ExecuteCallbacks(
        on_tool_call=lambda state, event: kinds.append(("call", event.name, event.kind)),
        on_tool_result=lambda state, event: kinds.append(("result", event.name, event.kind)),
    )
    responses = [recorded("web_search_response.json"), response(tool_call("nope", unknown=True)), output_call(GOOD)]
    client = FunctionClient(lambda request: responses.pop(0))
    result = await run(triage_agent(helpers=[lookup], server_tools=[web_search()]), client, callbacks=callbacks)  # type: ignore[arg-type]
    assert result.ok
    calls = [(name, kind) for hook, name, kind in kinds if hook == "call"]
    results = [(name, kind) for hook, name, kind in kinds if hook == "result"]
    assert (
        results
        == calls
        == [
            ("web_search", "server"),
            ("advisor", "server"),
            ("lookup", "helper"),
            ("nope", "unknown"),
            ("final_output", "output"),
        ]
    )
    mcp: list[tuple[str, str, str]] = []
    mcp_callbacks = ExecuteCallbacks(on_tool_result=lambda state, event: mcp.append((event.id, event.name, event.kind)))
    mcp_responses = [handing_over(recorded("mcp_response.json"), GOOD)]
    agent = triage_agent(model_settings={"mcp_servers": [{"type": "url", "name": "wiki", "url": "https://x.example"}]})
    done = await execute_agent(
        agent, "go", client=FunctionClient(lambda request: mcp_responses.pop(0)), callbacks=mcp_callbacks
    )
    assert done.ok, done
    assert mcp[0] == ("mcptoolu_01SAss3KEwASziHZoMR6HcZU", "ask_question", "mcp")
    assert mcp[1][2] == "output"


async def test_the_result_of_a_paused_call_is_named_after_its_call() -> None:
    """A result opening the continuation of a paused turn reports the name of the call it answers."""
    events, callbacks = _recording()
    paused, resumed = recorded("pause_turn_responses.json")
    responses = [paused, handing_over(resumed, GOOD)]
    result = await run(triage_agent(), FunctionClient(lambda request: responses.pop(0)), callbacks=callbacks)  # type: ignore[arg-type]
    assert result.ok
    paused_call = ("call", "srvtoolu_01RGq5wiPsxhz5Wk3Nj1w2JU", "web_search", "server")
    assert events[2] == paused_call
    assert events[3][:3] == ("result", "srvtoolu_01RGq5wiPsxhz5Wk3Nj1w2JU", "web_search")
    assert events[3][3].startswith("2 results: ")


@pytest.mark.parametrize(
    ("name", "index", "expected"),
    [
        ("web_fetch_response.json", 2, ("fetched https://ai.pydantic.dev: Pydantic AI", False)),
        ("code_execution_response.json", 1, ("exit 0: 37170", False)),
        ("mcp_response.json", 2, None),
        ("advisor_response.json", 3, ("4.\n\n(You're right--it's trivial. Ship it.)", False)),
    ],
)
def test_result_text_describes_each_recorded_result(name: str, index: int, expected: tuple[str, bool] | None) -> None:
    """A recorded result reads as one line: what was fetched, what the command printed, the MCP tool's text."""
    block = recorded(name)["content"][index]
    text, is_error = result_text(block)
    if expected is None:
        assert text == block["content"][0]["text"]
        assert is_error is False
    else:
        assert (text, is_error) == expected


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        (
            {
                "type": "web_search_tool_result",
                "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"},
            },
            ("Error: max_uses_exceeded", True),
        ),
        ({"type": "mcp_tool_result", "is_error": True, "content": "server unreachable"}, ("server unreachable", True)),
        ({"type": "new_tool_result", "content": {"answer": 42}}, ('{"answer": 42}', False)),
        ({"type": "new_tool_result", "content": [1, 2]}, ("[1, 2]", False)),
    ],
)
def test_result_text_of_errors_and_unknown_results(block: dict[str, Any], expected: tuple[str, bool]) -> None:
    """Error results read as their error code and are errors; results of unknown shape read as JSON."""
    assert result_text(block) == expected


async def test_cli_progress_shows_each_web_search() -> None:
    """The live progress lists each web search with its query and results, run by the API, and the searches."""
    stream = io.StringIO()
    progress = Progress(stream)
    agent = triage_agent(server_tools=[web_search(), web_fetch()])
    progress.start(agent, label="x", mode="scripted")
    client = ScriptedClient(
        [
            response(
                web_search_call("vpn drops hourly"),
                web_search_result([("VPN rekey interval", "https://kb.example/vpn")]),
                output_call(GOOD),
                usage={"input_tokens": 10, "output_tokens": 5, "server_tool_use": {"web_search_requests": 1}},
            )
        ]
    )
    result = await execute_agent(agent, "hi", client=client, callbacks=progress.callbacks())
    progress.finish(result)
    shown = re.sub(r"\d+\.\d+ (ms|s)\b", "T", stream.getvalue()).splitlines()
    assert shown[2:5] == [
        "  iteration 1 → tool_use · +15 tokens · 15 so far",
        '    ✓ web_search {"query": "vpn drops hourly"} → 1 result: VPN rekey interval (https://kb.example/vpn) '
        "· by the API",
        '    ✓ final_output {"severity": 2, "summary": "VPN drops hourly"} → Output accepted. · T',
    ]
    assert shown[-3:] == [
        "  1 attempt · 1 iteration · 2 tool calls (web_search, final_output) · T",
        "  15 tokens (input 10 · output 5 · cache write 0 · cache read 0) · 1 web search",
        "  est. cost $0.0101",  # $10 per thousand searches, plus 105 millionths of a dollar of tokens
    ]


def test_check_show_tools_and_checks_accept_server_and_anthropic_defined_tools() -> None:
    """The check finds nothing wrong with server tools (no description or schema of theirs to check)."""
    agent = triage_agent(helpers=[lookup], server_tools=[web_search(max_uses=2), web_fetch()])
    assert check_agent(agent) == []
    shown = json.loads(json.dumps(agent.tool_params()))
    assert [tool["name"] for tool in shown] == ["lookup", "web_search", "web_fetch", "final_output"]

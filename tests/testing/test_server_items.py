"""The toolkit speaks server tools: builders, pause_turn, containers, iterations, beta, record and replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from toolkit_support import PARIS, PROMPT, geo_agent

from typedagent import ExecuteResult, ValidationConfig, execute_agent
from typedagent.server_tools import code_execution, web_fetch, web_search
from typedagent.testing import (
    FakeAnthropicServer,
    FunctionClient,
    RecordingClient,
    ReplayClient,
    ScriptedClient,
    ScriptError,
    assert_valid_conversation,
    code_execution_call,
    code_execution_result,
    conversation,
    conversation_problems,
    format_conversation,
    iteration_usage,
    mcp_tool_call,
    mcp_tool_result,
    output_call,
    pause_turn,
    response,
    script_from_json,
    script_to_json,
    server_tool_call,
    server_tool_result,
    usage,
    web_fetch_call,
    web_fetch_result,
    web_search_call,
    web_search_result,
)

DATA = Path(__file__).resolve().parent.parent / "data"
SEARCH_AGENT = {"server_tools": [web_search(), web_fetch(), code_execution()]}


def _recorded(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def _research_script() -> list[Any]:
    """A search paused after its call, continued with its result, a fetch, a command, then the answer."""
    return [
        pause_turn("Let me search.", web_search_call("Paris population", id="srvtoolu_search")),
        response(
            web_search_result(
                [("Paris - Wikipedia", "https://en.wikipedia.org/wiki/Paris")], tool_use_id="srvtoolu_search"
            ),
            web_fetch_call("https://en.wikipedia.org/wiki/Paris"),
            web_fetch_result("https://en.wikipedia.org/wiki/Paris", "Paris has 2,102,650 residents.", title="Paris"),
            code_execution_call("echo $((2102650 / 1000))"),
            code_execution_result("2102\n"),
            output_call(PARIS),
            container="container_011Caqgq9X3d68B2So2LZGmk",
            usage=usage(
                120,
                40,
                web_search_requests=1,
                web_fetch_requests=1,
                iterations=[iteration_usage("message", 60, 20), iteration_usage("message", 60, 20)],
            ),
        ),
    ]


def _check_research_run(result: ExecuteResult[Any], requests: list[dict[str, Any]]) -> None:
    assert result.ok
    assert result.output == PARIS
    assert_valid_conversation(result)
    assert result.metadata.iterations == 2
    turn = conversation(result)[1]["content"]
    assert [block["type"] for block in turn] == [
        "text",
        "server_tool_use",
        "web_search_tool_result",
        "server_tool_use",
        "web_fetch_tool_result",
        "server_tool_use",
        "bash_code_execution_tool_result",
        "tool_use",
    ]
    assert turn[2]["tool_use_id"] == "srvtoolu_search"
    assert turn[4]["tool_use_id"] == turn[3]["id"]
    assert turn[3]["id"].startswith("srvtoolu_")
    assert turn[6]["tool_use_id"] == turn[5]["id"]
    assert [message["role"] for message in requests[1]["messages"]] == ["user", "assistant"]
    tokens = result.metadata.tokens
    assert (tokens.web_search_requests, tokens.web_fetch_requests) == (1, 1)


async def test_scripted_client_serves_server_tool_calls_pause_turn_and_containers() -> None:
    """Builders make a paused search continued by its result, a fetch and a command, in one assistant turn."""
    client = ScriptedClient(_research_script())
    result = await execute_agent(geo_agent(**SEARCH_AGENT), PROMPT, client=client)
    _check_research_run(result, client.requests)


async def test_function_client_serves_the_same_items() -> None:
    """A FunctionClient returning the same items makes the same run."""
    script = _research_script()
    client = FunctionClient(lambda request: script.pop(0))
    result = await execute_agent(geo_agent(**SEARCH_AGENT), PROMPT, client=client)
    _check_research_run(result, client.requests)


@pytest.mark.parametrize("per_conversation", [False, True])
async def test_fake_server_serves_paused_turns_and_containers(per_conversation: bool) -> None:
    """Over HTTP too, per-conversation scripts included: a paused turn's continuation gets the next response."""
    async with FakeAnthropicServer(_research_script(), per_conversation=per_conversation) as server:
        results = [
            await execute_agent(geo_agent(**SEARCH_AGENT), PROMPT, client=server.client())
            for _ in range(2 if per_conversation else 1)
        ]
    for result in results:
        _check_research_run(result, server.requests)


async def test_fake_server_per_conversation_counts_a_turn_merged_from_paused_responses() -> None:
    """After a paused turn is continued and its tools answered, the next request gets the script's third item."""
    script = [
        pause_turn(web_search_call("a", id="srvtoolu_a")),
        response(web_search_result([("A", "https://a.example")], tool_use_id="srvtoolu_a"), output_call({"city": "x"})),
        output_call(PARIS),
    ]
    async with FakeAnthropicServer(script, per_conversation=True) as server:
        result = await execute_agent(geo_agent(**SEARCH_AGENT), PROMPT, client=server.client())
    assert result.ok  # the first output call failed validation; the retry got the third item
    assert len(server.requests) == 3


def test_server_tool_result_needs_a_call_to_answer() -> None:
    """A result without tool_use_id and no server call before it in its response fails the test, saying why."""
    client = ScriptedClient([response(web_search_result([("A", "https://a.example")]))])
    with pytest.raises(ScriptError, match="follows no server tool call in its response: pass tool_use_id="):
        client.messages.create(model="m", messages=[], tools=[])


async def test_mcp_calls_and_generic_server_results_get_ids_and_answer_their_calls() -> None:
    """mcp_tool_call gets an mcptoolu_ id its result answers; server_tool_result takes any result type."""
    client = ScriptedClient(
        [
            response(
                mcp_tool_call("deepwiki", "ask_question", {"question": "what?"}),
                mcp_tool_result("An agent framework."),
                server_tool_call("advisor"),
                server_tool_result({"type": "advisor_result", "text": "Ship it."}, type="advisor_tool_result"),
                output_call(PARIS),
            )
        ]
    )
    result = await execute_agent(geo_agent(model_settings={"mcp_servers": []}), PROMPT, client=client)
    assert result.ok
    turn = conversation(result)[1]["content"]
    assert turn[0]["id"].startswith("mcptoolu_")
    assert turn[1]["tool_use_id"] == turn[0]["id"]
    assert turn[0]["server_name"] == "deepwiki"
    assert turn[3] == {
        "type": "advisor_tool_result",
        "tool_use_id": turn[2]["id"],
        "content": {"type": "advisor_result", "text": "Ship it."},
    }
    assert "[1] assistant: mcp_tool_use: ask_question#mcptoolu_" in format_conversation(result)


def test_script_json_round_trips_server_blocks_containers_models_and_iterations() -> None:
    """script_to_json / script_from_json keep every new field."""
    script = [*_research_script(), response(output_call(PARIS), model="claude-haiku-4-5-20251001")]
    assert script_from_json(json.loads(json.dumps(script_to_json(script)))) == script


@pytest.mark.parametrize(
    ("messages", "problems"),
    [
        (
            [
                {"role": "user", "content": "q"},
                {
                    "role": "assistant",
                    "content": [{"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}],
                },
                {"role": "user", "content": "more"},
            ],
            [
                "message 1: server tool call(s) ['s1'] have no result in their turn (only the last, paused turn may "
                "end with one)"
            ],
        ),
        (
            [
                {"role": "user", "content": "q"},
                {
                    "role": "assistant",
                    "content": [{"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}],
                },
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "s1", "content": "x"}]},
            ],
            [
                "message 1: server tool call(s) ['s1'] have no result in their turn (only the last, paused turn may "
                "end with one)",
                "message 2: tool_result for 's1' answers no tool_use of the previous turn",
            ],
        ),
        (
            [
                {"role": "user", "content": "q"},
                {
                    "role": "assistant",
                    "content": [{"type": "web_search_tool_result", "tool_use_id": "s9", "content": []}],
                },
            ],
            ["message 1: web_search_tool_result for 's9' answers no earlier call of its turn"],
        ),
        (
            [
                {"role": "user", "content": "q"},
                {
                    "role": "assistant",
                    "content": [{"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}],
                },
            ],
            [],
        ),
    ],
)
def test_conversation_problems_know_server_tool_blocks(messages: list[dict[str, Any]], problems: list[str]) -> None:
    """A server call is answered by its result in its own turn (a paused last turn may wait), not by a tool_result."""
    assert conversation_problems(messages) == problems


def test_recorded_conversations_with_server_blocks_are_valid() -> None:
    """Every recorded response with server, MCP, advisor, code execution or compaction blocks is a valid turn."""
    for name in (
        "web_fetch_response.json",
        "code_execution_response.json",
        "text_editor_code_execution_response.json",
        "mcp_response.json",
        "advisor_response.json",
        "compaction_response.json",
    ):
        message = _recorded(name)
        assert (
            conversation_problems(
                [{"role": "user", "content": "q"}, {"role": "assistant", "content": message["content"]}]
            )
            == []
        ), name


RECORDED = [
    "web_search_response.json",
    "web_fetch_response.json",
    "code_execution_response.json",
    "text_editor_code_execution_response.json",
    "mcp_response.json",
    "advisor_response.json",
    "compaction_response.json",
]


async def test_record_and_replay_round_trip_every_recorded_block_type(tmp_path: Path) -> None:
    """Real recorded responses of every block type survive recording and replay field for field.

    Each response (tests/data, from pydantic-ai's cassettes) is served in turn, ending with the output call; the
    cassette keeps each as the API sent it, and a replay yields the same conversation.
    """
    paused, resumed = _recorded("pause_turn_responses.json")
    served = [_recorded(name) for name in RECORDED] + [paused, resumed]
    last = {
        **served[-1],
        "content": [
            *served[-1]["content"],
            {"type": "tool_use", "id": "toolu_end", "name": "answer", "input": PARIS.model_dump()},
        ],
        "stop_reason": "tool_use",
    }
    queue = [*served[:-1], last]
    # Each recorded response but the last ends its attempt without an output call; the last hands it over.
    agent = geo_agent(
        **SEARCH_AGENT, model_settings={"mcp_servers": []}, helpers=[], validation=ValidationConfig(max_attempts=8)
    )

    def answer(request: dict[str, Any]) -> Any:
        item = queue.pop(0)
        return {**item, "content": [b for b in item["content"] if b.get("name") != "lookup"]}

    path = tmp_path / "cassette.json"
    recorded_run = await execute_agent(agent, PROMPT, client=RecordingClient(FunctionClient(answer), path))
    assert recorded_run.ok
    calls = json.loads(path.read_text())["calls"]
    for call, sent in zip(calls, [*served[:-1], last], strict=True):
        assert call["response"] == {**sent, "content": [b for b in sent["content"] if b.get("name") != "lookup"]}
    replay = ReplayClient(path)
    replayed = await execute_agent(agent, PROMPT, client=replay)
    replay.assert_all_played()
    assert conversation(replayed) == conversation(recorded_run)
    assert replayed.metadata.tokens == recorded_run.metadata.tokens


async def test_recording_a_beta_request_needs_a_client_with_beta_messages(tmp_path: Path) -> None:
    """Wrapping a client that has no beta resource fails the beta request with a TypeError saying what to wrap."""

    class _MessagesOnly:
        def __init__(self) -> None:
            self.messages = ScriptedClient([output_call(PARIS)]).messages

    recorder = RecordingClient(_MessagesOnly(), tmp_path / "c.json")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="RecordingClient: the request has beta parameters, but the wrapped"):
        await execute_agent(geo_agent(model_settings={"betas": ["x"]}), PROMPT, client=recorder)

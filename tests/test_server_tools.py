"""Server tools: typed constructors at the SDK's newest versions, declared beside helpers, left to the API."""

from __future__ import annotations

import re
import typing
from typing import Any, Literal

import anthropic.types
import pytest
from anthropic.types import WebSearchTool20250305Param
from support import GOOD, handing_over, recorded, reflecting, run, triage_agent

from typedagent import AgentDefinitionError, AgentErrorCode, HelperTool, tool
from typedagent.server_tools import code_execution, newest_version, tool_search, web_fetch, web_search
from typedagent.testing import FunctionClient, conversation, output_call


def _sdk_versions(tool: str) -> list[str]:
    """Every versioned ``type`` of ``tool`` any TypedDict of ``anthropic.types`` declares (found independently)."""
    found: set[str] = set()
    for name in dir(anthropic.types):
        param = getattr(anthropic.types, name)
        if not (isinstance(param, type) and name.endswith("Param") and hasattr(param, "__annotations__")):
            continue
        annotation = typing.get_type_hints(param).get("type")
        args = typing.get_args(annotation) if typing.get_origin(annotation) is Literal else ()
        found.update(a for a in args if isinstance(a, str) and re.fullmatch(rf"{tool}_\d{{8}}", a))
    return sorted(found)


@pytest.mark.parametrize(
    ("build", "tool"),
    [
        (web_search, "web_search"),
        (web_fetch, "web_fetch"),
        (code_execution, "code_execution"),
        (tool_search, "tool_search_tool_bm25"),
        (lambda: tool_search("regex"), "tool_search_tool_regex"),
    ],
)
def test_server_tools_default_to_the_newest_version_the_sdk_knows(build: Any, tool: str) -> None:
    """Each constructor sends the newest version of its tool among all of the SDK's typed tool params.

    The SDK is scanned here independently of the constructors: a newer version the SDK gains and the
    constructors do not pick up fails this test.
    """
    versions = _sdk_versions(tool)
    assert versions, f"the SDK declares no version of {tool}"
    assert build()["type"] == versions[-1] == newest_version(tool)


def test_web_search_settings_are_sent_as_the_api_names_them() -> None:
    """web_search() takes max_uses, domains and the user's location, and sends only what was set."""
    assert web_search(version="web_search_20250305") == {"type": "web_search_20250305", "name": "web_search"}
    location: anthropic.types.UserLocationParam = {"type": "approximate", "city": "Paris", "country": "FR"}
    assert web_search(max_uses=3, allowed_domains=["insee.fr"], user_location=location) == {
        "type": newest_version("web_search"),
        "name": "web_search",
        "max_uses": 3,
        "allowed_domains": ["insee.fr"],
        "user_location": {"type": "approximate", "city": "Paris", "country": "FR"},
    }
    assert web_fetch(max_uses=2, blocked_domains=["example.com"], citations=True, max_content_tokens=5000) == {
        "type": newest_version("web_fetch"),
        "name": "web_fetch",
        "max_uses": 2,
        "blocked_domains": ["example.com"],
        "citations": {"enabled": True},
        "max_content_tokens": 5000,
    }


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: web_search(allowed_domains=["a.com"], blocked_domains=["b.com"]), "not both"),
        (lambda: web_fetch(allowed_domains=["a.com"], blocked_domains=["b.com"]), "not both"),
        (lambda: web_search(max_uses=0), r"web_search\(max_uses=...\) must be an int >= 1, got 0"),
        (lambda: web_fetch(max_content_tokens=-5), "max_content_tokens"),
        (lambda: web_search(allowed_domains="python.org"), "must be a list of domain names"),
        (lambda: web_search(version="web_fetch_20250910"), "must be a web_search tool type such as"),
        (lambda: code_execution(version="latest"), "must be a code_execution tool type"),
        (lambda: tool_search("fuzzy"), "'bm25' or 'regex'"),  # type: ignore[arg-type]
        (lambda: newest_version("teleport"), "knows no version of the 'teleport' tool"),
    ],
)
def test_server_tool_settings_the_api_refuses_are_definition_errors(build: Any, message: str) -> None:
    """A setting the API would refuse fails at definition time, saying what is wrong."""
    with pytest.raises(AgentDefinitionError, match=message):
        build()


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return query


def test_server_tools_are_sent_between_the_helpers_and_the_output_tool() -> None:
    """tool_params() lists helpers, then server tools as given, then the output tool and submit."""
    sdk_typed: WebSearchTool20250305Param = {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}
    agent = triage_agent(
        helpers=[lookup], output=reflecting(), server_tools=[sdk_typed, code_execution(), {"type": "x_1", "name": "x"}]
    )
    assert [(p.get("type"), p["name"]) for p in agent.tool_params()] == [
        (None, "lookup"),
        ("web_search_20250305", "web_search"),
        (newest_version("code_execution"), "code_execution"),
        ("x_1", "x"),
        (None, "final_output"),
        (None, "submit"),
    ]
    assert agent.tool_params()[1] == {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}
    assert agent.server_tools[0]["max_uses"] == 2


def test_server_tools_are_copied_at_definition_time() -> None:
    """Editing the dict given to define_agent later does not change the agent."""
    given = web_search(max_uses=2)
    agent = triage_agent(server_tools=[given])
    given["max_uses"] = 99
    assert agent.tool_params()[0]["max_uses"] == 2  # type: ignore[typeddict-item]
    with pytest.raises(TypeError):
        agent.server_tools[0]["max_uses"] = 5  # type: ignore[index]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"helpers": [tool(lookup.fn, name="web_search")]}, "Server tool 'web_search' has the name of another tool"),
        ({"output": reflecting(name="web_search")}, "has the name of another tool"),
        ({"output": reflecting(), "server_tools_name": "submit"}, "Server tool 'submit' has the name of another tool"),
        ({"server_tools": [web_search(), web_search(max_uses=1)]}, "Server tool 'web_search' has the name"),
    ],
)
def test_server_tool_names_clash_with_helpers_output_and_submit(overrides: dict[str, Any], message: str) -> None:
    """A server tool named like a helper, the output tool, submit or another server tool is refused."""
    renamed = overrides.pop("server_tools_name", None)
    overrides.setdefault("server_tools", [{"type": "web_search_20250305", "name": renamed or "web_search"}])
    with pytest.raises(AgentDefinitionError, match=message):
        triage_agent(**overrides)


@pytest.mark.parametrize(
    ("server_tools", "message"),
    [
        (web_search(), "must be a list of server tool definitions, got dict"),
        (["web_search"], "must hold server tool definitions"),
        ([{"name": "web_search"}], "has no 'type'"),
        ([{"type": "web_search_20250305"}], "name None is not a valid tool name"),
        ([{"name": "x", "input_schema": {"type": "object"}}], "has an input schema"),
        ([{"type": "memory_20250818", "name": "memory"}], "is an Anthropic-defined tool that your code runs"),
        ([{"type": "mcp_toolset"}], "needs 'mcp_server_name'"),
    ],
)
def test_server_tools_that_are_not_server_tools_are_refused(server_tools: Any, message: str) -> None:
    """Only {"type": ..., "name": ...} dicts of tools the API runs are server tools; the error says what to do."""
    with pytest.raises(AgentDefinitionError, match=message):
        triage_agent(server_tools=server_tools)


def test_mcp_toolset_needs_no_name() -> None:
    """An mcp_toolset names its MCP server instead of itself."""
    agent = triage_agent(server_tools=[{"type": "mcp_toolset", "mcp_server_name": "deepwiki"}])
    assert agent.tool_params()[0] == {"type": "mcp_toolset", "mcp_server_name": "deepwiki"}  # type: ignore[comparison-overlap]


async def test_server_tool_calls_are_left_to_the_api() -> None:
    """A response with server tool calls and their results is kept verbatim; only the client call is answered.

    Modelled on web_search_response.json (pydantic-ai's test_anthropic_web_search_tool.yaml and advisor recordings).
    """
    responses = [recorded("web_search_response.json"), output_call(GOOD)]
    client = FunctionClient(lambda request: responses.pop(0))
    result = await run(triage_agent(helpers=[lookup], server_tools=[web_search()]), client)  # type: ignore[arg-type]
    assert result.ok
    assert client.requests[0]["tools"][1] == web_search()
    turn = conversation(result)[1]["content"]
    assert [block["type"] for block in turn] == [
        "server_tool_use",
        "web_search_tool_result",
        "server_tool_use",
        "advisor_tool_result",
        "text",
        "text",
        "tool_use",
    ]
    answers = conversation(result)[2]["content"]
    assert [block["tool_use_id"] for block in answers] == ["toolu_01A09q90qw90lq917835lq9"]


async def test_pause_turn_continues_the_turn_each_continuation_an_iteration() -> None:
    """A paused response is sent back as the last turn; the next one extends it; each is an iteration.

    Modelled on pydantic-ai's test_pause_turn_web_search_vcr.yaml (pause_turn_responses.json).
    """
    paused, resumed = recorded("pause_turn_responses.json")
    responses = [paused, handing_over(resumed, GOOD)]
    client = FunctionClient(lambda request: responses.pop(0))
    result = await run(triage_agent(server_tools=[web_search()]), client)  # type: ignore[arg-type]
    assert result.ok
    assert result.metadata.iterations == 2
    assert [record.iterations for record in result.metadata.attempts] == [2]
    sent_back = client.requests[1]["messages"]
    assert [message["role"] for message in sent_back] == ["user", "assistant"]
    assert sent_back[1]["content"][-1] == paused["content"][-1]  # the call the next response answers
    merged = conversation(result)[1]["content"]
    assert merged == [*paused["content"], *handing_over(resumed, GOOD)["content"]]
    assert result.metadata.tokens.web_search_requests == 15


async def test_a_turn_ending_with_server_results_but_no_output_call_is_fed_back() -> None:
    """Searching without handing over the output ends the attempt with INVALID_RESPONSE feedback, no tool_result."""
    responses = [recorded("web_fetch_response.json"), output_call(GOOD)]
    client = FunctionClient(lambda request: responses.pop(0))
    result = await run(triage_agent(server_tools=[web_fetch()]), client)  # type: ignore[arg-type]
    assert result.ok
    assert result.metadata.attempts[0].outcome is AgentErrorCode.INVALID_RESPONSE
    feedback = conversation(result)[2]["content"]
    assert [block["type"] for block in feedback] == ["text"]


def test_anthropic_defined_client_tool_beside_server_tools() -> None:
    """A memory tool (your code runs it) and a web search (the API runs it) live side by side."""
    memory = HelperTool(definition={"type": "memory_20250818", "name": "memory"}, handler=lambda command: "done")  # type: ignore[typeddict-item]
    agent = triage_agent(helpers=[memory], server_tools=[web_search()])
    assert [p["name"] for p in agent.tool_params()] == ["memory", "web_search", "final_output"]


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"}, "server_tool_use block 0"),
        ({"type": "mcp_tool_use", "id": 7, "name": "ask", "input": {}, "server_name": "docs"}, "mcp_tool_use block 0"),
    ],
)
async def test_a_server_call_without_id_name_or_input_is_a_malformed_response(
    block: dict[str, Any], message: str
) -> None:
    """A server or MCP call block the hooks could not read fails the call as malformed; nothing of it is kept."""
    broken = {**recorded("web_fetch_response.json"), "content": [block]}
    result = await run(triage_agent(), FunctionClient(lambda request: broken))  # type: ignore[arg-type]
    assert not result.ok
    assert result.error.code is AgentErrorCode.API_ERROR
    assert f"{message} of the response lacks an id, a name or an input object" in result.error.message


async def test_a_server_call_id_repeated_in_a_response_is_malformed() -> None:
    """Server call ids are unique in a response, like tool_use ids."""
    message = recorded("web_search_response.json")
    call = message["content"][0]
    broken = {**message, "content": [call, {**call}]}
    result = await run(triage_agent(), FunctionClient(lambda request: broken))  # type: ignore[arg-type]
    assert not result.ok
    assert "two server_tool_use blocks have the id 'srvtoolu_01EoSNE7k4dUJyGatASCV5qs'" in result.error.message

"""Prompt caching: top-level ``cache_control`` on every request by default, off with ``prompt_caching=False``."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from anthropic import AsyncAnthropic
from pydantic import BaseModel

from typedagent import (
    AgentDefinitionError,
    Approve,
    ExecutePaused,
    HelperTool,
    OutputRejected,
    OutputTool,
    PausedState,
    RunContext,
    TokenUsage,
    ValidationConfig,
    define_agent,
    execute_agent,
    tool,
)
from typedagent._run.caching import PADDING_HEADER, estimated_tokens, minimum_cacheable_tokens
from typedagent._run.request import build_system_prompt
from typedagent.testing import FakeAnthropicServer, ScriptedClient, output_call, response, submit_call, tool_call, usage

EPHEMERAL = {"type": "ephemeral"}


class Verdict(BaseModel):
    label: str


@tool
async def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def not_draft(out: Verdict) -> None:
    if out.label == "draft":
        raise OutputRejected("label must not be 'draft'")


def context() -> RunContext[None]:
    return RunContext(
        deps=None, agent_name="long", model="claude-sonnet-4-6", attempt=0, iteration=0, tokens=TokenUsage()
    )


def reflecting_agent(**overrides: Any) -> Any:
    params: dict[str, Any] = {
        "name": "caching",
        "model": "claude-sonnet-4-6",
        "output": OutputTool(Verdict, reflection_handler=lambda v: f"label {v.label}"),
        "helpers": [lookup],
        "validators": [not_draft],
    }
    params.update(overrides)
    return define_agent(**params)


def long_script() -> ScriptedClient:
    """Helper calls, reflection, a rejected submit, then a second attempt: six requests in two attempts."""
    return ScriptedClient(
        [
            tool_call("lookup", {"key": "a"}),
            response(tool_call("lookup", {"key": "b"}), tool_call("lookup", {"key": "c"})),
            output_call(Verdict(label="draft")),
            submit_call(),
            output_call(Verdict(label="final")),
            submit_call(),
        ]
    )


async def test_prompt_caching_on_by_default_on_every_request() -> None:
    """By default every request of every iteration and attempt carries top-level ephemeral cache_control."""
    agent = reflecting_agent()
    client = long_script()
    result = await execute_agent(agent, "Classify this.", client=client)
    assert result.ok
    assert agent.prompt_caching is True
    assert [len(r.validation_errors) for r in result.metadata.attempts] == [1, 0]
    assert [request.get("cache_control") for request in client.requests] == [EPHEMERAL] * 6


async def test_prompt_caching_off_sends_no_cache_control() -> None:
    """define_agent(prompt_caching=False) leaves cache_control out of every request, and changes nothing else."""
    on, off = long_script(), long_script()
    assert (await execute_agent(reflecting_agent(), "Classify this.", client=on)).ok
    assert (await execute_agent(reflecting_agent(prompt_caching=False), "Classify this.", client=off)).ok
    assert len(off.requests) == 6
    assert all("cache_control" not in request for request in off.requests)
    assert [{k: v for k, v in r.items() if k != "cache_control"} for r in on.requests] == off.requests


async def test_prompt_caching_reaches_the_wire() -> None:
    """Through the real SDK, the JSON body has top-level cache_control when on and none when off."""
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        bodies.append(body)
        message = {
            "id": f"msg_{len(bodies)}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [
                {"type": "tool_use", "id": f"toolu_{len(bodies)}", "name": "final_output", "input": {"label": "x"}}
            ],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        return httpx2.Response(200, json=message)

    http_client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    async with AsyncAnthropic(api_key="test-key", base_url="http://127.0.0.1:9", http_client=http_client) as client:
        for caching in (True, False):
            agent = define_agent(
                name="wire", model="claude-sonnet-4-6", output=OutputTool(Verdict), prompt_caching=caching
            )
            result = await execute_agent(agent, "Classify this.", client=client)
            assert result.ok
            assert result.output == Verdict(label="x")
    assert [body.get("cache_control", "absent") for body in bodies] == [EPHEMERAL, "absent"]
    assert bodies[0]["tool_choice"] == {"type": "any"}


async def test_prompt_caching_cache_tokens_are_reported() -> None:
    """Cache-write and cache-read tokens of every response are summed into metadata.tokens."""
    client = ScriptedClient(
        [
            response(tool_call("lookup", {"key": "a"}), usage=usage(3, 7, cache_creation_input_tokens=1200)),
            response(output_call(Verdict(label="ok")), usage=usage(4, 9, cache_read_input_tokens=1200)),
        ]
    )
    agent = define_agent(name="tokens", model="claude-sonnet-4-6", output=OutputTool(Verdict), helpers=[lookup])
    result = await execute_agent(agent, "Classify this.", client=client)
    assert result.ok
    assert result.metadata.tokens == TokenUsage(
        input_tokens=7, output_tokens=16, cache_creation_input_tokens=1200, cache_read_input_tokens=1200
    )


def test_prompt_caching_not_settable_through_model_settings() -> None:
    """cache_control in model_settings is refused at definition time, pointing at prompt_caching=."""
    with pytest.raises(AgentDefinitionError, match="prompt_caching="):
        define_agent(
            name="bad", model="claude-sonnet-4-6", output=OutputTool(Verdict), model_settings={"cache_control": {}}
        )


# The static prefix, the TTL choice, the forced iteration and the four breakpoints, on the simulated cache.

LONG_INSTRUCTIONS = "You classify support tickets. " + " ".join(
    f"Rule {n}: read the ticket for any sign of category {n} and say so in the label." for n in range(60)
)
"""Instructions long enough that tools + system prompt pass Sonnet's 1,024-token minimum (about 5,400 bytes)."""
STATIC_5M = {"type": "ephemeral"}
STATIC_1H = {"type": "ephemeral", "ttl": "1h"}


def long_agent(**overrides: Any) -> Any:
    params: dict[str, Any] = {
        "name": "long",
        "model": "claude-sonnet-4-6",
        "instructions": LONG_INSTRUCTIONS,
        "output": OutputTool(Verdict),
        "helpers": [lookup],
    }
    params.update(overrides)
    return define_agent(**params)


def one_lookup() -> list[Any]:
    return [tool_call("lookup", {"key": "a"}), output_call(Verdict(label="final"))]


def prefix_tokens(request: dict[str, Any]) -> int:
    """The tools and system blocks' tokens as the simulated cache counts them: JSON bytes / 3.5, markers left out."""
    blocks = [*request["tools"], *request["system"]]
    unmarked = [{key: value for key, value in block.items() if key != "cache_control"} for block in blocks]
    return round(sum(len(json.dumps(block, separators=(",", ":")).encode()) for block in unmarked) / 3.5)


def static_marker(request: dict[str, Any]) -> object:
    system = request["system"]
    return system[-1].get("cache_control") if isinstance(system, list) else None


def markers(request: dict[str, Any]) -> list[str]:
    """Where a request's breakpoints are: ``tools[i]``, ``system[i]``, ``messages[i][j]``, and ``automatic``."""
    found = [f"tools[{i}]" for i, tool in enumerate(request.get("tools") or []) if "cache_control" in tool]
    system = request.get("system")
    if isinstance(system, list):
        found += [f"system[{i}]" for i, block in enumerate(system) if "cache_control" in block]
    for i, message in enumerate(request["messages"]):
        content = message["content"]
        if isinstance(content, list):
            found += [f"messages[{i}][{j}]" for j, block in enumerate(content) if "cache_control" in block]
    return [*found, *(["automatic"] if "cache_control" in request else [])]


async def test_static_prefix_is_marked_by_default() -> None:
    """Tools + system above the minimum: the system prompt is one text block with cache_control, plus automatic."""
    client = ScriptedClient(one_lookup())
    result = await execute_agent(long_agent(), "Classify this.", client=client)
    assert result.ok
    first, second = client.requests
    assert first["system"] == [
        {"type": "text", "text": build_system_prompt(long_agent(), context()), "cache_control": STATIC_5M}
    ]
    assert second["system"] == first["system"]
    assert markers(first) == markers(second) == ["system[0]", "automatic"]
    assert "cache_control" not in json.dumps(result.metadata.messages)  # the conversation itself carries no marker


async def test_static_prefix_below_the_minimum_is_not_marked() -> None:
    """A small agent's tools + system prompt (below 1,024 tokens) stay a plain string: only the automatic one."""
    client = ScriptedClient(one_lookup())
    assert (await execute_agent(long_agent(instructions="Be brief."), "Classify this.", client=client)).ok
    assert isinstance(client.requests[0]["system"], str)
    assert markers(client.requests[0]) == ["automatic"]
    # Opus 4.5's minimum is 4,096 tokens: the long agent is below it there.
    client = ScriptedClient(one_lookup())
    assert (await execute_agent(long_agent(model="claude-opus-4-5"), "Classify this.", client=client)).ok
    assert markers(client.requests[0]) == ["automatic"]


def test_minimum_cacheable_tokens_by_model_family() -> None:
    """The documented minimums, found in dated, Bedrock and Vertex ids; 1,024 for a model the table lacks."""
    assert [
        minimum_cacheable_tokens(model)
        for model in (
            "claude-opus-5",
            "claude-sonnet-4-6",
            "claude-sonnet-4-5-20250929",
            "claude-opus-4-1-20250805",
            "claude-opus-4-20250514",
            "claude-opus-4-7",
            "claude-3-5-haiku-20241022",
            "claude-opus-4-5",
            "claude-opus-4-6@20260101",
            "anthropic.claude-haiku-4-5-20251001-v1:0",
            "my-proxy-model",
        )
    ] == [512, 1024, 1024, 1024, 1024, 2048, 2048, 4096, 4096, 4096, 1024]


async def test_second_run_reads_the_static_prefix() -> None:
    """On the simulated cache, a second run with another prompt reads tools + system instead of writing them."""
    async with (
        FakeAnthropicServer(one_lookup(), per_conversation=True, prompt_cache=True) as server,
        server.client() as client,
    ):
        cold = await execute_agent(long_agent(), "Ticket one.", client=client)
        warm = await execute_agent(long_agent(), "Ticket two, quite different.", client=client)
    assert cold.ok
    assert warm.ok
    first_cold, second_cold, first_warm, _ = (message["usage"] for message in server.responses)
    static = prefix_tokens(server.requests[0])
    assert first_cold["cache_read_input_tokens"] == 0
    assert first_warm["cache_read_input_tokens"] == static
    assert second_cold["cache_read_input_tokens"] == first_cold["cache_creation_input_tokens"]  # within the run
    assert warm.metadata.tokens.cache_read_input_tokens > cold.metadata.tokens.cache_read_input_tokens
    assert warm.metadata.cost_usd is not None
    assert cold.metadata.cost_usd is not None
    assert warm.metadata.cost_usd < 0.5 * cold.metadata.cost_usd
    assert warm.metadata.cache_savings_usd is not None
    assert cold.metadata.cache_savings_usd is not None
    assert warm.metadata.cache_savings_usd > cold.metadata.cache_savings_usd


async def test_without_caching_nothing_is_read_or_written() -> None:
    """prompt_caching=False: no marker, and the simulated cache reports every input token as uncached."""
    async with (
        FakeAnthropicServer(one_lookup(), per_conversation=True, prompt_cache=True) as server,
        server.client() as client,
    ):
        for prompt in ("Ticket one.", "Ticket two."):
            assert (await execute_agent(long_agent(prompt_caching=False), prompt, client=client)).ok
    assert [markers(request) for request in server.requests] == [[]] * 4
    assert all(
        m["usage"]["cache_read_input_tokens"] == m["usage"]["cache_creation_input_tokens"] == 0
        for m in server.responses
    )


async def test_one_hour_ttl_marks_the_static_prefix_and_is_priced_at_twice_the_input() -> None:
    """prompt_caching="1h": the static prefix is a 1-hour entry (2x input to write), the conversation 5-minute."""
    async with (
        FakeAnthropicServer(one_lookup(), per_conversation=True, prompt_cache=True) as server,
        server.client() as client,
    ):
        result = await execute_agent(long_agent(prompt_caching="1h"), "Ticket one.", client=client)
    assert result.ok
    assert static_marker(server.requests[0]) == STATIC_1H
    assert server.requests[0]["cache_control"] == {"type": "ephemeral"}
    split = server.responses[0]["usage"]["cache_creation"]
    assert split["ephemeral_1h_input_tokens"] == prefix_tokens(server.requests[0])
    tokens = result.metadata.tokens
    assert tokens.cache_creation_1h_input_tokens == split["ephemeral_1h_input_tokens"]
    expected = (
        tokens.input_tokens * 3
        + tokens.output_tokens * 15
        + tokens.cache_creation_5m_input_tokens * 3.75
        + tokens.cache_creation_1h_input_tokens * 6
        + tokens.cache_read_input_tokens * 0.30
    ) / 1e6
    assert result.metadata.cost_usd == pytest.approx(expected)


@pytest.mark.parametrize("value", ["2h", 1, 0, None, "yes"])
def test_prompt_caching_values_are_checked(value: object) -> None:
    """prompt_caching takes True, False, "5m" or "1h": anything else is a definition error saying so."""
    with pytest.raises(AgentDefinitionError, match=r"True, False, '5m' or '1h'"):
        long_agent(prompt_caching=value)
    assert long_agent(prompt_caching="5m").prompt_caching == "5m"


async def test_forced_last_iteration_keeps_the_static_prefix_and_writes_nothing() -> None:
    """The forced request sends tools and system unchanged (their entry is read) and no automatic breakpoint."""
    script = [tool_call("lookup", {"key": str(n)}) for n in range(3)] + [output_call(Verdict(label="final"))]
    agent = long_agent(validation=ValidationConfig(max_iterations_per_attempt=4, force_output_on_last_iteration=True))
    async with (
        FakeAnthropicServer(script, per_conversation=True, prompt_cache=True) as server,
        server.client() as client,
    ):
        assert (await execute_agent(agent, "Ticket one.", client=client)).ok
    *usual, forced = server.requests
    assert forced["tool_choice"] == {"type": "tool", "name": "final_output"}
    assert (forced["tools"], forced["system"]) == (usual[0]["tools"], usual[0]["system"])
    assert markers(forced) == ["system[0]"]
    assert [markers(request) for request in usual] == [["system[0]", "automatic"]] * 3
    usage = server.responses[-1]["usage"]
    assert usage["cache_read_input_tokens"] == prefix_tokens(forced)
    assert usage["cache_creation_input_tokens"] == 0


async def test_attempt_after_a_rejected_forced_output_reads_the_conversation() -> None:
    """After the forced iteration, the next attempt's request reads the entry written before the forced one."""
    script = [tool_call("lookup", {"key": "a"}), output_call(Verdict(label="draft")), output_call(Verdict(label="ok"))]
    agent = long_agent(
        validators=[not_draft],
        validation=ValidationConfig(max_iterations_per_attempt=2, force_output_on_last_iteration=True),
    )
    async with (
        FakeAnthropicServer(script, per_conversation=True, prompt_cache=True) as server,
        server.client() as client,
    ):
        result = await execute_agent(agent, "Ticket one.", client=client)
    assert result.ok
    first, forced, next_attempt = (message["usage"] for message in server.responses)
    assert markers(server.requests[1]) == ["system[0]"]
    assert (
        next_attempt["cache_read_input_tokens"]
        == first["cache_read_input_tokens"] + first["cache_creation_input_tokens"]
    )
    assert forced["cache_creation_input_tokens"] == 0


def marked_text(text: str, ttl: str | None = None) -> dict[str, Any]:
    marker = {"type": "ephemeral", "ttl": ttl} if ttl else {"type": "ephemeral"}
    return {"type": "text", "text": text, "cache_control": marker}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (1, ["system[0]", "messages[0][0]", "automatic"]),
        (2, ["system[0]", "messages[0][0]", "messages[0][1]", "automatic"]),
        (3, ["messages[0][0]", "messages[0][1]", "messages[0][2]", "automatic"]),
        (4, ["messages[0][0]", "messages[0][1]", "messages[0][2]", "messages[0][3]"]),
    ],
)
async def test_user_breakpoints_count_against_the_four(given: int, expected: list[str]) -> None:
    """The prompt's own breakpoints stay; typedagent's give way (static first, then automatic) to stay within 4."""
    prompt = [marked_text(f"Part {n}: " + "x" * 50) for n in range(given)] + [{"type": "text", "text": "Classify."}]
    async with FakeAnthropicServer(one_lookup(), prompt_cache=True) as server, server.client() as client:
        assert (await execute_agent(long_agent(), prompt, client=client)).ok
    assert [markers(request) for request in server.requests] == [expected, expected]


async def test_tool_and_server_tool_breakpoints_count_too() -> None:
    """A helper's or a server tool's own cache_control counts: with three of them only the automatic one fits."""
    marked = HelperTool(
        definition={
            "name": "fetch",
            "description": "Fetch.",
            "input_schema": {"type": "object", "properties": {}},
            "cache_control": {"type": "ephemeral"},
        },
        handler=lambda data: "ok",
    )
    servers = [
        {"type": "web_search_20250305", "name": "web_search", "cache_control": {"type": "ephemeral"}},
        {"type": "mcp_toolset", "mcp_server_name": "docs", "cache_control": {"type": "ephemeral"}},
    ]
    async with FakeAnthropicServer(one_lookup(), prompt_cache=True) as server, server.client() as client:
        agent = long_agent(helpers=[lookup, marked], server_tools=servers)
        assert (await execute_agent(agent, "Classify.", client=client)).ok
    assert markers(server.requests[0]) == ["tools[1]", "tools[2]", "tools[3]", "automatic"]


async def test_static_ttl_follows_the_order_the_api_requires() -> None:
    """A 1-hour breakpoint in the prompt makes the static prefix 1-hour; a 5-minute tool one makes it 5-minute."""
    prompt = [marked_text("A long document. " * 20, ttl="1h"), {"type": "text", "text": "Classify."}]
    async with (
        FakeAnthropicServer(one_lookup(), per_conversation=True, prompt_cache=True) as server,
        server.client() as client,
    ):
        assert (await execute_agent(long_agent(), prompt, client=client)).ok
        tool_marked = HelperTool(
            definition={
                "name": "fetch",
                "input_schema": {"type": "object", "properties": {}},
                "cache_control": {"type": "ephemeral"},
            },
            handler=lambda data: "ok",
        )
        agent = long_agent(helpers=[tool_marked, lookup], prompt_caching="1h")
        assert (await execute_agent(agent, "Classify.", client=client)).ok
    assert static_marker(server.requests[0]) == STATIC_1H
    assert static_marker(server.requests[2]) == STATIC_5M
    assert server.problems == []


async def test_a_last_block_marked_by_the_user_sends_no_automatic_breakpoint() -> None:
    """The API ignores (same TTL) or refuses (other TTL) the automatic breakpoint on a block marked already."""
    client = ScriptedClient([output_call(Verdict(label="ok"))])
    assert (await execute_agent(long_agent(), [marked_text("Classify this.", ttl="1h")], client=client)).ok
    assert markers(client.requests[0]) == ["system[0]", "messages[0][0]"]
    assert static_marker(client.requests[0]) == STATIC_1H


async def test_many_parallel_calls_mark_the_previous_call_s_end() -> None:
    """A response with 10 calls adds 20 blocks, past the API's lookback: the previous call's end gets a breakpoint.

    It is marked for that request only, so the previous call's entry is still read.
    """
    script = [
        tool_call("lookup", {"key": "a"}),
        response(*(tool_call("lookup", {"key": str(n)}) for n in range(10))),
        output_call(Verdict(label="ok")),
    ]
    async with (
        FakeAnthropicServer(script, per_conversation=True, prompt_cache=True) as server,
        server.client() as client,
    ):
        result = await execute_agent(long_agent(), "Classify.", client=client)
    assert result.ok
    assert [markers(request) for request in server.requests] == [
        ["system[0]", "automatic"],
        ["system[0]", "automatic"],
        ["system[0]", "messages[2][0]", "automatic"],
    ]
    second, third = server.responses[1]["usage"], server.responses[2]["usage"]
    assert third["cache_read_input_tokens"] == second["cache_read_input_tokens"] + second["cache_creation_input_tokens"]
    assert "cache_control" not in json.dumps(result.metadata.messages)


def test_breakpoints_placed_with_the_memo_equal_a_fresh_look_as_the_conversation_grows() -> None:
    """Each settled message is looked through once per execution, yet one appended or replaced with breakpoints counts.

    Three breakpoints from the user leave room for one of typedagent's: the automatic one, never the static one.
    """
    from typedagent._run.breakpoints import MarkerMemo
    from typedagent._run.caching import placed

    messages: list[dict[str, Any]] = [{"role": "user", "content": [marked_text("Part 1"), marked_text("Part 2")]}]
    params: dict[str, Any] = {
        "model": "claude-sonnet-4-6",
        "system": [{"type": "text", "text": "System.", "cache_control": EPHEMERAL}],
        "messages": messages,
        "cache_control": EPHEMERAL,
    }
    memo = MarkerMemo()

    def both() -> tuple[dict[str, Any], dict[str, Any]]:
        return placed(params, params, memo), placed(params, params)

    remembered, fresh = both()
    assert remembered == fresh
    assert "cache_control" in remembered["system"][-1]
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "Noted."}]})
    messages.append({"role": "user", "content": [marked_text("Part 3"), {"type": "text", "text": "Go on."}]})
    remembered, fresh = both()
    assert remembered == fresh
    assert "cache_control" not in remembered["system"][-1]
    assert "cache_control" in remembered
    messages[2] = {
        "role": "user",
        "content": [{"type": "text", "text": "Part 3, unmarked"}],
    }  # replaced, as the loop does
    remembered, fresh = both()
    assert remembered == fresh
    assert "cache_control" in remembered["system"][-1]
    assert memo.settled == 2  # every message but the last (which the loop may still replace) looked through once
    assert memo.found == [("messages", None), ("messages", None)]
    other = [dict(message) for message in messages]  # another list (a history processor's copy): looked at afresh
    other[0] = {"role": "user", "content": [{"type": "text", "text": "Part 1, unmarked"}]}
    copied = {**params, "messages": other}
    assert placed(copied, copied, memo) == placed(copied, copied)
    assert memo.found == []
    assert memo.messages is other


def band_agent(share: float) -> Any:
    """An agent whose tools + system prompt come to about ``share`` of Sonnet's 1,024-token minimum."""
    for rules in range(60):
        instructions = "You classify support tickets. " + " ".join(
            f"Rule {n}: read the ticket for any sign of category {n} and say so in the label." for n in range(rules)
        )
        agent = long_agent(instructions=instructions)
        if estimated_tokens(agent.tool_params(), build_system_prompt(agent, context())) >= share * 1024:
            return agent
    raise AssertionError("no number of rules reaches the share")


async def test_a_prefix_just_under_the_minimum_is_padded_up_to_it_and_marked() -> None:
    """Three quarters of the minimum or more: padded with lines saying they carry no instruction, then marked.

    The padding is the same for every run of the agent, and a second run reads the padded prefix from the cache.
    """
    agent = band_agent(0.8)
    written = build_system_prompt(agent, context())
    assert 0.75 * 1024 <= estimated_tokens(agent.tool_params(), written) < 1024
    async with (
        FakeAnthropicServer(one_lookup(), per_conversation=True, prompt_cache=True) as server,
        server.client() as client,
    ):
        assert (await execute_agent(agent, "Ticket one.", client=client)).ok
        assert (await execute_agent(agent, "Ticket two, quite different.", client=client)).ok
    system = server.requests[0]["system"]
    assert len(system) == 1
    assert system[0]["cache_control"] == STATIC_5M
    assert system[0]["text"].startswith(written + "\n\n" + PADDING_HEADER + "\nCache padding line 1.")
    assert 1024 <= estimated_tokens(server.requests[0]["tools"], system[0]["text"]) < 1024 * 1.15
    assert [request["system"] for request in server.requests] == [system] * 4  # one prefix for every request
    assert server.responses[2]["usage"]["cache_read_input_tokens"] == prefix_tokens(server.requests[0])
    assert server.problems == []


async def test_a_prefix_under_three_quarters_of_the_minimum_is_neither_padded_nor_marked() -> None:
    """Padding a short prefix would cost more than the cache saves: it goes as written, with the automatic marker."""
    agent = band_agent(0.7)
    written = build_system_prompt(agent, context())
    assert estimated_tokens(agent.tool_params(), written) < 0.75 * 1024
    client = ScriptedClient(one_lookup())
    assert (await execute_agent(agent, "Classify this.", client=client)).ok
    assert client.requests[0]["system"] == written
    assert markers(client.requests[0]) == ["automatic"]


async def test_a_paused_execution_with_a_cached_prefix_resumes_on_the_same_prefix() -> None:
    """The paused state keeps the system prompt as written; the resumed requests send the same marked prefix."""

    @tool(requires_approval=True)
    async def close_ticket(key: str) -> str:
        """Close a ticket."""
        return f"closed {key}"

    for instructions in (LONG_INSTRUCTIONS, band_agent(0.8).instructions):  # over the minimum, and padded up to it
        agent = long_agent(instructions=instructions, helpers=[close_ticket])
        script = [tool_call("close_ticket", {"key": "a"}), output_call(Verdict(label="final"))]
        client = ScriptedClient(script)
        paused = await execute_agent(agent, "Close it.", client=client, pausable=True)
        assert isinstance(paused, ExecutePaused)
        state = PausedState.from_json(paused.state.to_json())
        assert json.loads(state.to_json())["request"]["system"] == build_system_prompt(agent, context())
        resumed = await execute_agent(agent, resume=state, decisions={paused.pending[0].id: Approve()}, client=client)
        assert resumed.ok
        first, second = client.requests
        assert second["system"] == first["system"]
        assert static_marker(second) == STATIC_5M


def test_a_block_whose_cache_control_is_none_is_no_breakpoint() -> None:
    """``"cache_control": None`` on the last block marks nothing: the automatic breakpoint stays.

    As for no key at all; a real marker there makes it give way (the API would read the two as one, or refuse
    different TTLs).
    """
    from typedagent._run.breakpoints import MarkerMemo
    from typedagent._run.caching import placed

    def request(last_block: dict[str, Any]) -> dict[str, Any]:
        messages = [{"role": "user", "content": [{"type": "text", "text": "Question."}, last_block]}]
        return {"model": "claude-sonnet-4-6", "messages": messages, "cache_control": EPHEMERAL}

    for block, kept in (
        ({"type": "text", "text": "More.", "cache_control": None}, True),
        ({"type": "text", "text": "More."}, True),
        ({"type": "text", "text": "More.", "cache_control": EPHEMERAL}, False),
    ):
        params = request(block)
        assert ("cache_control" in placed(params, params)) is kept
        assert ("cache_control" in placed(params, params, MarkerMemo())) is kept


def test_breakpoints_in_tuple_content_count_like_those_in_a_list() -> None:
    """A history may hold a message's blocks in a tuple: its breakpoints count, and make the automatic one give way."""
    from typedagent._run.breakpoints import MarkerMemo
    from typedagent._run.caching import placed

    for content in (
        [{"type": "text", "text": "Prefill.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        ({"type": "text", "text": "Prefill.", "cache_control": {"type": "ephemeral", "ttl": "1h"}},),
    ):
        messages = [
            {"role": "user", "content": [{"type": "text", "text": "Question."}]},
            {"role": "assistant", "content": content},
        ]
        params: dict[str, Any] = {"model": "claude-sonnet-4-6", "messages": messages, "cache_control": EPHEMERAL}
        assert "cache_control" not in placed(params, params)
        assert "cache_control" not in placed(params, params, MarkerMemo())

"""Agents that use agents (``agent.as_tool()``): sub-runs, roll-up, tool errors, depth, definition checks."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel, Field, field_validator
from support import assert_api_valid, results_of

from typedagent import (
    AgentDefinitionError,
    AgentErrorCode,
    AgentStreamEvent,
    ExecuteCallbacks,
    ExecutionLimits,
    ExecutionState,
    Finished,
    OutputTool,
    PartialOutput,
    RunContext,
    SubExecution,
    TextDelta,
    TokenUsage,
    ToolCall,
    ToolCallFinished,
    ToolResult,
    ValidationConfig,
    define_agent,
    execute_agent,
    price_for,
    stream_agent,
    tool,
)
from typedagent.testing import (
    FunctionClient,
    MessagesRequest,
    ScriptedClient,
    api_error,
    delay,
    output_call,
    response,
    text,
    tool_call,
    usage,
)


class Facts(BaseModel):
    facts: list[str]


class Draft(BaseModel):
    text: str


class Report(BaseModel):
    summary: str


@tool
async def search(query: str) -> str:
    """Search the notes."""
    return f"notes about {query}"


researcher = define_agent(
    name="researcher",
    model="claude-haiku-4-5",
    instructions="You find facts.",
    output=OutputTool(Facts),
    helpers=[search],
)
writer = define_agent(
    name="writer",
    model="claude-sonnet-4-6",
    instructions="You write.",
    output=OutputTool(Draft),
    validation=ValidationConfig(max_attempts=1),
)
coordinator = define_agent(
    name="coordinator",
    model="claude-sonnet-4-6",
    instructions="You coordinate.",
    output=OutputTool(Report),
    helpers=[researcher.as_tool(), writer.as_tool()],
)


def _cost(model: str, usage: TokenUsage) -> float:
    price = price_for(model)
    assert price is not None
    return price.cost_usd(usage)


def _team(request: MessagesRequest) -> object:
    """The coordinator and its two specialists, each answering its own conversation (they run at the same time)."""
    system, turns = str(request.get("system")), len(request["messages"])
    if system.startswith("You coordinate."):
        if turns == 1:
            return response(
                tool_call("researcher", {"task": "Find facts about VPNs"}),
                tool_call("writer", {"task": "Draft a note"}),
                usage=usage(10_000, 1_000),
            )
        return response(output_call(Report(summary="VPN note")), usage=usage(12_000, 1_200))
    if system.startswith("You find facts."):
        if turns == 1:
            return response(tool_call("search", {"query": "vpn"}), usage=usage(20_000, 2_000))
        return response(output_call(Facts(facts=["VPNs drop hourly"])), usage=usage(30_000, 3_000))
    assert system.startswith("You write.")
    return response(text("I would rather not."), usage=usage(5_000, 500))  # no tool call, one attempt: a failure


async def test_delegation_coordinator_and_two_specialists_one_failing() -> None:
    """Both specialists run as sub-runs; the failing one is a tool error; totals roll up, to the token and cent."""
    client = FunctionClient(_team)
    result = await execute_agent(coordinator, "Write a VPN note", client=client)
    assert_api_valid(result, client)
    assert result.ok
    assert result.output == Report(summary="VPN note")
    metadata = result.metadata

    # The sub-runs, with their own metadata.
    first, second = (f"toolu_01_{n:03d}" for n in (1, 2))
    by_agent = {s.agent_name: s for s in metadata.sub_executions}
    assert len(metadata.sub_executions) == 2
    found, failed = by_agent["researcher"], by_agent["writer"]
    assert isinstance(found, SubExecution)
    assert (found.tool_call_id, found.ok, found.error_code) == (first, True, None)
    assert (failed.tool_call_id, failed.ok, failed.error_code) == (second, False, AgentErrorCode.INVALID_RESPONSE)
    assert found.metadata.tokens == TokenUsage(input_tokens=50_000, output_tokens=5_000)
    assert found.metadata.iterations == 2
    assert found.metadata.model == "claude-haiku-4-5"
    assert found.metadata.cost_usd == pytest.approx(0.075)  # 50k in at $1/M + 5k out at $5/M
    assert failed.metadata.tokens == TokenUsage(input_tokens=5_000, output_tokens=500)
    assert failed.metadata.cost_usd == pytest.approx(0.0225)  # 5k in at $3/M + 500 out at $15/M

    # Roll-up: the parent's totals are its own responses plus every sub-run's.
    assert metadata.tokens == TokenUsage(input_tokens=77_000, output_tokens=7_700)
    assert metadata.iterations == 5
    assert [record.iterations for record in metadata.attempts] == [2]
    assert metadata.attempts[0].tokens == metadata.tokens
    own = _cost("claude-sonnet-4-6", TokenUsage(input_tokens=22_000, output_tokens=2_200))
    assert own == pytest.approx(0.099)
    assert metadata.cost_usd == pytest.approx(0.099 + 0.075 + 0.0225)
    assert metadata.tool_calls == 2

    # What the coordinator's model read: the researcher's output as JSON, the writer's failure as an error.
    results = results_of(metadata.messages[2])
    assert results[0] == (first, '{"facts":["VPNs drop hourly"]}', False)
    assert results[1][0] == second
    assert results[1][1].startswith("Error: the 'writer' agent failed (INVALID_RESPONSE): No valid output after 1")
    assert results[1][2] is True

    # Each sub-run had its own conversation, on the parent's client: its prompt is the task.
    researcher_requests = [r for r in client.requests if str(r.get("system")).startswith("You find facts.")]
    assert [r["messages"][0] for r in researcher_requests] == [{"role": "user", "content": "Find facts about VPNs"}] * 2
    assert [t["name"] for t in researcher_requests[0]["tools"]] == ["search", "final_output"]
    assert found.metadata.messages[2]["content"][0]["content"] == "notes about vpn"


class Query(BaseModel):
    topic: str
    depth: int = Field(ge=1)

    @field_validator("topic")
    @classmethod
    def not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("topic must not be blank")
        return value


@dataclass
class Shop:
    name: str
    catalogue: list[str]


@dataclass
class Catalogue:
    items: list[str]


@tool
def items(ctx: RunContext[Catalogue]) -> list[str]:
    """The items of the catalogue."""
    return ctx.deps.items


async def test_delegation_input_type_prompt_and_deps_functions() -> None:
    """A custom input type is the tool's input; prompt and deps functions build the sub-run's prompt and deps."""
    lister = define_agent(
        name="lister", model="claude-sonnet-4-6", output=OutputTool(Facts), helpers=[items], deps_type=Catalogue
    )
    helper = lister.as_tool(
        name="list_items",
        description="List what the shop sells.",
        input_type=Query,
        prompt=lambda query: f"List {query.topic} ({query.depth} levels).",
        deps=lambda shop: Catalogue(items=shop.catalogue),
    )
    param = helper.to_param()
    assert param["name"] == "list_items"
    assert param.get("description") == "List what the shop sells."
    assert param["input_schema"]["properties"].keys() == {"topic", "depth"}
    assert param["input_schema"]["required"] == ["topic", "depth"]
    shop_agent = define_agent(
        name="shop", model="claude-sonnet-4-6", output=OutputTool(Report), helpers=[helper], deps_type=Shop
    )
    client = ScriptedClient(
        [
            response(
                tool_call("list_items", {"topic": " ", "depth": 1}),  # fails the input type's own validator
                tool_call("list_items", {"topic": "hats", "depth": 2}),
            ),
            tool_call("items"),
            output_call(Facts(facts=["red hat"])),
            output_call(Report(summary="hats")),
        ]
    )
    result = await execute_agent(shop_agent, "What do we sell?", deps=Shop("s", ["red hat"]), client=client)
    assert_api_valid(result, client)
    assert result.ok
    invalid, listed = results_of(result.metadata.messages[2])
    assert invalid[2] is True
    assert "topic: Value error, topic must not be blank" in invalid[1]
    assert listed == ("toolu_01_002", '{"facts":["red hat"]}', False)
    assert client.requests[1]["messages"][0] == {"role": "user", "content": "List hats (2 levels)."}
    assert client.requests[2]["messages"][2]["content"][0]["content"] == '["red hat"]'
    assert [s.tool_call_id for s in result.metadata.sub_executions] == ["toolu_01_002"]


async def test_delegation_default_prompt_is_the_input_as_json_for_another_input_type() -> None:
    """Without a prompt function, a custom input type reaches the sub-agent as its JSON."""
    client = ScriptedClient([tool_call("researcher", {"topic": "vpn", "depth": 3}), output_call(Facts(facts=[])), "x"])
    parent = define_agent(
        name="parent",
        model="claude-sonnet-4-6",
        output=OutputTool(Report),
        helpers=[researcher.as_tool(input_type=Query)],
    )
    await execute_agent(parent, "go", client=client, limits=ExecutionLimits(max_requests=2))
    assert client.requests[1]["messages"][0] == {"role": "user", "content": '{"topic":"vpn","depth":3}'}


async def test_delegation_default_tool_definition() -> None:
    """The default tool: the agent's name, a description naming it and its output, and one ``task`` field."""
    param = researcher.as_tool().to_param()
    assert param["name"] == "researcher"
    assert param.get("description") == (
        "Hand a task over to the 'researcher' agent; it works on it alone and returns its result (Facts) as JSON."
    )
    schema = param["input_schema"]
    assert schema["type"] == "object"
    assert schema["required"] == ["task"]
    assert schema["properties"]["task"]["type"] == "string"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"name": "has space"}, r"as_tool\(name='has space'\) is not a valid tool name"),
        ({"input_type": dict}, r"as_tool\(input_type=...\) must be a pydantic model class"),
        ({"prompt": "text"}, r"as_tool\(prompt=...\) must be a function"),
        ({"deps": 3}, r"as_tool\(deps=...\) must be a function"),
        ({"max_depth": 0}, r"max_depth=...\) must be an int from 1 to 20, got 0"),
        ({"max_depth": 21}, r"from 1 to 20, got 21"),
        ({"max_depth": True}, r"got True"),
        ({"description": 3}, r"as_tool\(description=...\) must be a string"),
    ],
)
def test_delegation_bad_options_are_definition_errors(options: dict[str, Any], message: str) -> None:
    """Every option of ``as_tool`` is checked when the tool is made, with a message that says what to do."""
    with pytest.raises(AgentDefinitionError, match=message):
        researcher.as_tool(**options)


def test_delegation_agent_name_that_is_no_tool_name() -> None:
    """An agent whose name cannot be a tool name needs ``name=``."""
    spaced = define_agent(name="fact finder", model="claude-sonnet-4-6", output=OutputTool(Facts))
    with pytest.raises(AgentDefinitionError, match=r"pass as_tool\(name=...\)"):
        spaced.as_tool()
    assert spaced.as_tool(name="fact_finder").name == "fact_finder"


async def test_delegation_outside_an_execution_is_refused() -> None:
    """Called by hand with a context of no running execution, the tool says how it is meant to be called."""
    ctx = RunContext(deps=None, agent_name="x", model="m", attempt=1, iteration=1, tokens=TokenUsage())
    delegate = researcher.as_tool(input_type=Ask)
    with pytest.raises(RuntimeError, match="call it with the RunContext a helper tool of a running execution"):
        await delegate(ctx, Ask(task="go"))


async def test_delegation_sub_run_api_error_is_a_tool_error() -> None:
    """A sub-run that fails on an API error is a tool error for the parent, which goes on."""
    client = ScriptedClient(
        [tool_call("writer", {"task": "draft"}), api_error(400, "bad request"), output_call(Report(summary="ok"))]
    )
    result = await execute_agent(coordinator, "go", client=client)
    assert result.ok
    [(_, content, is_error)] = results_of(result.metadata.messages[2])
    assert is_error
    assert content.startswith("Error: the 'writer' agent failed (API_ERROR): The Messages API call failed")
    assert result.metadata.sub_executions[0].error_code is AgentErrorCode.API_ERROR
    assert result.metadata.iterations == 3


async def test_delegation_parent_token_budget_bounds_the_sub_run() -> None:
    """A sub-run stops at the parent's token budget; then the parent does too: neither spends what is not left."""
    client = ScriptedClient(
        [
            response(tool_call("researcher", {"task": "dig"}), usage=usage(50, 10)),
            response(tool_call("search", {"query": "a"}), usage=usage(40, 10)),  # total 110 >= 100
        ]
    )
    result = await execute_agent(coordinator, "go", client=client, limits=ExecutionLimits(max_total_tokens=100))
    assert not result.ok
    assert result.error.code is AgentErrorCode.TOKEN_BUDGET_EXCEEDED
    assert result.metadata.tokens.total == 110
    assert len(client.requests) == 2
    [sub] = result.metadata.sub_executions
    assert sub.error_code is AgentErrorCode.TOKEN_BUDGET_EXCEEDED
    assert sub.metadata.tokens.total == 50
    [(_, content, is_error)] = results_of(result.metadata.messages[2])
    assert is_error
    assert "(TOKEN_BUDGET_EXCEEDED): The token budget of 100 was reached (110 tokens used)" in content


async def test_delegation_parent_request_limit_bounds_the_sub_run() -> None:
    """The sub-run's API calls count against the parent's ``max_requests``."""
    client = ScriptedClient([tool_call("researcher", {"task": "dig"}), tool_call("search", {"query": "a"})])
    result = await execute_agent(coordinator, "go", client=client, limits=ExecutionLimits(max_requests=2))
    assert not result.ok
    assert result.error.code is AgentErrorCode.REQUEST_LIMIT_EXCEEDED
    assert result.metadata.iterations == 2
    assert result.metadata.sub_executions[0].error_code is AgentErrorCode.REQUEST_LIMIT_EXCEEDED


async def test_delegation_parent_cost_limit_bounds_the_sub_run() -> None:
    """The sub-run's cost counts against the parent's ``max_cost_usd``, priced at the sub-agent's model."""
    client = ScriptedClient(
        [
            response(tool_call("researcher", {"task": "dig"}), usage=usage(1_000, 100)),  # $0.0045
            response(tool_call("search", {"query": "a"}), usage=usage(10_000, 1_000)),  # $0.015 at haiku
        ]
    )
    result = await execute_agent(coordinator, "go", client=client, limits=ExecutionLimits(max_cost_usd=0.01))
    assert not result.ok
    assert result.error.code is AgentErrorCode.COST_LIMIT_EXCEEDED
    assert result.metadata.cost_usd == pytest.approx(0.0195)
    assert result.metadata.sub_executions[0].error_code is AgentErrorCode.COST_LIMIT_EXCEEDED


async def test_delegation_unpriced_sub_agent_under_a_cost_limit_is_a_tool_error() -> None:
    """A sub-agent whose cost cannot be counted is refused under a cost limit (no sub-run), with what to do."""
    unpriced = define_agent(name="local", model="my-local-model", output=OutputTool(Facts))
    parent = define_agent(name="p", model="claude-sonnet-4-6", output=OutputTool(Report), helpers=[unpriced.as_tool()])
    client = ScriptedClient([tool_call("local", {"task": "x"}), output_call(Report(summary="alone"))])
    result = await execute_agent(parent, "go", client=client, limits=ExecutionLimits(max_cost_usd=1.0))
    assert result.ok
    [(_, content, is_error)] = results_of(result.metadata.messages[2])
    assert is_error
    assert "typedagent.register_price('my-local-model', ModelPrice(...))" in content
    assert result.metadata.sub_executions == ()


async def test_delegation_unpriced_sub_agent_makes_the_cost_unknown() -> None:
    """Without a cost limit an unpriced sub-agent runs, and the parent's total cost is unknown (None)."""
    unpriced = define_agent(name="local", model="my-local-model", output=OutputTool(Facts))
    parent = define_agent(name="p", model="claude-sonnet-4-6", output=OutputTool(Report), helpers=[unpriced.as_tool()])
    client = ScriptedClient(
        [tool_call("local", {"task": "x"}), output_call(Facts(facts=[])), output_call(Report(summary="s"))]
    )
    result = await execute_agent(parent, "go", client=client)
    assert result.ok
    assert result.metadata.cost_usd is None
    assert result.metadata.sub_executions[0].metadata.cost_usd is None


async def test_delegation_parent_deadline_interrupts_the_sub_run() -> None:
    """The parent's deadline is the sub-run's: a slow sub-run call is interrupted and the parent times out."""
    client = ScriptedClient([tool_call("researcher", {"task": "dig"}), delay(5, output_call(Facts(facts=[])))])
    result = await execute_agent(coordinator, "go", client=client, limits=ExecutionLimits(timeout_s=0.3))
    assert not result.ok
    assert result.error.code is AgentErrorCode.TIMEOUT
    assert result.metadata.latency_ms < 2_000
    [sub] = result.metadata.sub_executions
    assert sub.error_code is AgentErrorCode.TIMEOUT
    assert sub.metadata.iterations == 1


async def test_delegation_parent_abort_event_cancels_the_sub_run() -> None:
    """The parent's abort event is the sub-run's: setting it while the sub-run waits cancels both."""
    stop = asyncio.Event()
    client = ScriptedClient([tool_call("researcher", {"task": "dig"}), delay(5, output_call(Facts(facts=[])))])
    task = asyncio.create_task(execute_agent(coordinator, "go", client=client, abort_event=stop))
    while len(client.requests) < 2:  # noqa: ASYNC110 - waiting for the sub-run's call to be in flight
        await asyncio.sleep(0.01)
    stop.set()
    result = await asyncio.wait_for(task, 2)
    assert not result.ok
    assert result.error.code is AgentErrorCode.EXECUTION_CANCELLED
    assert result.metadata.sub_executions[0].error_code is AgentErrorCode.EXECUTION_CANCELLED
    assert_api_valid(result, client)


async def test_delegation_concurrent_sub_runs_each_overshoot_by_their_response_in_flight() -> None:
    """Two sub-runs in flight at once can each pass the shared token budget by the response they wait for."""
    client = ScriptedClient(
        [
            response(
                tool_call("researcher", {"task": "a"}), tool_call("researcher", {"task": "b"}), usage=usage(30, 10)
            ),
            delay(0.05, response(tool_call("search", {"query": "a"}), usage=usage(40, 10))),
            delay(0.05, response(tool_call("search", {"query": "b"}), usage=usage(40, 10))),
        ]
    )
    result = await execute_agent(coordinator, "go", client=client, limits=ExecutionLimits(max_total_tokens=60))
    assert not result.ok
    assert result.error.code is AgentErrorCode.TOKEN_BUDGET_EXCEEDED
    assert result.metadata.tokens.total == 140  # 40 in hand, then two responses of 50 that were both in flight
    assert [s.error_code for s in result.metadata.sub_executions] == [AgentErrorCode.TOKEN_BUDGET_EXCEEDED] * 2


class Depth(BaseModel):
    depth: int


class Ask(BaseModel):
    task: str


async def test_delegation_past_max_depth_is_a_tool_error_not_a_stack_overflow() -> None:
    """An agent delegating to itself stops at ``max_depth``: the call past it is a tool error for that model."""

    @tool
    async def again(ctx: RunContext[None], task: str) -> str:
        """Hand the task to yourself."""
        return await recursive.as_tool(name="self_call", input_type=Ask, max_depth=2)(ctx, Ask(task=task))

    recursive = define_agent(name="recursive", model="claude-sonnet-4-6", output=OutputTool(Depth), helpers=[again])
    client = ScriptedClient(
        [
            tool_call("again", {"task": "t"}),  # top level
            tool_call("again", {"task": "t"}),  # depth 1
            tool_call("again", {"task": "t"}),  # depth 2: its call would be depth 3
            output_call(Depth(depth=2)),
            output_call(Depth(depth=1)),
            output_call(Depth(depth=0)),
        ]
    )
    result = await execute_agent(recursive, "go", client=client)
    assert result.ok
    assert result.output == Depth(depth=0)
    deepest = result.metadata.sub_executions[0].metadata.sub_executions[0].metadata
    assert deepest.sub_executions == ()
    [(_, content, is_error)] = results_of(deepest.messages[2])
    assert is_error
    assert content == (
        "Error: cannot hand this over to the 'recursive' agent: it would run 3 levels below the top-level "
        "execution, past its max_depth of 2. Do this part of the task yourself."
    )
    assert result.metadata.iterations == 6


async def test_delegation_parent_callbacks_see_the_sub_runs_tool_calls() -> None:
    """The parent's on_tool_call/on_tool_result see the sub-run's tool calls, ``state.agent_name`` naming the agent."""
    seen: list[tuple[str, str, str]] = []

    def on_call(state: ExecutionState, event: ToolCall) -> None:
        seen.append((state.agent_name, "call", event.name))

    def on_result(state: ExecutionState, event: ToolResult) -> None:
        seen.append((state.agent_name, "result", event.name))
        if event.name == "search":
            raise RuntimeError("logger down")

    client = ScriptedClient(
        [
            tool_call("researcher", {"task": "dig"}),
            tool_call("search", {"query": "a"}),
            output_call(Facts(facts=[])),
            output_call(Report(summary="done")),
        ]
    )
    callbacks = ExecuteCallbacks(on_tool_call=on_call, on_tool_result=on_result)
    result = await execute_agent(coordinator, "go", client=client, callbacks=callbacks)
    assert result.ok
    assert seen == [
        ("coordinator", "call", "researcher"),
        ("researcher", "call", "search"),
        ("researcher", "result", "search"),
        ("researcher", "call", "final_output"),
        ("researcher", "result", "final_output"),
        ("coordinator", "result", "researcher"),
        ("coordinator", "call", "final_output"),
        ("coordinator", "result", "final_output"),
    ]
    assert [error.message for error in result.metadata.callback_errors] == ["logger down"]
    assert result.metadata.sub_executions[0].metadata.callback_errors == ()


async def test_delegation_sub_agent_gets_the_parent_deps_or_none() -> None:
    """By default a sub-agent with a deps type gets the parent's deps; one without gets None."""
    seen: list[object] = []

    @tool
    def peek(ctx: RunContext[Shop]) -> str:
        """Peek at the deps."""
        seen.append(ctx.deps)
        return "ok"

    @tool
    def peek_none(ctx: RunContext[None]) -> str:
        """Peek at the deps."""
        seen.append(ctx.deps)
        return "ok"

    with_deps = define_agent(
        name="with_deps", model="claude-sonnet-4-6", output=OutputTool(Facts), helpers=[peek], deps_type=Shop
    )
    without = define_agent(name="without", model="claude-sonnet-4-6", output=OutputTool(Facts), helpers=[peek_none])
    parent = define_agent(
        name="parent",
        model="claude-sonnet-4-6",
        output=OutputTool(Report),
        helpers=[with_deps.as_tool(), without.as_tool()],
        deps_type=Shop,
    )
    shop = Shop("s", [])
    client = ScriptedClient(
        [
            tool_call("with_deps", {"task": "a"}),
            tool_call("peek"),
            output_call(Facts(facts=[])),
            tool_call("without", {"task": "b"}),
            tool_call("peek_none"),
            output_call(Facts(facts=[])),
            output_call(Report(summary="s")),
        ]
    )
    result = await execute_agent(parent, "go", deps=shop, client=client)
    assert result.ok
    assert seen == [shop, None]


def _delegating_script() -> list[Any]:
    return [
        tool_call("researcher", {"task": "dig"}),
        response(text("Searching."), tool_call("search", {"query": "a"})),
        output_call(Facts(facts=["f"])),
        output_call(Report(summary="done")),
    ]


async def test_delegation_sub_run_spans_nest_under_the_tool_span(captured_spans: InMemorySpanExporter) -> None:
    """The sub-run's invoke_agent span is a child of the parent's execute_tool span, in the same trace."""
    result = await execute_agent(coordinator, "go", client=ScriptedClient(_delegating_script()))
    assert result.ok
    spans = captured_spans.get_finished_spans()
    by_name = {span.name: span for span in spans}
    top, sub = by_name["invoke_agent coordinator"], by_name["invoke_agent researcher"]
    delegation = by_name["execute_tool researcher"]
    assert top.parent is None
    assert delegation.parent is not None
    assert top.context is not None
    assert delegation.parent.span_id == top.context.span_id
    assert sub.parent is not None
    assert delegation.context is not None
    assert sub.parent.span_id == delegation.context.span_id
    assert sub.context is not None
    assert sub.context.trace_id == top.context.trace_id
    search_span = by_name["execute_tool search"]
    assert search_span.parent is not None
    assert search_span.parent.span_id == sub.context.span_id
    haiku_chats = [span for span in spans if span.name == "chat claude-haiku-4-5"]
    assert len(haiku_chats) == 2
    assert all(span.parent is not None and span.parent.span_id == sub.context.span_id for span in haiku_chats)


async def test_delegation_stream_shows_sub_agent_events_tagged_with_its_name() -> None:
    """``include_sub_agents=True``: the sub-agent's events arrive, ``sub_agent`` naming it; without it, they do not."""

    async def events(**options: Any) -> list[AgentStreamEvent[Report]]:
        async with stream_agent(coordinator, "go", client=ScriptedClient(_delegating_script()), **options) as run:
            found = [event async for event in run]
        assert run.result.ok
        return found

    shown = await events(include_sub_agents=True)
    tagged = [event for event in shown if event.sub_agent is not None]
    assert {event.sub_agent for event in tagged} == {"researcher"}
    assert "".join(event.text for event in tagged if isinstance(event, TextDelta)) == "Searching."
    finished = [event for event in tagged if isinstance(event, ToolCallFinished)]
    assert [event.name for event in finished] == ["search", "final_output"]
    assert not any(isinstance(event, PartialOutput) for event in tagged)  # its output is not the stream's type
    own = [event for event in shown if event.sub_agent is None]
    assert [event.name for event in own if isinstance(event, ToolCallFinished)] == [
        "researcher",
        "final_output",
    ]
    hidden = await events()
    assert all(event.sub_agent is None for event in hidden)
    assert [event.kind for event in hidden] == [event.kind for event in own]
    assert isinstance(shown[-1], Finished)


async def test_delegation_deps_function_that_raises_is_a_tool_error() -> None:
    """A ``deps=`` function that raises is the calling model's tool error; no sub-run starts."""

    def no_catalogue(shop: Shop) -> Catalogue:
        raise LookupError(f"shop {shop.name!r} has no catalogue")

    lister = define_agent(
        name="lister", model="claude-sonnet-4-6", output=OutputTool(Facts), helpers=[items], deps_type=Catalogue
    )
    parent = define_agent(
        name="shop",
        model="claude-sonnet-4-6",
        output=OutputTool(Report),
        helpers=[lister.as_tool(deps=no_catalogue)],
        deps_type=Shop,
    )
    client = ScriptedClient([tool_call("lister", {"task": "list"}), output_call(Report(summary="none"))])
    result = await execute_agent(parent, "go", deps=Shop("north", []), client=client)
    assert result.ok
    [(_, content, is_error)] = results_of(result.metadata.messages[2])
    assert is_error
    assert content == "Error: shop 'north' has no catalogue"
    assert result.metadata.sub_executions == ()
    assert len(client.requests) == 2

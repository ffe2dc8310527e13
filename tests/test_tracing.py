"""OpenTelemetry spans: ``invoke_agent`` per execution, ``chat`` per model call (never twice), ``execute_tool``."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from anthropic.types import MemoryTool20250818Param
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from support import GOOD, Triage, reflecting, run, triage_agent

from typedagent import (
    AgentErrorCode,
    ExecutionLimits,
    HelperTool,
    OutputRejected,
    OutputTool,
    ValidationConfig,
    execute_agent,
    execute_agent_sync,
    execute_many,
    instrument,
    stream_agent,
    tool,
)
from typedagent._observability.settings import Settings, swap_settings
from typedagent.server_tools import web_search
from typedagent.testing import (
    FakeAnthropicServer,
    ScriptedClient,
    api_error,
    delay,
    malformed_body,
    output_call,
    response,
    submit_call,
    thinking,
    tool_call,
    usage,
    web_search_call,
    web_search_result,
)


@tool
async def lookup(query: str) -> str:
    """Look up a ticket."""
    return f"found {query}"


def _named(spans: Sequence[ReadableSpan], prefix: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name.startswith(prefix)]


def _one(spans: Sequence[ReadableSpan], prefix: str) -> ReadableSpan:
    found = _named(spans, prefix)
    assert len(found) == 1, [span.name for span in spans]
    return found[0]


def _parent_id(span: ReadableSpan) -> int | None:
    return None if span.parent is None else span.parent.span_id


def _span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


def _trace_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.trace_id


@pytest.fixture
def content_spans() -> Iterator[InMemorySpanExporter]:
    """Spans captured with content recorded (``instrument(include_content=True)``)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    previous = swap_settings(Settings())
    instrument(tracer_provider=provider, include_content=True)
    yield exporter
    swap_settings(previous)


async def test_tracing_success_span_tree(captured_spans: InMemorySpanExporter) -> None:
    """A successful execution: an invoke_agent span with the agent's attributes and usage, chat and tool children."""
    client = ScriptedClient([response(tool_call("lookup", {"query": "VPN"})), response(output_call(GOOD))])
    result = await run(triage_agent(helpers=[lookup]), client)
    assert result.ok
    spans = captured_spans.get_finished_spans()
    agent = _one(spans, "invoke_agent")
    attributes = dict(agent.attributes or {})
    assert agent.name == "invoke_agent triage"
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert attributes["gen_ai.provider.name"] == "anthropic"
    assert attributes["gen_ai.agent.name"] == "triage"
    assert attributes["gen_ai.request.model"] == "claude-sonnet-4-6"
    assert attributes["typedagent.outcome"] == "success"
    assert attributes["typedagent.iterations"] == 2
    assert attributes["typedagent.usage.input_tokens"] == result.metadata.tokens.input_tokens == 20
    assert attributes["typedagent.usage.output_tokens"] == 10
    assert attributes["typedagent.usage.cache_creation.input_tokens"] == 0
    assert "typedagent.usage.cache_write.input_tokens" not in attributes
    assert not any(name.startswith("gen_ai.usage.") for name in attributes)
    assert "lookup" in str(attributes["gen_ai.tool.definitions"])
    assert agent.status.status_code is not StatusCode.ERROR
    chats = _named(spans, "chat ")
    assert [chat.name for chat in chats] == ["chat claude-sonnet-4-6"] * 2
    assert all(_parent_id(chat) == _span_id(agent) for chat in chats)
    assert [dict(chat.attributes or {})["gen_ai.usage.input_tokens"] for chat in chats] == [10, 10]
    conversation = attributes["gen_ai.conversation.id"]
    assert all(dict(chat.attributes or {})["gen_ai.conversation.id"] == conversation for chat in chats)
    tools = _named(spans, "execute_tool")
    assert sorted(span.name for span in tools) == ["execute_tool final_output", "execute_tool lookup"]
    kinds = {dict(span.attributes or {})["typedagent.tool.kind"] for span in tools}
    assert kinds == {"helper", "output"}
    assert all(_parent_id(span) == _span_id(agent) for span in tools)
    helper = _one(tools, "execute_tool lookup")
    assert (
        dict(helper.attributes or {})["gen_ai.tool.call.id"]
        == client.requests[1]["messages"][-1]["content"][0]["tool_use_id"]
    )
    assert dict(helper.attributes or {})["gen_ai.tool.type"] == "function"


@pytest.mark.parametrize("mode", ["tool", "native", "prompted"])
async def test_tracing_span_names_the_output_mode(mode: Any, captured_spans: InMemorySpanExporter) -> None:
    """The invoke_agent span says how the output is handed over; a JSON answer is no execute_tool span."""
    client = ScriptedClient([response(tool_call("lookup", {"query": "VPN"})), response(output_call(GOOD))])
    result = await run(triage_agent(output=OutputTool(Triage, mode=mode), helpers=[lookup]), client)
    assert result.ok
    spans = captured_spans.get_finished_spans()
    assert dict(_one(spans, "invoke_agent").attributes or {})["typedagent.output.mode"] == mode
    tools = sorted(span.name for span in _named(spans, "execute_tool"))
    assert tools == (
        ["execute_tool final_output", "execute_tool lookup"] if mode == "tool" else ["execute_tool lookup"]
    )


async def test_tracing_reflection_tools_are_spans(captured_spans: InMemorySpanExporter) -> None:
    """Output preview and submit are execute_tool spans of their own kinds."""
    client = ScriptedClient([response(output_call(GOOD)), response(submit_call())])
    assert (await run(triage_agent(output=reflecting()), client)).ok
    kinds = [
        dict(span.attributes or {})["typedagent.tool.kind"]
        for span in _named(captured_spans.get_finished_spans(), "execute_tool")
    ]
    assert sorted(kinds) == ["output", "submit"]


def _reject(output: Triage) -> Triage:
    raise OutputRejected("severity must be 5")


def _crash(output: Triage) -> Triage:
    raise RuntimeError("validator bug")


FAILURES: dict[str, tuple[list[Any], dict[str, Any], AgentErrorCode]] = {
    "api_error": ([api_error(400)], {}, AgentErrorCode.API_ERROR),
    "refusal": ([response("no", stop_reason="refusal")], {}, AgentErrorCode.REFUSAL),
    "validation": (
        [response(output_call(GOOD)), response(output_call(GOOD))],
        {"validators": [_reject], "validation": ValidationConfig(max_attempts=2)},
        AgentErrorCode.VALIDATION_FAILED,
    ),
    "validator_crash": ([response(output_call(GOOD))], {"validators": [_crash]}, AgentErrorCode.VALIDATOR_ERROR),
    "max_tokens": (
        [response("cut", stop_reason="max_tokens")],
        {"validation": ValidationConfig(max_attempts=1)},
        AgentErrorCode.MAX_TOKENS,
    ),
    "malformed_response": ([malformed_body()], {}, AgentErrorCode.API_ERROR),
    "max_iterations": (
        [response(tool_call("lookup", {"query": "a"}))] * 2,
        {"helpers": [lookup], "validation": ValidationConfig(max_attempts=1, max_iterations_per_attempt=2)},
        AgentErrorCode.MAX_ITERATIONS,
    ),
    "tool_call_limit": (
        [response(tool_call("lookup", {"query": "a"}), tool_call("lookup", {"query": "b"}))],
        {"helpers": [lookup]},
        AgentErrorCode.TOOL_CALL_LIMIT_EXCEEDED,
    ),
    "token_budget": (
        [response(tool_call("lookup", {"query": "a"}), usage=usage(500, 500))],
        {"helpers": [lookup]},
        AgentErrorCode.TOKEN_BUDGET_EXCEEDED,
    ),
}


@pytest.mark.parametrize("family", sorted(FAILURES))
async def test_tracing_failure_sets_error_type_and_status(family: str, captured_spans: InMemorySpanExporter) -> None:
    """Every failure family marks the execution span ERROR with error.type = the AgentErrorCode."""
    script, overrides, code = FAILURES[family]
    limits = {
        "token_budget": ExecutionLimits(max_total_tokens=100),
        "tool_call_limit": ExecutionLimits(max_tool_calls=1),
    }
    result = await run(triage_agent(**overrides), ScriptedClient(script), limits=limits.get(family))
    assert not result.ok
    assert result.error.code is code
    agent = _one(captured_spans.get_finished_spans(), "invoke_agent")
    attributes = dict(agent.attributes or {})
    assert agent.status.status_code is StatusCode.ERROR
    assert attributes["error.type"] == code.value
    assert attributes["typedagent.outcome"] == "failure"
    attempts = [event for event in agent.events if event.name == "typedagent.attempt"]
    assert [dict(event.attributes or {})["typedagent.attempt"] for event in attempts] == [
        record.number for record in result.metadata.attempts
    ]


async def test_tracing_validation_attempts_are_events(captured_spans: InMemorySpanExporter) -> None:
    """Each attempt is an event with its outcome; a rejected one counts its problems."""
    agent = triage_agent(validators=[_reject], validation=ValidationConfig(max_attempts=2))
    await run(agent, ScriptedClient([response(output_call(GOOD))] * 2))
    span = _one(captured_spans.get_finished_spans(), "invoke_agent")
    events = [dict(event.attributes or {}) for event in span.events if event.name == "typedagent.attempt"]
    assert [event["typedagent.attempt.outcome"] for event in events] == ["VALIDATION_FAILED"] * 2
    assert all(event["typedagent.attempt.problem_count"] == 1 for event in events)
    assert all("typedagent.attempt.problems" not in event for event in events)


async def test_tracing_failed_model_call_is_error_chat_span(captured_spans: InMemorySpanExporter) -> None:
    """Typedagent's chat span of a failed call has error.type from the API and status ERROR."""
    await run(triage_agent(), ScriptedClient([api_error(400)]))
    chat = _one(captured_spans.get_finished_spans(), "chat ")
    assert chat.status.status_code is StatusCode.ERROR
    assert dict(chat.attributes or {})["error.type"] == "invalid_request_error"


async def test_tracing_abort_is_cancelled(captured_spans: InMemorySpanExporter) -> None:
    """An aborted execution's span carries error.type cancelled."""
    event = threading.Event()
    event.set()
    await run(triage_agent(), ScriptedClient(), abort_event=event)
    agent = _one(captured_spans.get_finished_spans(), "invoke_agent")
    assert dict(agent.attributes or {})["error.type"] == AgentErrorCode.EXECUTION_CANCELLED.value


async def test_tracing_server_tool_calls_are_events(captured_spans: InMemorySpanExporter) -> None:
    """A web search the API ran shows as events on the execution span."""
    found = web_search_result([("VPN docs", "https://example.com/vpn")])
    client = ScriptedClient([response(web_search_call("vpn"), found, output_call(GOOD))])
    assert (await run(triage_agent(server_tools=[web_search()]), client)).ok
    agent = _one(captured_spans.get_finished_spans(), "invoke_agent")
    names = [event.name for event in agent.events]
    assert "typedagent.server_tool_call" in names
    assert "typedagent.server_tool_result" in names
    call = next(event for event in agent.events if event.name == "typedagent.server_tool_call")
    assert dict(call.attributes or {})["gen_ai.tool.name"] == "web_search"


async def test_tracing_content_is_off_by_default(captured_spans: InMemorySpanExporter) -> None:
    """Without the switch no prompt, argument, result or output reaches any span."""
    client = ScriptedClient([response(tool_call("lookup", {"query": "SECRET-QUERY"})), response(output_call(GOOD))])
    await run(triage_agent(helpers=[lookup]), client, prompt="PRIVATE-PROMPT")
    dumped = repr([dict(span.attributes or {}) for span in captured_spans.get_finished_spans()])
    for private in ("PRIVATE-PROMPT", "SECRET-QUERY", "VPN drops hourly"):
        assert private not in dumped


async def test_tracing_content_switch_records_content(content_spans: InMemorySpanExporter) -> None:
    """With include_content the prompt, tool arguments and result, instructions and output are recorded."""
    client = ScriptedClient([response(tool_call("lookup", {"query": "Q1"})), response(output_call(GOOD))])
    await run(triage_agent(helpers=[lookup], instructions="Be brief."), client, prompt="PROMPT-1")
    spans = content_spans.get_finished_spans()
    agent = dict(_one(spans, "invoke_agent").attributes or {})
    assert "PROMPT-1" in str(agent["gen_ai.input.messages"])
    assert "Be brief." in str(agent["gen_ai.system_instructions"])
    assert "VPN drops hourly" in str(agent["gen_ai.output.messages"])
    helper = dict(_one(spans, "execute_tool lookup").attributes or {})
    assert "Q1" in str(helper["gen_ai.tool.call.arguments"])
    assert helper["gen_ai.tool.call.result"] == "found Q1"
    chat = dict(_named(spans, "chat ")[1].attributes or {})
    assert "found Q1" in str(chat["gen_ai.input.messages"])
    assert "final_output" in str(chat["gen_ai.output.messages"])


async def test_tracing_sdk_client_span_once_and_nested(
    fake_anthropic_server: FakeAnthropicServer, content_spans: InMemorySpanExporter
) -> None:
    """Through the SDK client its own span is the call's only span, nested under the execution, content on."""
    secret = "sk-ant-api03-SECRETKEY"
    fake_anthropic_server.add(response(tool_call("lookup", {"query": "x"})), response(output_call(GOOD)))
    client = fake_anthropic_server.client(api_key=secret)
    result = await execute_agent(triage_agent(helpers=[lookup]), "Ticket", client=client)
    assert result.ok
    spans = content_spans.get_finished_spans()
    agent = _one(spans, "invoke_agent")
    assert _named(spans, "chat ") == []
    calls = _named(spans, "anthropic.messages.create")
    assert len(calls) == 2
    assert all(_parent_id(call) == _span_id(agent) for call in calls)
    conversation = dict(agent.attributes or {})["gen_ai.conversation.id"]
    assert all(dict(call.attributes or {})["gen_ai.conversation.id"] == conversation for call in calls)
    assert all("gen_ai.input.messages" in dict(call.attributes or {}) for call in calls)
    assert secret not in repr([dict(span.attributes or {}) for span in spans])
    assert client.open_telemetry["traces"]["content_mode"] == "metadata_only"


async def test_tracing_streamed_sdk_call_traced_once_and_nested(
    fake_anthropic_server: FakeAnthropicServer, content_spans: InMemorySpanExporter
) -> None:
    """A streamed call through the SDK client is traced once, by the SDK's own span, nested under the execution."""
    fake_anthropic_server.add(response(tool_call("lookup", {"query": "x"})), response(output_call(GOOD)))
    client = fake_anthropic_server.client()
    async with stream_agent(triage_agent(helpers=[lookup]), "Ticket", client=client) as run:
        kinds = [event.kind async for event in run]
    assert run.result.ok is True
    assert "partial_output" in kinds
    spans = content_spans.get_finished_spans()
    agent = _one(spans, "invoke_agent")
    calls = _named(spans, "anthropic.messages.create")
    assert _named(spans, "chat ") == []
    assert len(calls) == 2
    assert all(_parent_id(call) == _span_id(agent) for call in calls)
    assert all(dict(call.attributes or {}).get("gen_ai.usage.output_tokens") for call in calls)


async def test_tracing_content_never_holds_the_api_key(
    fake_anthropic_server: FakeAnthropicServer, content_spans: InMemorySpanExporter
) -> None:
    """A tool that returns the client's key: typedagent's spans show it as [redacted]."""
    secret = "sk-ant-api03-SECRETKEY"

    @tool
    def leak(query: str) -> str:
        """Return the key (a careless tool)."""
        return f"key is {secret}"

    fake_anthropic_server.add(response(tool_call("leak", {"query": "x"})), response(output_call(GOOD)))
    client = fake_anthropic_server.client(api_key=secret)
    assert (await execute_agent(triage_agent(helpers=[leak]), "Ticket", client=client)).ok
    spans = content_spans.get_finished_spans()
    own = [span for span in spans if not span.name.startswith("anthropic.")]
    dumped = repr([(dict(span.attributes or {}), [dict(e.attributes or {}) for e in span.events]) for span in own])
    assert secret not in dumped
    assert dict(_one(spans, "execute_tool leak").attributes or {})["gen_ai.tool.call.result"] == "key is [redacted]"


@pytest.mark.parametrize("streamed", [False, True])
async def test_tracing_sdk_spans_never_hold_the_api_key(
    fake_anthropic_server: FakeAnthropicServer, content_spans: InMemorySpanExporter, streamed: bool
) -> None:
    """With content on, the SDK's own messages.create spans show a key in the prompt or a tool result as [redacted]."""
    secret = "sk-ant-api03-SECRETKEY"

    @tool
    def leak(query: str) -> str:
        """Return the key (a careless tool)."""
        return f"key is {secret}"

    fake_anthropic_server.add(response(tool_call("leak", {"query": "x"})), response(output_call(GOOD)))
    client = fake_anthropic_server.client(api_key=secret)
    agent = triage_agent(helpers=[leak])
    prompt = f"Ticket: my key {secret} leaks"
    if streamed:
        async with stream_agent(agent, prompt, client=client) as run:
            _ = [event async for event in run]
        assert run.result.ok
    else:
        assert (await execute_agent(agent, prompt, client=client)).ok
    spans = content_spans.get_finished_spans()
    calls = _named(spans, "anthropic.messages.create")
    assert len(calls) == 2
    dumped = repr([(dict(span.attributes or {}), [dict(e.attributes or {}) for e in span.events]) for span in spans])
    assert secret not in dumped
    inputs = [str(dict(call.attributes or {})["gen_ai.input.messages"]) for call in calls]
    assert "my key [redacted] leaks" in inputs[0]
    assert "key is [redacted]" in inputs[1]
    assert all(_parent_id(call) == _span_id(_one(spans, "invoke_agent")) for call in calls)


async def test_tracing_concurrent_tools_parented_with_their_http_calls(
    fake_anthropic_server: FakeAnthropicServer, captured_spans: InMemorySpanExporter
) -> None:
    """Concurrent tools (one sync, in a thread) have spans under the execution; a tool's SDK call nests in its span."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(captured_spans))
    fake_anthropic_server.add(response("inner answer"))
    inner = fake_anthropic_server.client(open_telemetry={"tracer_provider": provider})

    @tool
    async def ask(question: str) -> str:
        """Ask another model."""
        answer = await inner.messages.create(
            model="claude-haiku-4-5", max_tokens=10, messages=[{"role": "user", "content": question}]
        )
        return str(answer.content[0])

    @tool
    def slow(n: int) -> str:
        """A sync tool."""
        return str(n * 2)

    client = ScriptedClient(
        [response(tool_call("ask", {"question": "q"}), tool_call("slow", {"n": 2})), response(output_call(GOOD))]
    )
    assert (await run(triage_agent(helpers=[ask, slow]), client)).ok
    spans = captured_spans.get_finished_spans()
    agent = _one(spans, "invoke_agent")
    ask_span, slow_span = _one(spans, "execute_tool ask"), _one(spans, "execute_tool slow")
    assert _parent_id(ask_span) == _parent_id(slow_span) == _span_id(agent)
    inner_call = _one(spans, "anthropic.messages.create")
    assert _parent_id(inner_call) == _span_id(ask_span)
    assert len({_trace_id(span) for span in spans}) == 1


async def test_tracing_200_concurrent_executions_never_mix(captured_spans: InMemorySpanExporter) -> None:
    """200 executions at once: each has its own trace, and every chat and tool span sits in its own execution's."""
    count = 200

    async def one(number: int) -> None:
        client = ScriptedClient(
            [
                response(tool_call("lookup", {"query": str(number)}, id=f"toolu_{number}")),
                response(output_call(GOOD, id=f"toolu_out_{number}")),
            ]
        )
        result = await execute_agent(triage_agent(name=f"triage_{number}", helpers=[lookup]), "Ticket", client=client)
        assert result.ok

    await asyncio.gather(*(one(number) for number in range(count)))
    spans = captured_spans.get_finished_spans()
    agents = _named(spans, "invoke_agent")
    assert len(agents) == count
    by_trace = {_trace_id(span): span for span in agents}
    assert len(by_trace) == count
    for span in spans:
        if span.name.startswith("invoke_agent"):
            continue
        owner = by_trace[_trace_id(span)]
        assert _parent_id(span) == _span_id(owner)
        number = owner.name.removeprefix("invoke_agent triage_")
        if span.name.startswith("execute_tool"):
            assert dict(span.attributes or {})["gen_ai.tool.call.id"] in (f"toolu_{number}", f"toolu_out_{number}")
    assert len(_named(spans, "execute_tool")) == 2 * count
    assert len(_named(spans, "chat ")) == 2 * count


async def test_tracing_instrument_enabled_false_makes_no_spans(captured_spans: InMemorySpanExporter) -> None:
    """instrument(enabled=False) turns typedagent's spans off even with a provider."""
    previous = swap_settings(Settings(enabled=False))
    try:
        assert (await run(triage_agent(), ScriptedClient([response(output_call(GOOD))]))).ok
    finally:
        swap_settings(previous)
    assert captured_spans.get_finished_spans() == ()


async def test_tracing_global_provider_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without instrument(), spans go to the provider registered with OpenTelemetry."""
    from opentelemetry import trace

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    assert (await run(triage_agent(), ScriptedClient([response(output_call(GOOD))]))).ok
    assert [span.name for span in exporter.get_finished_spans()][-1] == "invoke_agent triage"


async def test_tracing_no_provider_asks_for_no_tracer(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no provider registered (the default), an execution asks OpenTelemetry for no tracer and makes no span."""
    from opentelemetry import trace

    asked: list[str] = []
    monkeypatch.setattr(trace.ProxyTracerProvider, "get_tracer", lambda self, *args, **kwargs: asked.append("tracer"))
    monkeypatch.setattr(trace.ProxyTracer, "start_span", lambda self, *args, **kwargs: asked.append("span"))
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    client = ScriptedClient([response(tool_call("lookup", {"query": "a"})), response(output_call(GOOD))])
    assert (await run(triage_agent(helpers=[lookup]), client)).ok
    assert asked == []


async def test_tracing_anthropic_defined_client_tool_names_its_type(captured_spans: InMemorySpanExporter) -> None:
    """A tool Anthropic defines and the code runs (memory) is an execute_tool span naming its type."""
    definition: MemoryTool20250818Param = {"type": "memory_20250818", "name": "memory"}
    memory = HelperTool(definition=definition, handler=lambda command: "(empty)")  # type: ignore[arg-type]
    client = ScriptedClient([response(tool_call("memory", {"command": "view", "path": "/"})), output_call(GOOD)])
    assert (await run(triage_agent(helpers=[memory]), client)).ok
    attributes = dict(_one(captured_spans.get_finished_spans(), "execute_tool memory").attributes or {})
    assert attributes["typedagent.tool.anthropic_type"] == "memory_20250818"
    assert attributes["typedagent.tool.kind"] == "helper"


async def test_tracing_sdk_client_with_tracing_off_gets_typedagent_chat_spans(
    fake_anthropic_server: FakeAnthropicServer, captured_spans: InMemorySpanExporter
) -> None:
    """An SDK client made with open_telemetry=False emits no span, so typedagent's chat span takes its place."""
    fake_anthropic_server.add(response(output_call(GOOD)))
    client = fake_anthropic_server.client(open_telemetry=False)
    assert (await execute_agent(triage_agent(), "Ticket", client=client)).ok
    spans = captured_spans.get_finished_spans()
    assert _named(spans, "anthropic.") == []
    chat = _one(spans, "chat ")
    assert _parent_id(chat) == _span_id(_one(spans, "invoke_agent"))
    assert dict(chat.attributes or {})["gen_ai.response.finish_reasons"] == ("tool_use",)


async def test_tracing_rate_limited_sdk_client_traced_once(
    fake_anthropic_server: FakeAnthropicServer, captured_spans: InMemorySpanExporter
) -> None:
    """execute_many's rate-limited wrapper around an SDK client: every model call still has exactly one span."""
    fake_anthropic_server.add(response(output_call(GOOD)), response(output_call(GOOD)))
    client = fake_anthropic_server.client()
    results = [result async for result in execute_many(triage_agent(), ["a", "b"], client=client)]
    assert all(result.result.ok for result in results)
    spans = captured_spans.get_finished_spans()
    agents = _named(spans, "invoke_agent")
    calls = _named(spans, "chat ") + _named(spans, "anthropic.messages.create")
    assert len(agents) == 2
    assert sorted(dict(agent.attributes or {})["typedagent.input.key"] for agent in agents) == ["#0", "#1"]
    assert len(calls) == 2
    assert {_parent_id(call) for call in calls} == {_span_id(agent) for agent in agents}


async def test_tracing_cancelled_task_ends_the_span(captured_spans: InMemorySpanExporter) -> None:
    """A task cancelled mid-call still ends its execution span (nothing is left open)."""
    client = ScriptedClient([delay(5, response(output_call(GOOD)))])
    task = asyncio.create_task(execute_agent(triage_agent(), "Ticket", client=client))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    spans = captured_spans.get_finished_spans()
    assert [span.name for span in spans] == ["chat claude-sonnet-4-6", "invoke_agent triage"]


async def test_tracing_timeout_marks_the_chat_span(captured_spans: InMemorySpanExporter) -> None:
    """A model call the deadline interrupted is a chat span with error.type interrupted_timeout."""
    client = ScriptedClient([delay(5, response(output_call(GOOD)))])
    result = await run(triage_agent(), client, limits=ExecutionLimits(timeout_s=0.05))
    assert not result.ok
    spans = captured_spans.get_finished_spans()
    assert dict(_one(spans, "chat ").attributes or {})["error.type"] == "interrupted_timeout"
    assert dict(_one(spans, "invoke_agent").attributes or {})["error.type"] == AgentErrorCode.TIMEOUT.value


async def test_tracing_content_records_problems_errors_and_shapes(content_spans: InMemorySpanExporter) -> None:
    """With content: validation problems on the attempt event, a failing tool's error, parts by block type, a cap."""

    @tool
    def broken(query: str) -> str:
        """Always fails."""
        raise RuntimeError("backend down")

    @tool
    def huge(query: str) -> str:
        """A very long result."""
        return "x" * 150_000

    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    prompt: list[Any] = [{"type": "text", "text": "Look:"}, image]
    client = ScriptedClient(
        [
            response(thinking("hmm"), tool_call("broken", {"query": "a"}), tool_call("huge", {"query": "b"})),
            response(output_call(GOOD)),
            response(output_call(GOOD)),
        ]
    )
    agent = triage_agent(helpers=[broken, huge], validators=[_reject], validation=ValidationConfig(max_attempts=2))
    result = await execute_agent(agent, prompt, client=client)
    assert not result.ok
    spans = content_spans.get_finished_spans()
    broken_span = _one(spans, "execute_tool broken")
    assert broken_span.status.status_code is StatusCode.ERROR
    assert dict(broken_span.attributes or {})["error.type"] == "tool_error"
    assert "backend down" in str(dict(broken_span.attributes or {})["gen_ai.tool.call.result"])
    assert str(dict(_one(spans, "execute_tool huge").attributes or {})["gen_ai.tool.call.result"]).endswith(
        "…[truncated]"
    )
    agent_span = _one(spans, "invoke_agent")
    events = [dict(event.attributes or {}) for event in agent_span.events if event.name == "typedagent.attempt"]
    assert all("severity must be 5" in str(event["typedagent.attempt.problems"]) for event in events)
    inputs = str(dict(agent_span.attributes or {})["gen_ai.input.messages"])
    assert '"type": "image"' in inputs
    assert "iVBORw0KGgo" not in inputs
    first_output = str(dict(_named(spans, "chat ")[0].attributes or {})["gen_ai.output.messages"])
    assert '"type": "reasoning"' in first_output


def test_tracing_sync_execution_nests_under_the_callers_span(captured_spans: InMemorySpanExporter) -> None:
    """execute_agent_sync inside an application's span: the execution's span is its child."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(captured_spans))
    with provider.get_tracer("app").start_as_current_span("handle request") as request:
        assert execute_agent_sync(triage_agent(), "Ticket", client=ScriptedClient([response(output_call(GOOD))])).ok
    agent = _one(captured_spans.get_finished_spans(), "invoke_agent")
    assert _parent_id(agent) == request.get_span_context().span_id


async def test_tracing_agent_inside_a_tool_nests_under_the_tool(captured_spans: InMemorySpanExporter) -> None:
    """An agent a tool runs is a trace branch under that tool's span; the outer execution carries on after it."""

    @tool
    async def second_opinion(query: str) -> str:
        """Ask another agent."""
        inner = ScriptedClient([response(output_call(GOOD))])
        result = await execute_agent(triage_agent(name="inner"), query, client=inner)
        return "agreed" if result.ok else "no"

    client = ScriptedClient([response(tool_call("second_opinion", {"query": "q"})), response(output_call(GOOD))])
    assert (await run(triage_agent(helpers=[second_opinion]), client)).ok
    spans = captured_spans.get_finished_spans()
    outer, inner = _one(spans, "invoke_agent triage"), _one(spans, "invoke_agent inner")
    tool_span = _one(spans, "execute_tool second_opinion")
    assert _parent_id(inner) == _span_id(tool_span)
    assert _parent_id(tool_span) == _span_id(outer)
    outer_chats = [span for span in _named(spans, "chat ") if _parent_id(span) == _span_id(outer)]
    assert len(outer_chats) == 2


async def test_tracing_client_with_its_own_provider_keeps_it(
    fake_anthropic_server: FakeAnthropicServer, captured_spans: InMemorySpanExporter
) -> None:
    """An SDK client given its own tracer provider keeps sending there; typedagent's chat span joins the trace."""
    elsewhere = InMemorySpanExporter()
    own = TracerProvider()
    own.add_span_processor(SimpleSpanProcessor(elsewhere))
    fake_anthropic_server.add(response(output_call(GOOD)))
    client = fake_anthropic_server.client(open_telemetry={"tracer_provider": own})
    assert (await execute_agent(triage_agent(), "Ticket", client=client)).ok
    assert [span.name for span in elsewhere.get_finished_spans()] == ["anthropic.messages.create"]
    spans = captured_spans.get_finished_spans()
    assert _parent_id(_one(spans, "chat ")) == _span_id(_one(spans, "invoke_agent"))
    assert _named(spans, "anthropic.") == []


async def test_tracing_registered_provider_passed_again_traces_each_call_once(
    fake_anthropic_server: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The registered provider also passed to instrument(): execute_many's paced SDK client is not traced twice."""
    from opentelemetry import trace

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    previous = swap_settings(Settings(tracer_provider=provider))
    try:
        fake_anthropic_server.add(response(output_call(GOOD)))
        client = fake_anthropic_server.client()
        results = [result async for result in execute_many(triage_agent(), ["a"], client=client)]
    finally:
        swap_settings(previous)
    assert results[0].result.ok
    spans = exporter.get_finished_spans()
    assert _named(spans, "chat ") == []
    call = _one(spans, "anthropic.messages.create")
    assert _parent_id(call) == _span_id(_one(spans, "invoke_agent"))


def test_tracing_redacting_provider_cleans_every_attribute() -> None:
    """RedactingTracerProvider cuts its secrets out of attributes, events, links, statuses and exceptions."""
    from opentelemetry.trace import Status

    from typedagent._observability.redacting import RedactingTracerProvider, wrapped_provider

    secret = "sk-ant-api03-WRAPPED"
    exporter = InMemorySpanExporter()
    inner = TracerProvider()
    inner.add_span_processor(SimpleSpanProcessor(exporter))
    provider = RedactingTracerProvider(inner, [secret, ""])
    assert wrapped_provider(provider) is inner
    assert wrapped_provider(inner) is inner
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("outer", attributes={"a": f"x{secret}", "n": 1}) as outer:
        outer.set_attribute("b", [secret, "ok"])
        outer.set_attributes({"c": secret})
        outer.add_event("e", {"d": secret})
        outer.add_link(outer.get_span_context(), {"l": secret})
        outer.update_name("renamed")
        assert outer.is_recording()
        outer.record_exception(ValueError(f"bad {secret}"), {"extra": secret})
        outer.set_status(Status(StatusCode.ERROR, f"failed with {secret}"))
    [span] = exporter.get_finished_spans()
    assert span.name == "renamed"
    dumped = repr(
        (
            dict(span.attributes or {}),
            [dict(event.attributes or {}) for event in span.events],
            [dict(link.attributes or {}) for link in span.links],
            span.status.description,
        )
    )
    assert secret not in dumped
    assert dict(span.attributes or {}) == {"a": "x[redacted]", "n": 1, "b": ("[redacted]", "ok"), "c": "[redacted]"}
    assert span.status.description == "failed with [redacted]"
    assert dict(span.events[1].attributes or {})["exception.message"] == "bad [redacted]"


def test_tracing_request_attributes_come_only_from_parameters_messages_create_takes() -> None:
    """Every gen_ai.request.* attribute typedagent maps, and the observability page lists, names a real parameter."""
    import inspect
    import re
    from pathlib import Path

    from anthropic.resources.messages import AsyncMessages

    from typedagent._observability.span_attributes import _REQUEST

    taken = set(inspect.signature(AsyncMessages.create).parameters)
    assert set(_REQUEST) <= taken
    page = (Path(__file__).resolve().parent.parent / "docs" / "observability.md").read_text()
    listed = {
        f"gen_ai.request.{name}"
        for names in re.findall(r"`gen_ai\.request\.[a-z_]+`(?:, `\.[a-z_]+`)*", page)
        for name in re.findall(r"\.([a-z_]+)`", names.replace("gen_ai.request.", "."))
    }
    assert listed == {"gen_ai.request.model", "gen_ai.request.max_tokens"}
    assert listed - {"gen_ai.request.model"} == set(_REQUEST.values())


def test_tracing_usage_uses_the_conventions_cache_creation_name() -> None:
    """Cache writes are gen_ai.usage.cache_creation.input_tokens (the GenAI conventions' name), on the page too."""
    from pathlib import Path

    from typedagent import TokenUsage
    from typedagent._observability.span_attributes import usage_attributes

    usage = TokenUsage(input_tokens=1, output_tokens=2, cache_creation_input_tokens=30, cache_read_input_tokens=40)
    assert usage_attributes("gen_ai.usage", usage) == {
        "gen_ai.usage.input_tokens": 71,
        "gen_ai.usage.output_tokens": 2,
        "gen_ai.usage.cache_read.input_tokens": 40,
        "gen_ai.usage.cache_creation.input_tokens": 30,
    }
    page = (Path(__file__).resolve().parent.parent / "docs" / "observability.md").read_text()
    for prefix in ("gen_ai.usage", "typedagent.usage"):
        row = (
            f"| `{prefix}.input_tokens`, `.output_tokens`, `.cache_read.input_tokens`, `.cache_creation.input_tokens` |"
        )
        assert row in page
    assert ".cache_write.input_tokens` |" not in page

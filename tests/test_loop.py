"""The run loop (SPEC §5): iterations, tool batches, stop reasons, history and token accounting."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from support import GOOD, Triage, assert_api_valid, reflecting, results_of, run, triage_agent

from typedagent import (
    AgentErrorCode,
    ApiErrorContext,
    AttemptErrorsContext,
    AttemptOutcome,
    ContextWindowContext,
    HelperTool,
    MaxIterationsContext,
    RefusalContext,
    TokenUsage,
    ValidationConfig,
    execute_agent,
    execute_agent_sync,
    tool,
)
from typedagent.testing import (
    ScriptedClient,
    ScriptError,
    api_error,
    output_call,
    redacted_thinking,
    response,
    submit_call,
    text,
    thinking,
    tool_call,
    usage,
)


@tool
async def lookup(query: str) -> str:
    """Look something up."""
    return f"found {query}"


async def test_loop_output_only_success() -> None:
    """One output call: success, one attempt, one iteration, the call answered "Output accepted."."""
    client = ScriptedClient([output_call(GOOD)])
    result = await run(triage_agent(), client)
    assert result.ok
    assert result.output == GOOD
    assert result.metadata.iterations == 1
    assert [a.outcome for a in result.metadata.attempts] == [AttemptOutcome.SUCCESS]
    messages = result.metadata.messages
    assert messages[0] == {"role": "user", "content": "Ticket: VPN drops"}
    assert messages[1]["content"] == [
        {"id": "toolu_01_001", "input": GOOD.model_dump(), "name": "final_output", "type": "tool_use"}
    ]
    assert results_of(messages[2]) == [("toolu_01_001", "Output accepted.", False)]
    assert len(messages) == 3


async def test_loop_request_shape() -> None:
    """Each request carries model, max_tokens, system with the protocol note, tools, tool_choice any, caching."""
    client = ScriptedClient([output_call(GOOD)])
    agent = triage_agent(
        instructions="You triage tickets.", helpers=[lookup], model_settings={"stop_sequences": ["END"]}
    )
    await run(agent, client)
    request = client.requests[0]
    assert request["model"] == "claude-sonnet-4-6"
    assert request["max_tokens"] == 4096
    assert request["system"] == (
        "You triage tickets.\n\nCalling `final_output` hands over your result (its input) and ends your turn. "
        "You have at most 15 responses."
    )
    assert [t["name"] for t in request["tools"]] == ["lookup", "final_output"]
    assert request["tool_choice"] == {"type": "any"}
    assert request["cache_control"] == {"type": "ephemeral"}
    assert request["stop_sequences"] == ["END"]


async def test_loop_helpers_then_output() -> None:
    """A helper call is run and answered; the next iteration's output call succeeds."""
    client = ScriptedClient([tool_call("lookup", {"query": "vpn"}), output_call(GOOD)])
    result = await run(triage_agent(helpers=[lookup]), client)
    assert result.ok
    assert result.metadata.iterations == 2
    messages = result.metadata.messages
    assert results_of(messages[2]) == [("toolu_01_001", "found vpn", False)]
    assert len(client.requests) == 2
    assert client.requests[1]["messages"] == messages[:3]


async def test_loop_several_calls_answered_in_one_message_in_order() -> None:
    """All tool calls of one response get their results in one user message, in block order."""
    client = ScriptedClient(
        [
            response(
                text("Let me look."),
                tool_call("lookup", {"query": "a"}),
                tool_call("lookup", {"query": "b"}),
                tool_call("lookup", {"query": "c"}),
            ),
            output_call(GOOD),
        ]
    )
    result = await run(triage_agent(helpers=[lookup]), client)
    messages = result.metadata.messages
    assert messages[1]["content"][0] == {"type": "text", "text": "Let me look."}
    assert results_of(messages[2]) == [
        ("toolu_01_001", "found a", False),
        ("toolu_01_002", "found b", False),
        ("toolu_01_003", "found c", False),
    ]


async def test_loop_unknown_tool_is_an_error_result() -> None:
    """A call of a tool nobody defined gets "Error: Unknown tool <name>" and the run goes on."""
    client = ScriptedClient([tool_call("nope", {"x": 1}, unknown=True), output_call(GOOD)])
    result = await run(triage_agent(), client)
    assert result.ok
    assert results_of(result.metadata.messages[2]) == [("toolu_01_001", "Error: Unknown tool nope", True)]


async def test_loop_handler_exception_is_an_error_result() -> None:
    """A helper that raises is answered with "Error: <message>" and the run goes on."""

    @tool
    def broken(x: int) -> str:
        """Always fails."""
        raise RuntimeError(f"database unavailable for {x}")

    client = ScriptedClient([tool_call("broken", {"x": 7}), output_call(GOOD)])
    result = await run(triage_agent(helpers=[broken]), client)
    assert result.ok
    assert results_of(result.metadata.messages[2]) == [("toolu_01_001", "Error: database unavailable for 7", True)]


async def test_loop_invalid_tool_input_not_called_and_detail_returned() -> None:
    """Invalid input for a @tool: the function is not called and pydantic's detail goes to the model."""
    calls: list[int] = []

    @tool
    def count(n: int, label: str) -> str:
        """Count."""
        calls.append(n)
        return "ok"

    client = ScriptedClient([tool_call("count", {"n": "many"}), output_call(GOOD)])
    result = await run(triage_agent(helpers=[count]), client)
    assert calls == []
    [(_, content, is_error)] = results_of(result.metadata.messages[2])
    assert is_error
    assert content == (
        "Error: invalid input for tool 'count':\n"
        "- n: Input should be a valid integer, unable to parse string as an integer\n"
        "- label: Field required\n"
        "Fix the input and call the tool again."
    )


async def test_loop_raw_helper_receives_input_as_is() -> None:
    """A HelperTool handler gets the model's dict untouched; dict results come back as JSON."""
    seen: list[dict[str, Any]] = []

    def handler(payload: dict[str, Any]) -> dict[str, Any]:
        seen.append(payload)
        return {"echo": payload["q"], "n": [1, 2]}

    raw = HelperTool(
        definition={"name": "echo", "description": "Echo.", "input_schema": {"type": "object"}}, handler=handler
    )
    client = ScriptedClient([tool_call("echo", {"q": "hi", "extra": True}), output_call(GOOD)])
    result = await run(triage_agent(helpers=[raw]), client)
    assert seen == [{"q": "hi", "extra": True}]
    assert results_of(result.metadata.messages[2]) == [("toolu_01_001", '{"echo":"hi","n":[1,2]}', False)]


async def test_loop_text_only_response_is_invalid_response() -> None:
    """A text-only reply ends the attempt with INVALID_RESPONSE; feedback asks for the output tool."""
    client = ScriptedClient(["I think it is severity 2.", output_call(GOOD)])
    result = await run(triage_agent(), client)
    assert result.ok
    first = result.metadata.attempts[0]
    assert first.outcome is AttemptOutcome.INVALID_RESPONSE
    assert first.iterations == 1
    feedback = result.metadata.messages[2]
    assert feedback["role"] == "user"
    assert "Call 'final_output'" in feedback["content"][0]["text"]


async def test_loop_text_only_every_attempt_fails_with_invalid_response() -> None:
    """When every attempt answers in text, the failure's code is INVALID_RESPONSE with each attempt's errors."""
    client = ScriptedClient(["no", "still no"])
    result = await run(triage_agent(validation=ValidationConfig(max_attempts=2)), client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.INVALID_RESPONSE
    assert isinstance(result.error.context, AttemptErrorsContext)
    assert len(result.error.context.attempt_errors) == 2
    assert result.error.last_output is None


async def test_loop_max_tokens_ends_attempt_and_answers_cut_tool_calls() -> None:
    """max_tokens: tool calls are not run but answered as errors; feedback says the reply was cut off."""
    ran: list[str] = []

    @tool
    def probe(q: str) -> str:
        """Probe."""
        ran.append(q)
        return q

    client = ScriptedClient([response(tool_call("probe", {"q": "x"}), stop_reason="max_tokens"), output_call(GOOD)])
    result = await run(triage_agent(helpers=[probe]), client)
    assert result.ok
    assert ran == []
    assert result.metadata.attempts[0].outcome is AttemptOutcome.MAX_TOKENS
    reply = result.metadata.messages[2]
    assert results_of(reply) == [("toolu_01_001", "Error: not run: the response was cut off at max_tokens.", True)]
    assert reply["content"][-1]["type"] == "text"
    assert "cut off at max_tokens (4096)" in reply["content"][-1]["text"]


async def test_loop_max_tokens_on_last_attempt_fails_with_max_tokens() -> None:
    """A cut-off response on the last attempt fails the execution with MAX_TOKENS."""
    client = ScriptedClient([response(text("partial"), stop_reason="max_tokens")])
    result = await run(triage_agent(validation=ValidationConfig(max_attempts=1)), client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.MAX_TOKENS


async def test_loop_refusal_fails_without_running_tools() -> None:
    """refusal: the execution fails with REFUSAL; tool calls are answered, not run."""
    client = ScriptedClient(
        [response(text("I can't help."), tool_call("lookup", {"query": "x"}), stop_reason="refusal")]
    )
    result = await run(triage_agent(helpers=[lookup]), client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.REFUSAL
    assert result.error.context == RefusalContext(attempt=1, iteration=1, text="I can't help.")
    assert results_of(result.metadata.messages[2]) == [("toolu_01_001", "Error: not run: the model refused.", True)]


async def test_loop_context_window_exceeded_fails() -> None:
    """model_context_window_exceeded: the execution fails with CONTEXT_WINDOW_EXCEEDED."""
    client = ScriptedClient(
        [response(text("..."), stop_reason="model_context_window_exceeded", usage=usage(input_tokens=199_000))]
    )
    result = await run(triage_agent(), client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.CONTEXT_WINDOW_EXCEEDED
    assert result.error.context == ContextWindowContext(attempt=1, iteration=1, input_tokens=199_000)
    assert result.metadata.tokens.input_tokens == 199_000


async def test_loop_max_iterations_fails_with_context() -> None:
    """An attempt that uses all its iterations fails with MAX_ITERATIONS and no validation."""
    client = ScriptedClient([tool_call("lookup", {"query": str(i)}) for i in range(3)])
    agent = triage_agent(helpers=[lookup], validation=ValidationConfig(max_iterations_per_attempt=3))
    result = await run(agent, client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.MAX_ITERATIONS
    assert result.error.context == MaxIterationsContext(attempt=1, iteration_count=3, max_iterations=3)
    assert result.metadata.iterations == 3
    assert [a.outcome for a in result.metadata.attempts] == [AttemptOutcome.MAX_ITERATIONS]


async def test_loop_api_error_fails_with_status() -> None:
    """An API error ends the execution with API_ERROR carrying status, error type and request id."""
    client = ScriptedClient([tool_call("lookup", {"query": "a"}), api_error(529, "Overloaded", request_id="req_1")])
    result = await run(triage_agent(helpers=[lookup]), client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.API_ERROR
    assert result.error.context == ApiErrorContext(
        status_code=529, error_type="overloaded_error", request_id="req_1", attempt=1, iteration=2
    )
    assert "retry later" in result.error.message
    assert result.metadata.iterations == 2
    assert result.metadata.tokens.total == 15


async def test_loop_connection_error_has_no_status() -> None:
    """Connection errors map to API_ERROR with status_code None."""
    result = await run(triage_agent(), ScriptedClient([api_error("connection")]))
    assert not result.ok
    assert isinstance(result.error.context, ApiErrorContext)
    assert result.error.context.status_code is None
    assert result.error.context.error_type == "connection_error"


async def test_loop_script_errors_propagate() -> None:
    """A test double's ScriptError (an AssertionError) is raised, not turned into API_ERROR."""
    with pytest.raises(ScriptError, match="request 2 arrived but the script has only 1 item"):
        await execute_agent(triage_agent(helpers=[lookup]), "x", client=ScriptedClient([tool_call("lookup", {})]))


async def test_loop_tokens_summed_across_iterations_and_attempts() -> None:
    """All four token counters are summed over every response of every attempt, per attempt too."""
    client = ScriptedClient(
        [
            response(tool_call("lookup", {"query": "a"}), usage=usage(100, 10, 50, 0)),
            response(output_call({"severity": 9, "summary": "x"}), usage=usage(120, 20, 0, 50)),
            response(output_call(GOOD), usage=usage(7, 3, 1, 2)),
        ]
    )
    result = await run(triage_agent(helpers=[lookup]), client)
    assert result.ok
    assert result.metadata.tokens == TokenUsage(
        input_tokens=227, output_tokens=33, cache_creation_input_tokens=51, cache_read_input_tokens=52
    )
    assert result.metadata.tokens.total == 363
    assert [a.tokens.total for a in result.metadata.attempts] == [350, 13]


async def test_loop_thinking_blocks_kept_verbatim_and_tool_choice_auto() -> None:
    """Thinking blocks are sent back verbatim, in order; with thinking on, tool_choice is auto."""
    client = ScriptedClient(
        [
            response(
                thinking("Let me think", "sig-1"), redacted_thinking("opaque"), tool_call("lookup", {"query": "q"})
            ),
            output_call(GOOD),
        ]
    )
    agent = triage_agent(helpers=[lookup], model_settings={"thinking": {"type": "enabled", "budget_tokens": 2048}})
    result = await run(agent, client)
    assert result.ok
    assert client.requests[0]["tool_choice"] == {"type": "auto"}
    assert client.requests[0]["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assistant = client.requests[1]["messages"][1]
    assert assistant["content"][:2] == [
        {"type": "thinking", "thinking": "Let me think", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "opaque"},
    ]


async def test_loop_pause_turn_continues_the_same_assistant_turn() -> None:
    """pause_turn: the conversation goes back with the assistant turn last; the next blocks extend it."""
    client = ScriptedClient([response(text("Working..."), stop_reason="pause_turn"), output_call(GOOD)])
    result = await run(triage_agent(), client)
    assert result.ok
    assert client.requests[1]["messages"][-1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Working..."}],
    }
    messages = result.metadata.messages
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["type"] for b in messages[1]["content"]] == ["text", "tool_use"]


async def test_loop_message_history_is_continued() -> None:
    """message_history is sent first; a history ending with a user turn gets the prompt added to that turn."""
    history: list[Any] = [
        {"role": "user", "content": "Earlier question"},
        {"role": "assistant", "content": [{"type": "text", "text": "Earlier answer"}]},
        {"role": "user", "content": "Some context"},
    ]
    client = ScriptedClient([output_call(GOOD)])
    result = await run(triage_agent(), client, prompt="New ticket", message_history=history)
    assert result.ok
    assert client.requests[0]["messages"] == [
        history[0],
        history[1],
        {"role": "user", "content": [{"type": "text", "text": "Some context"}, {"type": "text", "text": "New ticket"}]},
    ]
    assert history[2] == {"role": "user", "content": "Some context"}  # the caller's list is not modified


async def test_loop_messages_can_be_passed_back_as_history() -> None:
    """A finished run's messages are valid history for the next run."""
    first = await run(triage_agent(), ScriptedClient([output_call(GOOD)]))
    client = ScriptedClient([output_call(GOOD, id="toolu_second_run")])
    second = await run(triage_agent(), client, prompt="And now?", message_history=first.metadata.messages)
    assert second.ok
    sent = client.requests[0]["messages"]
    assert sent[:2] == first.metadata.messages[:2]
    assert sent[2]["content"][-1] == {"type": "text", "text": "And now?"}
    assert sent[2]["content"][0]["content"] == "Output accepted."


async def test_loop_content_block_prompt() -> None:
    """A prompt given as content blocks (text + image) is sent as-is."""
    blocks: list[Any] = [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
    ]
    client = ScriptedClient([output_call(GOOD)])
    result = await execute_agent(triage_agent(), blocks, client=client)
    assert_api_valid(result, client)
    assert client.requests[0]["messages"][0] == {"role": "user", "content": blocks}


async def test_loop_prompt_caching_can_be_turned_off() -> None:
    """prompt_caching=False sends no cache_control."""
    client = ScriptedClient([output_call(GOOD)])
    await run(triage_agent(prompt_caching=False), client)
    assert "cache_control" not in client.requests[0]


async def test_loop_tool_results_are_truncated_with_marker() -> None:
    """Results longer than max_tool_result_chars are cut with a marker saying how much."""

    @tool
    def big() -> str:
        """Big."""
        return "x" * 250

    client = ScriptedClient([tool_call("big"), output_call(GOOD)])
    result = await run(triage_agent(helpers=[big], max_tool_result_chars=100), client)
    [(_, content, _)] = results_of(result.metadata.messages[2])
    assert content == "x" * 100 + "\n[... truncated: 150 of 250 characters cut ...]"


async def test_loop_dynamic_instructions_receive_deps() -> None:
    """Instructions given as a callable are built from the run context (deps included)."""
    agent = triage_agent(instructions=lambda ctx: f"Customer tier: {ctx.deps}", deps_type=str)
    client = ScriptedClient([output_call(GOOD)])
    await execute_agent(agent, "x", client=client, deps="gold")
    assert client.requests[0]["system"].startswith("Customer tier: gold\n\n")


async def test_loop_deps_required_when_declared() -> None:
    """An agent with deps_type refuses to run without deps (a programming error)."""
    agent = triage_agent(deps_type=int)
    with pytest.raises(TypeError, match=r"declares deps_type=int: pass execute_agent\(\.\.\., deps=\.\.\.\)"):
        await execute_agent(agent, "x", client=ScriptedClient())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"agent": "not an agent"}, "needs an AgentDefinition"),
        ({"prompt": 42}, "prompt must be a str"),
        ({"prompt": "  "}, "prompt is empty"),
        ({"limits": {"timeout_s": 1}}, "limits must be an ExecutionLimits"),
        ({"callbacks": [print]}, "callbacks must be an ExecuteCallbacks"),
        ({"message_history": [{"role": "system", "content": "x"}]}, "message_history must be a list"),
    ],
)
async def test_loop_wrong_argument_types_raise(kwargs: dict[str, Any], message: str) -> None:
    """Programming errors (wrong argument types) raise TypeError with what to do."""
    args: dict[str, Any] = {"agent": triage_agent(), "prompt": "x", "client": ScriptedClient(), **kwargs}
    with pytest.raises(TypeError, match=message):
        await execute_agent(args.pop("agent"), args.pop("prompt"), **args)


def test_loop_sync_wrapper_runs_and_refuses_inside_a_loop() -> None:
    """execute_agent_sync returns the same result; inside a running loop it raises a clear error."""
    result = execute_agent_sync(triage_agent(), "x", client=ScriptedClient([output_call(GOOD)]))
    assert result.ok
    assert result.output == GOOD

    async def inside() -> None:
        with pytest.raises(RuntimeError, match="use `await execute_agent"):
            execute_agent_sync(triage_agent(), "x", client=ScriptedClient())

    asyncio.run(inside())


async def test_loop_concurrent_async_helpers() -> None:
    """The async helper calls of one response run concurrently."""
    running = 0
    peak = 0

    @tool
    async def slow(i: int) -> int:
        """Slow."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.05)
        running -= 1
        return i

    client = ScriptedClient([response(*(tool_call("slow", {"i": i}) for i in range(4))), output_call(GOOD)])
    result = await run(triage_agent(helpers=[slow]), client)
    assert peak == 4
    assert [c for _, c, _ in results_of(result.metadata.messages[2])] == ["0", "1", "2", "3"]


async def test_loop_sequential_tool_runs_batch_one_by_one() -> None:
    """A sequential tool in a batch makes the whole batch run one by one, in block order."""
    order: list[str] = []

    @tool(sequential=True)
    async def write(key: str) -> str:
        """Write."""
        order.append(f"start {key}")
        await asyncio.sleep(0.01)
        order.append(f"end {key}")
        return key

    client = ScriptedClient(
        [response(tool_call("write", {"key": "a"}), tool_call("write", {"key": "b"})), output_call(GOOD)]
    )
    await run(triage_agent(helpers=[write]), client)
    assert order == ["start a", "end a", "start b", "end b"]


async def test_loop_sync_handlers_run_off_the_event_loop() -> None:
    """Sync helper handlers run in worker threads, never on the event loop's thread."""
    loop_thread = threading.get_ident()
    threads: list[int] = []

    @tool
    def blocking() -> str:
        """Blocking."""
        threads.append(threading.get_ident())
        return "done"

    client = ScriptedClient([response(tool_call("blocking"), tool_call("blocking")), output_call(GOOD)])
    await run(triage_agent(helpers=[blocking]), client)
    assert len(threads) == 2
    assert loop_thread not in threads


async def test_loop_reflection_mode_tools_and_protocol() -> None:
    """With a reflection handler, submit is offered last and the protocol note explains the flow."""
    client = ScriptedClient([output_call(GOOD), submit_call()])
    result = await run(triage_agent(output=reflecting()), client)
    assert result.ok
    assert [t["name"] for t in client.requests[0]["tools"]] == ["final_output", "submit"]
    assert client.requests[0]["system"] == (
        "Calling `final_output` shows a preview of your result (its input); call it again to revise. "
        "Calling `submit` hands over the last one for validation and ends your turn. You have at most 15 responses."
    )


async def test_loop_output_candidate_is_model_of_schema() -> None:
    """The success output is an instance of the output schema, built by pydantic."""
    result = await run(triage_agent(), ScriptedClient([output_call({"severity": "3", "summary": "s"})]))
    assert result.ok
    assert isinstance(result.output, Triage)
    assert result.output.severity == 3


async def test_loop_empty_block_prompt_is_rejected() -> None:
    """An empty list of content blocks is as empty as an empty string: a TypeError, nothing sent."""
    client = ScriptedClient([output_call(GOOD)])
    with pytest.raises(TypeError, match="prompt is empty"):
        await execute_agent(triage_agent(), [], client=client)
    assert client.requests == []


async def test_loop_default_client_without_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no client and no ANTHROPIC_API_KEY, the run fails with API_ERROR saying what to set."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    result = await execute_agent(triage_agent(), "x")
    assert not result.ok
    assert result.error.code is AgentErrorCode.API_ERROR
    assert isinstance(result.error.context, ApiErrorContext)
    assert result.error.context.error_type == "missing_credentials"
    assert "Set ANTHROPIC_API_KEY" in result.error.message

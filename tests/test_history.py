"""History processors (``define_agent(history_processors=...)``, ``typedagent.history``): what each call is sent."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from anthropic.types import MessageParam
from pydantic import BaseModel
from support import GOOD, Triage, assert_api_valid, triage_agent

from typedagent import (
    AgentDefinitionError,
    AgentErrorCode,
    ExecutionLimits,
    HistoryProcessorErrorContext,
    OutputTool,
    RunContext,
    TokenUsage,
    define_agent,
    execute_agent,
    tool,
)
from typedagent.history import drop_thinking_before, keep_last_turns, summarize_older
from typedagent.testing import (
    Block,
    FunctionClient,
    MessagesRequest,
    ScriptedClient,
    iteration_usage,
    output_call,
    response,
    tool_call,
    usage,
)

# A conversation of four exchanges before the current turn; the second called a tool.
HISTORY: list[MessageParam] = [
    {"role": "user", "content": "My VPN drops."},
    {"role": "assistant", "content": [{"type": "text", "text": "Since when?"}]},
    {"role": "user", "content": "Since Monday. Look at ticket 7."},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_h1", "name": "lookup", "input": {"q": "7"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_h1", "content": "ticket 7: VPN"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "Ticket 7 says the same."}]},
    {"role": "user", "content": "It is urgent."},
    {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]},
]
CURRENT: MessageParam = {"role": "user", "content": "Triage it now."}


@tool
def lookup(q: str) -> str:
    """Look a ticket up."""
    return f"ticket {q}: VPN"


async def _sent(*processors: Any, history: list[MessageParam] = HISTORY) -> list[Any]:
    """The messages the first model call was sent, once the agent's processors ran; the conversation is unchanged."""
    client = ScriptedClient([output_call(GOOD)])
    agent = triage_agent(history_processors=list(processors))
    result = await execute_agent(agent, "Triage it now.", client=client, message_history=history)
    assert result.ok
    assert result.metadata.messages[: len(history) + 1] == [*history, CURRENT]
    assert_api_valid(result, client)
    return list(client.requests[0]["messages"])


async def test_history_processor_result_is_sent_and_the_conversation_is_kept() -> None:
    """What a processor returns is sent; ``metadata.messages`` is still the whole conversation."""
    sent = await _sent(lambda messages: messages[-1:])
    assert sent == [CURRENT]


async def test_history_processors_run_in_order_before_every_model_call() -> None:
    """Each processor gets the previous one's messages; they run before every call, on the conversation as it is."""
    seen: list[tuple[str, int]] = []

    def first(messages: list[MessageParam]) -> list[MessageParam]:
        seen.append(("first", len(messages)))
        return messages[-1:] if len(messages) == 1 else [messages[0], *messages[-2:]]

    async def second(ctx: RunContext[None], messages: list[MessageParam]) -> list[MessageParam]:
        seen.append((f"second {ctx.attempt}.{ctx.iteration}", len(messages)))
        return messages

    client = ScriptedClient([tool_call("lookup", {"q": "7"}), output_call(GOOD)])
    agent = triage_agent(helpers=[lookup], history_processors=[first, second])
    result = await execute_agent(agent, "VPN drops", client=client)
    assert result.ok
    assert seen == [("first", 1), ("second 1.1", 1), ("first", 3), ("second 1.2", 3)]
    assert [len(request["messages"]) for request in client.requests] == [1, 3]
    assert len(result.metadata.messages) == 5


@dataclass
class Shop:
    name: str


async def test_history_processor_with_context_gets_the_deps() -> None:
    """A processor taking ``(ctx, messages)`` gets the run context, deps included."""
    names: list[str] = []

    def note(ctx: RunContext[Shop], messages: list[MessageParam]) -> list[MessageParam]:
        names.append(ctx.deps.name)
        return messages

    agent = define_agent(
        name="shop", model="claude-sonnet-4-6", output=OutputTool(Triage), deps_type=Shop, history_processors=[note]
    )
    result = await execute_agent(agent, "hi", deps=Shop("north"), client=ScriptedClient([output_call(GOOD)]))
    assert result.ok
    assert names == ["north"]


async def test_history_processor_changing_its_copy_never_changes_the_conversation() -> None:
    """A processor that edits the messages in place edits a copy."""

    def scribble(messages: list[Any]) -> list[Any]:
        messages[0]["content"] = "scribbled"
        return messages

    client = ScriptedClient([output_call(GOOD)])
    result = await execute_agent(
        triage_agent(history_processors=[scribble]), "Triage it now.", client=client, message_history=HISTORY
    )
    assert client.requests[0]["messages"][0]["content"] == "scribbled"
    assert result.metadata.messages[0] == HISTORY[0]
    assert HISTORY[0]["content"] == "My VPN drops."


def _drop(index: int) -> Any:
    def drop(messages: list[Any]) -> list[Any]:
        return [message for position, message in enumerate(messages) if position != index]

    return drop


@pytest.mark.parametrize(
    ("processor", "problem"),
    [
        (lambda messages: messages[1:], "it starts with an assistant turn"),
        (lambda messages: messages[:-1], "it drops or changes the current turn"),
        (lambda messages: [*messages[:-1], {"role": "user", "content": "other"}], "drops or changes the current"),
        (lambda messages: [], "it returned no messages"),
        (lambda messages: None, "it returned NoneType, not a list of messages"),
        (lambda messages: [*messages[:-1], "text", messages[-1]], "message 8 is 'text', not a message"),
        (_drop(4), "message 3 has a tool_use ['toolu_h1'] whose tool_result is not in the next turn"),
        (_drop(3), "message 3 has a tool_result for ['toolu_h1'], which answers no tool_use of the turn before"),
    ],
)
async def test_history_processor_breaking_the_protocol_fails_and_sends_nothing(processor: Any, problem: str) -> None:
    """A history the API would refuse ends the execution with HISTORY_PROCESSOR_ERROR naming the processor."""
    client = ScriptedClient([output_call(GOOD)])
    agent = triage_agent(history_processors=[keep_last_turns(5), processor])
    result = await execute_agent(agent, "Triage it now.", client=client, message_history=HISTORY)
    assert not result.ok
    error = result.error
    assert error.code is AgentErrorCode.HISTORY_PROCESSOR_ERROR
    assert isinstance(error.context, HistoryProcessorErrorContext)
    assert error.context.processor.endswith("<lambda>") or error.context.processor.endswith("drop")
    assert error.context.error_type is None
    assert (error.context.attempt, error.context.iteration) == (1, 1)
    assert f"History processor {error.context.processor!r} returned a history the Messages API would refuse" in (
        error.message
    )
    assert problem in error.message
    assert "Nothing was sent." in error.message
    assert client.requests == []
    assert result.metadata.iterations == 0
    assert result.metadata.messages == [*HISTORY, CURRENT]


async def test_history_processor_that_raises_fails_with_its_exception() -> None:
    """A processor's exception ends the execution with HISTORY_PROCESSOR_ERROR, its type and message kept."""

    def broken(messages: list[MessageParam]) -> list[MessageParam]:
        raise KeyError("summary store down")

    client = ScriptedClient([tool_call("lookup", {"q": "7"}), output_call(GOOD)])
    calls = 0

    def only_later(messages: list[MessageParam]) -> list[MessageParam]:
        nonlocal calls
        calls += 1
        return broken(messages) if calls == 2 else messages

    result = await execute_agent(triage_agent(helpers=[lookup], history_processors=[only_later]), "go", client=client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.HISTORY_PROCESSOR_ERROR
    context = result.error.context
    assert isinstance(context, HistoryProcessorErrorContext)
    assert (context.error_type, context.attempt, context.iteration) == ("KeyError", 1, 2)
    assert "History processor" in result.error.message
    assert "only_later' raised KeyError: 'summary store down'" in result.error.message
    assert isinstance(result.error.cause, KeyError)
    assert len(client.requests) == 1
    assert result.metadata.iterations == 1
    assert len(result.metadata.messages) == 3  # the tool's result is kept


@pytest.mark.parametrize(
    ("processors", "message"),
    [
        (keep_last_turns(1), r"must be a list, got function: write history_processors=\[keep_last_turns\(1\)\]"),
        ("keep", r"must be a list, got str"),
        ([3], r"history_processors must hold functions, got 3"),
        ([lambda a, b, c: a], r"take \(messages\) or \(ctx, messages\)"),
    ],
)
def test_history_processors_are_checked_at_definition(processors: Any, message: str) -> None:
    """Bad processors are definition errors saying what to write."""
    with pytest.raises(AgentDefinitionError, match=message):
        triage_agent(history_processors=processors)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: keep_last_turns(-1), r"keep_last_turns\(n\) must be an int >= 0, got -1"),
        (lambda: keep_last_turns(True), r"got True"),
        (lambda: drop_thinking_before(0), r"drop_thinking_before\(n\) must be an int >= 1, got 0"),
        (lambda: summarize_older(triage_agent(), keep_last=-2), r"summarize_older\(keep_last=...\) must be an int"),
    ],
)
def test_history_builtins_check_their_counts(make: Any, message: str) -> None:
    """The built-ins' counts are checked when they are made."""
    with pytest.raises(AgentDefinitionError, match=message):
        make()


async def test_keep_last_turns_keeps_the_first_message_and_the_last_exchanges() -> None:
    """The first user message, then the last ``n`` exchanges whole, then the current turn."""
    # From the assistant's reply ending the exchange before the kept ones: turns still alternate.
    assert await _sent(keep_last_turns(1)) == [HISTORY[0], *HISTORY[5:], CURRENT]
    assert await _sent(keep_last_turns(0)) == [HISTORY[0], HISTORY[7], CURRENT]
    assert await _sent(keep_last_turns(4)) == [*HISTORY, CURRENT]
    assert await _sent(keep_last_turns(9)) == [*HISTORY, CURRENT]


async def test_keep_last_turns_never_parts_a_tool_use_from_its_result() -> None:
    """A round of tool calls belongs to the exchange it is in: kept or dropped with it, never cut in two."""
    # Exchanges: the first, "Since Monday" (with its tool round), "It is urgent".
    assert await _sent(keep_last_turns(2)) == [HISTORY[0], *HISTORY[1:], CURRENT]
    assert await _sent(keep_last_turns(1)) == [HISTORY[0], *HISTORY[5:], CURRENT]

    def parted(messages: list[MessageParam]) -> list[MessageParam]:
        return [messages[0], *messages[4:]]  # the tool_result without its tool_use

    client = ScriptedClient([output_call(GOOD)])
    agent = triage_agent(history_processors=[parted, keep_last_turns(1)])
    result = await execute_agent(agent, "Triage it now.", client=client, message_history=HISTORY)
    assert result.error is not None
    assert result.error.code is AgentErrorCode.HISTORY_PROCESSOR_ERROR


async def test_keep_last_turns_mid_attempt_keeps_the_tool_round_being_answered() -> None:
    """On a call answering tool results, the tool_use they answer is kept with them."""
    client = ScriptedClient([tool_call("lookup", {"q": "9"}), output_call(GOOD)])
    agent = triage_agent(helpers=[lookup], history_processors=[keep_last_turns(0)])
    result = await execute_agent(agent, "Triage it now.", client=client, message_history=HISTORY)
    assert result.ok
    assert_api_valid(result, client)
    # The exchange going on is the current turn and the tool round after it: kept whole.
    second = client.requests[1]["messages"]
    assert second == [HISTORY[0], HISTORY[7], *result.metadata.messages[len(HISTORY) : len(HISTORY) + 3]]
    assert second[2] == CURRENT
    assert second[3]["content"][0]["type"] == "tool_use"


THOUGHT = {"type": "thinking", "thinking": "Earlier thought.", "signature": "sig-1"}
LATER = {"type": "thinking", "thinking": "Later thought.", "signature": "sig-2"}
REDACTED = {"type": "redacted_thinking", "data": "opaque"}


async def test_drop_thinking_before_keeps_only_the_last_assistant_thinking() -> None:
    """Thinking blocks leave every assistant message but the last ``n``; a thinking-only message stays whole."""
    history: list[Any] = [
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": [THOUGHT, REDACTED, {"type": "text", "text": "a1"}]},
        {"role": "user", "content": "q2"},
        {"role": "assistant", "content": [REDACTED]},
        {"role": "user", "content": "q3"},
        {"role": "assistant", "content": [LATER, {"type": "text", "text": "a3"}]},
    ]
    sent = await _sent(drop_thinking_before(1), history=history)
    assert sent == [
        history[0],
        {"role": "assistant", "content": [{"type": "text", "text": "a1"}]},
        *history[2:],
        CURRENT,
    ]
    assert await _sent(drop_thinking_before(3), history=history) == [*history, CURRENT]


class Summary(BaseModel):
    summary: str


summariser = define_agent(
    name="summariser",
    model="claude-haiku-4-5",
    instructions="You summarise conversations.",
    output=OutputTool(Summary),
)


def _with_summaries(request: MessagesRequest) -> object:
    """The summariser summarises (numbering its summaries); the agent calls lookup once, then answers."""
    if str(request.get("system")).startswith("You summarise"):
        prompt = request["messages"][0]["content"]
        number = 2 if "You summarised the beginning" in str(prompt) else 1
        return response(output_call(Summary(summary=f"summary {number}")), usage=usage(1_000, 100))
    if request["messages"][-1]["role"] == "user" and request["messages"][-1]["content"] == "Triage it now.":
        return response(tool_call("lookup", {"q": "9"}), usage=usage(2_000, 200))
    return response(output_call(GOOD), usage=usage(3_000, 300))


async def test_summarize_older_replaces_older_exchanges_and_counts_the_summariser() -> None:
    """Older exchanges become the summariser's output; its usage, cost and calls are the execution's."""
    client = FunctionClient(_with_summaries)
    agent = triage_agent(helpers=[lookup], history_processors=[summarize_older(summariser, keep_last=1)])
    result = await execute_agent(agent, "Triage it now.", client=client, message_history=HISTORY)
    assert result.ok
    assert_api_valid(result, client)
    agent_calls = [r for r in client.requests if not str(r.get("system")).startswith("You summarise")]
    summary_calls = [r for r in client.requests if str(r.get("system")).startswith("You summarise")]
    header = "Summary of the earlier conversation (its older turns were replaced by this summary):"
    first = agent_calls[0]["messages"]
    assert first == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "My VPN drops."},
                {"type": "text", "text": f'{header}\n{{"summary":"summary 1"}}'},
            ],
        },
        *HISTORY[5:],
        CURRENT,
    ]
    # What the summariser read first: the older exchanges as a transcript (the first message stays as it is).
    transcript = summary_calls[0]["messages"][0]["content"]
    assert "assistant: Since when?" in transcript
    assert 'assistant called tool lookup with {"q":"7"}' in transcript
    assert "result of tool lookup: ticket 7: VPN" in transcript
    assert "Ticket 7 says the same" not in transcript  # the reply the kept tail starts with
    # The second call answers the tool round of the same exchange: the older part is the same, its summary reused.
    assert len(summary_calls) == 1
    assert agent_calls[1]["messages"][0] == first[0]
    # The summariser's run is a sub-execution: counted in the totals, no tool call behind it.
    metadata = result.metadata
    assert [(s.agent_name, s.tool_call_id, s.ok) for s in metadata.sub_executions] == [("summariser", None, True)]
    assert metadata.sub_executions[0].metadata.tokens == TokenUsage(input_tokens=1_000, output_tokens=100)
    assert metadata.iterations == 3
    assert metadata.tokens == TokenUsage(input_tokens=6_000, output_tokens=600)
    assert metadata.cost_usd == pytest.approx(0.0015 + 0.009 + 0.0135)  # haiku at $1/$5, sonnet at $3/$15 per M
    assert metadata.messages[: len(HISTORY)] == HISTORY

    # The conversation goes on: the older part grew, and the summariser gets its summary and what came after it.
    more = await execute_agent(agent, "Thanks. Anything else?", client=client, message_history=metadata.messages)
    assert more.ok
    summary_calls = [r for r in client.requests if str(r.get("system")).startswith("You summarise")]
    assert len(summary_calls) == 2
    follow_up = summary_calls[1]["messages"][0]["content"]
    assert follow_up.startswith(
        'You summarised the beginning of a conversation before:\n<summary>\n{"summary":"summary 1"}'
    )
    assert "<conversation>\nassistant: Ticket 7 says the same.\nuser: It is urgent.\n</conversation>" in follow_up
    assert "Since when?" not in follow_up  # already in the summary
    assert "Triage it now" not in follow_up  # the last exchange before the current turn is kept
    assert client.requests[-1]["messages"][0]["content"][1]["text"] == f'{header}\n{{"summary":"summary 2"}}'


async def test_summarize_older_reuses_a_summary_it_made() -> None:
    """The same older part is summarised once: a later execution over the same history reuses the summary."""
    processor = summarize_older(summariser, keep_last=1)
    agent = triage_agent(history_processors=[processor])
    client = FunctionClient(
        lambda request: (
            output_call(Summary(summary="s"))
            if str(request.get("system")).startswith("You summarise")
            else output_call(GOOD)
        )
    )
    for _ in range(2):
        result = await execute_agent(agent, "Triage it now.", client=client, message_history=HISTORY)
        assert result.ok
    assert [str(r.get("system"))[:14] for r in client.requests].count("You summarise ") == 1
    assert len(client.requests) == 3


async def test_summarize_older_calls_count_against_max_requests() -> None:
    """The summariser's calls count against the execution's ``max_requests``: its call past the limit is not made."""
    client = FunctionClient(_with_summaries)
    agent = triage_agent(helpers=[lookup], history_processors=[summarize_older(summariser, keep_last=1)])
    result = await execute_agent(
        agent, "Triage it now.", client=client, message_history=HISTORY, limits=ExecutionLimits(max_requests=1)
    )
    assert not result.ok
    assert result.error.code is AgentErrorCode.REQUEST_LIMIT_EXCEEDED
    assert client.requests == []
    assert result.metadata.sub_executions[0].error_code is AgentErrorCode.REQUEST_LIMIT_EXCEEDED


async def test_summarize_older_failing_summariser_is_a_history_processor_error() -> None:
    """A summariser that fails ends the execution with HISTORY_PROCESSOR_ERROR naming the processor and the failure."""
    client = FunctionClient(lambda request: response("I cannot summarise that."))
    flaky = define_agent(name="flaky", model="claude-haiku-4-5", output=OutputTool(Summary))
    agent = triage_agent(history_processors=[summarize_older(flaky, keep_last=0)])
    result = await execute_agent(agent, "Triage it now.", client=client, message_history=HISTORY)
    assert not result.ok
    assert result.error.code is AgentErrorCode.HISTORY_PROCESSOR_ERROR
    assert "summarize_older(flaky, keep_last=0)" in result.error.message
    assert "the summariser agent 'flaky' failed (INVALID_RESPONSE)" in result.error.message
    [sub] = result.metadata.sub_executions
    assert sub.error_code is AgentErrorCode.INVALID_RESPONSE
    assert result.metadata.iterations == sub.metadata.iterations == 3


async def test_history_processor_slower_than_the_deadline_is_a_timeout_and_sends_nothing() -> None:
    """A processor still running at the deadline is interrupted: TIMEOUT, no call made or counted."""

    async def slow(messages: list[MessageParam]) -> list[MessageParam]:
        await asyncio.sleep(5)
        return messages

    client = ScriptedClient([output_call(GOOD)])
    agent = triage_agent(history_processors=[slow])
    result = await execute_agent(agent, "go", client=client, limits=ExecutionLimits(timeout_s=0.2))
    assert not result.ok
    assert result.error.code is AgentErrorCode.TIMEOUT
    assert result.metadata.latency_ms < 2_000
    assert client.requests == []
    assert result.metadata.iterations == 0


async def test_history_processors_and_compaction_together() -> None:
    """``context_management`` passes through; the compaction's tokens are counted and its block kept verbatim."""
    compaction = {"type": "compaction", "content": "Summary of the earlier turns."}
    client = ScriptedClient(
        [
            response(
                Block(type="compaction", data={"content": compaction["content"]}),
                stop_reason="compaction",
                usage=usage(200, 40, iterations=[iteration_usage("compaction", 50_000, 400)]),
            ),
            output_call(GOOD),
        ]
    )
    management = {"edits": [{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50_000}}]}
    agent = triage_agent(model_settings={"context_management": management}, history_processors=[keep_last_turns(1)])
    result = await execute_agent(agent, "Triage it now.", client=client, message_history=HISTORY)
    assert result.ok
    assert_api_valid(result, client)
    assert [request["betas"] for request in client.requests] == [["compact-2026-01-12"]] * 2
    assert [request["context_management"] for request in client.requests] == [management] * 2
    # The processor ran before both calls; the second continues the paused assistant turn, compaction first.
    second = client.requests[1]["messages"]
    assert second == [HISTORY[0], *HISTORY[5:], CURRENT, {"role": "assistant", "content": [compaction]}]
    assert result.metadata.messages[len(HISTORY) + 1]["content"][0] == compaction
    assert result.metadata.messages[: len(HISTORY)] == HISTORY
    assert result.metadata.tokens == TokenUsage(input_tokens=50_210, output_tokens=445)
    assert result.metadata.iterations == 2


async def test_summarize_older_leaves_a_short_conversation_and_needs_an_execution() -> None:
    """With nothing older than ``keep_last`` it sends the conversation whole; called by hand it says where it runs."""
    processor = summarize_older(summariser, keep_last=1)
    ctx = RunContext(deps=None, agent_name="x", model="m", attempt=1, iteration=1, tokens=TokenUsage())
    short: list[MessageParam] = [*HISTORY[:2], CURRENT]
    assert await processor(ctx, short) == short
    with pytest.raises(RuntimeError, match=r"pass it in define_agent\(history_processors=\[...\]\)"):
        await processor(ctx, [*HISTORY, CURRENT])


async def test_summarize_older_transcript_shows_every_kind_of_block() -> None:
    """The summariser reads text, tool calls, results (block lists, errors) and other blocks, never thinking."""
    history: list[Any] = [
        {"role": "user", "content": [{"type": "text", "text": "Look at ticket 7."}]},
        {
            "role": "assistant",
            "content": [THOUGHT, {"type": "tool_use", "id": "toolu_x", "name": "lookup", "input": {"q": "7"}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_x",
                    "content": [{"type": "text", "text": "ticket 7:"}, {"type": "text", "text": "VPN"}],
                    "is_error": True,
                }
            ],
        },
        {"role": "assistant", "content": [{"type": "compaction", "content": "Earlier: VPN."}]},
        {"role": "user", "content": "Go on."},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    ]
    client = FunctionClient(
        lambda request: (
            output_call(Summary(summary="s"))
            if str(request.get("system")).startswith("You summarise")
            else output_call(GOOD)
        )
    )
    agent = triage_agent(history_processors=[summarize_older(summariser, keep_last=0)])
    result = await execute_agent(agent, "Triage it now.", client=client, message_history=history)
    assert result.ok
    transcript = client.requests[0]["messages"][0]["content"]
    assert 'assistant called tool lookup with {"q":"7"}' in transcript
    assert "result of tool lookup (an error): ticket 7: VPN" in transcript
    assert 'assistant: [compaction block] {"type":"compaction","content":"Earlier: VPN."}' in transcript
    assert "user: Go on." in transcript
    assert "Earlier thought" not in transcript


async def test_summarize_older_remembers_its_last_sixteen_summaries() -> None:
    """Summaries are remembered per older part, the oldest forgotten past sixteen."""
    client = FunctionClient(
        lambda request: (
            output_call(Summary(summary="s"))
            if str(request.get("system")).startswith("You summarise")
            else output_call(GOOD)
        )
    )
    agent = triage_agent(history_processors=[summarize_older(summariser, keep_last=0)])

    def history(number: int) -> list[MessageParam]:
        return [HISTORY[0], HISTORY[1], {"role": "user", "content": f"Question {number}"}, HISTORY[7]]

    for number in [*range(17), 16, 0]:
        result = await execute_agent(agent, "Triage it now.", client=client, message_history=history(number))
        assert result.ok
    summaries = [r for r in client.requests if str(r.get("system")).startswith("You summarise")]
    assert len(summaries) == 18  # 17 distinct parts, then 16 remembered, then 0 made again (forgotten)


def test_history_processor_without_a_signature_gets_the_messages() -> None:
    """A builtin whose signature cannot be read is called with the messages alone."""
    agent = triage_agent(history_processors=[max])
    assert agent._processor_takes_ctx == (False,)

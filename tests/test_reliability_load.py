"""Many executions on one event loop, over real HTTP, do not interfere (issue 5, point 4).

Every execution gets its own prompt, deps and callbacks; the fake server replays the same script per
conversation, so any cross-talk (a tool result, a token count, an event or a message landing in the
wrong execution) shows up as a mismatch. ``bench/bench_load.py`` measures the same at 1,000 with
multi-turn runs and faults, and reports memory per in-flight execution.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import anthropic
from pydantic import BaseModel

from typedagent import (
    AgentDefinition,
    ExecuteCallbacks,
    ExecuteResult,
    OutputRejected,
    OutputTool,
    RunContext,
    TokenUsage,
    ToolResult,
    ValidationConfig,
    define_agent,
    execute_agent,
    tool,
)
from typedagent.testing import (
    FakeAnthropicServer,
    api_error,
    assert_valid_conversation,
    output_call,
    response,
    tool_call,
    usage,
)


class Ticket(BaseModel):
    owner: str


@tool
async def fetch(ctx: RunContext[int], field: str) -> str:
    """Read a field of this execution's ticket."""
    await asyncio.sleep(0)  # give the other executions a turn in the middle of every tool call
    return f"ticket {ctx.deps}: {field}"


def owner_seen(out: Ticket, ctx: RunContext[int]) -> None:
    if not out.owner:
        raise OutputRejected(f"ticket {ctx.deps}: owner is empty")


def agent(attempts: int = 1) -> AgentDefinition[Ticket, int]:
    return define_agent(
        name="load",
        model="claude-sonnet-4-6",
        output=OutputTool(Ticket),
        helpers=[fetch],
        validators=[owner_seen],
        deps_type=int,
        validation=ValidationConfig(max_attempts=attempts),
    )


async def run_many(
    server: FakeAnthropicServer, count: int, definition: AgentDefinition[Ticket, int], **client_options: Any
) -> tuple[list[ExecuteResult[Ticket]], list[list[ToolResult]]]:
    """``count`` executions at once on one shared client; each keeps the tool results its callback saw."""
    seen: list[list[ToolResult]] = [[] for _ in range(count)]

    def callbacks(index: int) -> ExecuteCallbacks:
        def keep(state: Any, event: ToolResult) -> None:
            seen[index].append(event)

        return ExecuteCallbacks(on_tool_result=keep)

    client = anthropic.AsyncAnthropic(api_key="test", base_url=server.base_url, **client_options)
    results = await asyncio.gather(
        *(execute_agent(definition, f"ticket {i}", client=client, deps=i, callbacks=callbacks(i)) for i in range(count))
    )
    await client.close()
    return list(results), seen


async def test_load_1000_concurrent_executions_are_isolated() -> None:
    """1,000 executions at once, one event loop, one client: each gets exactly its own results."""
    count = 1_000
    script = [response(tool_call("fetch", {"field": "owner"}), output_call(Ticket(owner="ana")), usage=usage(7, 3))]
    async with FakeAnthropicServer(script, per_conversation=True) as server:
        # The SDK's aiohttp transport (typedagent's `aiohttp` extra) does the same work in about half the CPU of
        # the default httpx2 one, which keeps this test quick; the fault test below runs on httpx2.
        results, seen = await run_many(server, count, agent(), http_client=anthropic.DefaultAioHttpClient())
    assert server.requests_served == count
    assert Counter(request["messages"][0]["content"] for request in server.requests) == Counter(
        f"ticket {i}" for i in range(count)
    )
    for i, result in enumerate(results):
        assert result.ok, (i, result)
        assert result.output == Ticket(owner="ana")
        meta = result.metadata
        assert meta.iterations == 1
        assert meta.tokens == TokenUsage(input_tokens=7, output_tokens=3)
        assert meta.messages[0] == {"role": "user", "content": f"ticket {i}"}
        answers = [(block["content"], block.get("is_error", False)) for block in meta.messages[2]["content"]]  # type: ignore[union-attr]
        assert answers == [(f"ticket {i}: owner", False), ("Output accepted.", False)]
        assert [(event.content, event.is_error) for event in seen[i]] == answers
        assert_valid_conversation(meta.messages)


async def test_load_concurrent_executions_under_faults_each_recover_on_their_own() -> None:
    """100 multi-turn executions, each hit by a 529 and a 429 the SDK retries, all succeed unmixed."""
    count = 100
    script = [
        api_error(529, retry_after=0.01),
        response(tool_call("fetch", {"field": "owner"}), usage=usage(11, 2)),
        api_error(429, retry_after=0.01),
        output_call({"owner": ""}),  # rejected by the validator: a second attempt per execution
        output_call(Ticket(owner="ana")),
    ]
    async with FakeAnthropicServer(script, per_conversation=True, record_requests=False) as server:
        results, seen = await run_many(server, count, agent(attempts=2), max_retries=2)
    assert server.requests_served == count * len(script)
    for i, result in enumerate(results):
        assert result.ok, (i, result)
        meta = result.metadata
        assert meta.iterations == 3
        assert meta.tokens == TokenUsage(input_tokens=31, output_tokens=12)
        assert [a.validation_errors for a in meta.attempts] == [(f"ticket {i}: owner is empty",), ()]
        assert seen[i][0].content == f"ticket {i}: owner"
        assert_valid_conversation(meta.messages)

"""The fake server's simulated prompt cache: Anthropic's documented examples, and its refusals."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from anthropic.lib.tools import beta_async_tool

from typedagent.testing import FakeAnthropicServer, response, text, tool_call
from typedagent.testing._prompt_cache import CacheRefusal, PromptCacheSimulator

MODEL = "claude-sonnet-4-6"
BIG = "x" * 6_975  # a text block of 7,000 JSON bytes: 2,000 tokens at 3.5 bytes a token


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def simulator() -> tuple[PromptCacheSimulator, Clock]:
    clock = Clock()
    return PromptCacheSimulator(clock=clock), clock


def blocks(count: int, *, mark_last: bool = True) -> list[dict[str, Any]]:
    """One user turn of ``count`` text blocks of 560 JSON bytes (160 tokens), the last one a breakpoint."""
    content: list[dict[str, Any]] = [{"type": "text", "text": f"{n:04d}" + "y" * 531} for n in range(count)]
    if mark_last:
        content[-1] = {**content[-1], "cache_control": {"type": "ephemeral"}}
    return [{"role": "user", "content": content}]


def test_prompt_cache_lookback_reads_within_20_blocks_only() -> None:
    """The documented lookback example: 10 blocks write; 15 read those 10; 35 find nothing within 20 positions."""
    cache, _ = simulator()
    first = cache.usage({"model": MODEL, "messages": blocks(10)})
    second = cache.usage({"model": MODEL, "messages": blocks(15)})
    third = cache.usage({"model": MODEL, "messages": blocks(35)})
    assert (first["cache_read_input_tokens"], first["cache_creation_input_tokens"]) == (0, 1_600)
    assert (second["cache_read_input_tokens"], second["cache_creation_input_tokens"]) == (1_600, 800)
    assert (third["cache_read_input_tokens"], third["cache_creation_input_tokens"]) == (0, 5_600)


def test_prompt_cache_automatic_breakpoint_extends_each_turn() -> None:
    """Automatic caching: each request reads what the one before wrote and writes its new tail."""
    cache, _ = simulator()
    system = [{"type": "text", "text": BIG}]
    turns: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
    first = cache.usage({"model": MODEL, "system": system, "messages": turns, "cache_control": {"type": "ephemeral"}})
    turns += [{"role": "assistant", "content": "hello " * 40}, {"role": "user", "content": "more"}]
    second = cache.usage({"model": MODEL, "system": system, "messages": turns, "cache_control": {"type": "ephemeral"}})
    assert first["cache_read_input_tokens"] == 0
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert second["input_tokens"] == 0
    assert second["cache_creation_input_tokens"] > 0


def test_prompt_cache_mixed_ttls_bill_one_hour_then_five_minutes() -> None:
    """A 1-hour system breakpoint and the automatic one: the split, a tool_choice change, and 5 minutes later."""
    cache, clock = simulator()
    request: dict[str, Any] = {
        "model": MODEL,
        "system": [{"type": "text", "text": BIG, "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        "messages": [{"role": "user", "content": "hi " * 100}],
        "cache_control": {"type": "ephemeral"},
    }
    first = cache.usage(request)
    tail = round(2_000 + len('{"type":"text","text":""}' + "hi " * 100) / 3.5) - 2_000
    assert first["cache_creation"] == {"ephemeral_1h_input_tokens": 2_000, "ephemeral_5m_input_tokens": tail}
    assert cache.usage({**request, "tool_choice": {"type": "any"}})["cache_read_input_tokens"] == 2_000
    clock.now = 600  # the 5-minute entries are gone, the 1-hour one is not
    later = cache.usage(request)
    assert later["cache_read_input_tokens"] == 2_000
    assert later["cache_creation"] == {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": tail}
    clock.now = 600 + 3_601
    assert cache.usage(request)["cache_read_input_tokens"] == 0


def test_prompt_cache_below_the_minimum_caches_nothing() -> None:
    """A prefix under the model's minimum (1,024 tokens for Sonnet 4.6, 4,096 for Haiku 4.5) is not cached."""
    cache, _ = simulator()
    request = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "short"}],
        "cache_control": {"type": "ephemeral"},
    }
    assert cache.usage(request)["cache_creation_input_tokens"] == 0
    haiku = {"model": "claude-haiku-4-5", "system": [{"type": "text", "text": BIG}], "messages": blocks(1)}
    assert cache.usage(haiku) == {
        "input_tokens": 2_160,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
    }


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        ({"messages": blocks(1) * 5}, "A maximum of 4 blocks with cache_control may be provided. Found 5."),
        (
            {"messages": [*blocks(1) * 4, *blocks(1, mark_last=False)], "cache_control": {"type": "ephemeral"}},
            "no slots left for automatic caching",
        ),
        (
            {
                "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": "u", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
                    }
                ],
            },
            "'1h' cannot come after one with ttl '5m'",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "u", "cache_control": {"type": "ephemeral"}}]}
                ],
                "cache_control": {"type": "ephemeral", "ttl": "1h"},
            },
            "differs from the ttl",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "q"},
                    {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "thinking",
                                "thinking": "t",
                                "signature": "s",
                                "cache_control": {"type": "ephemeral"},
                            }
                        ],
                    },
                ]
            },
            "cannot be set on a assistant thinking block",
        ),
    ],
)
def test_prompt_cache_refuses_what_the_api_refuses(request_: dict[str, Any], message: str) -> None:
    """More than four breakpoints, a 1-hour one after a 5-minute one, conflicting TTLs, a marked thinking block."""
    cache, _ = simulator()
    with pytest.raises(CacheRefusal, match=message):
        cache.usage({"model": MODEL, **request_})
    assert cache.entries == {}


async def test_fake_server_answers_a_refused_request_with_a_400_and_keeps_the_item() -> None:
    """Over HTTP the refusal is a 400 invalid_request_error; the scripted answer waits for the next request."""
    async with FakeAnthropicServer([text("fine")], prompt_cache=True) as server, server.client(max_retries=0) as client:
        with pytest.raises(anthropic.BadRequestError, match="Found 5"):
            await client.messages.create(model=MODEL, max_tokens=10, messages=blocks(1) * 5)  # type: ignore[arg-type]
        answer = await client.messages.create(model=MODEL, max_tokens=10, messages=blocks(1))  # type: ignore[arg-type]
    assert answer.content[0].type == "text"
    assert answer.usage.cache_creation_input_tokens == 0  # 160 tokens: below the minimum
    assert answer.usage.input_tokens == 160
    assert len(server.responses) == 1


async def test_fake_server_turns_the_tool_runner_s_threads_down_and_it_falls_back() -> None:
    """The SDK's tool runner threads by default; the server refuses as the API does, and the runner resends all."""

    @beta_async_tool
    async def get_weather(city: str) -> str:
        """Current weather for a city."""
        return f"Sunny in {city}"

    script = [response(tool_call("get_weather", {"city": "Paris"})), text("Done")]
    async with (
        FakeAnthropicServer(script, per_conversation=True, prompt_cache=True) as server,
        server.client() as client,
    ):
        runner = client.beta.messages.tool_runner(
            model=MODEL,
            max_tokens=100,
            tools=[get_weather],
            messages=[{"role": "user", "content": "Weather in Paris?"}],
            cache_control={"type": "ephemeral"},
        )
        final = await runner.until_done()
    assert final.content[0].type == "text"
    assert ["thread" in request for request in server.requests] == [True, False, False]
    assert [len(request["messages"]) for request in server.requests] == [1, 1, 3]
    assert len(server.responses) == 2

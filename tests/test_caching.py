"""Prompt caching: top-level ``cache_control`` on every request by default, off with ``prompt_caching=False``."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from anthropic import AsyncAnthropic
from pydantic import BaseModel

from typedagent import AgentDefinitionError, OutputRejected, OutputTool, TokenUsage, define_agent, execute_agent, tool
from typedagent.testing import ScriptedClient, output_call, response, submit_call, tool_call, usage

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

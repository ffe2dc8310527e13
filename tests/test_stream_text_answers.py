"""``stream_agent`` in native and prompted modes: typed partial outputs from the text deltas, previews by response."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support import GOOD, Triage, assert_api_valid, triage_agent

from typedagent import (
    AgentStreamEvent,
    OutputTool,
    PartialOutput,
    ReflectionPreview,
    TextDelta,
    stream_agent,
    tool,
)
from typedagent.testing import FakeAnthropicServer, ScriptedClient, output_call, response, submit_call, text, thinking

MODES = pytest.mark.parametrize("mode", ["native", "prompted"])
LONG = Triage(severity=3, summary="The VPN drops every hour for all users on the third floor")


async def _events(agent: Any, client: Any) -> tuple[list[AgentStreamEvent[Triage]], Any]:
    async with stream_agent(agent, "VPN drops", client=client) as run:
        events = [event async for event in run]
    return events, run.result


@MODES
async def test_stream_text_answer_partials_fill_in_field_by_field(mode: Any) -> None:
    """The answer's JSON text streams as typed partial outputs, ending with the whole output; the text too."""
    client = ScriptedClient([output_call(LONG)])
    events, result = await _events(triage_agent(output=OutputTool(Triage, mode=mode)), client)
    partials = [event for event in events if isinstance(event, PartialOutput)]
    assert len(partials) > 3
    summaries = [p.partial.summary for p in partials if p.partial is not None and p.partial.summary is not None]
    assert all(LONG.summary.startswith(summary) for summary in summaries)
    assert summaries == sorted(summaries, key=len)
    last = partials[-1].partial
    assert last is not None
    assert (last.severity, last.summary) == (LONG.severity, LONG.summary)
    assert partials[-1].raw == LONG.model_dump()
    assert len({p.id for p in partials}) == 1
    assert partials[0].id.startswith("msg_")
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == json.dumps(LONG.model_dump())
    assert result.ok is True
    assert result.output == LONG
    assert_api_valid(result, client)


async def test_stream_prompted_answer_skips_the_prose_and_the_fence() -> None:
    """Prose and a Markdown fence around the JSON: partials start with the object and end with it complete."""
    answer = f"Here is the triage:\n```json\n{GOOD.model_dump_json()}\n```\nAnything else?"
    client = ScriptedClient([response(thinking("Triage it."), text(answer))])
    events, result = await _events(triage_agent(output=OutputTool(Triage, mode="prompted")), client)
    partials = [event for event in events if isinstance(event, PartialOutput)]
    assert partials
    assert partials[-1].raw == GOOD.model_dump()
    assert partials[-1].partial is not None
    assert (partials[-1].partial.severity, partials[-1].partial.summary) == (2, "VPN drops hourly")
    assert result.output == GOOD


async def test_stream_prompted_answer_skips_braces_in_the_prose() -> None:
    """Prose with braces before the JSON: they start no partial output; the answer's object still streams."""
    answer = f"Filling in {{severity, summary}}:\n```json\n{LONG.model_dump_json()}\n```"
    client = ScriptedClient([text(answer)])
    events, result = await _events(triage_agent(output=OutputTool(Triage, mode="prompted")), client)
    partials = [event for event in events if isinstance(event, PartialOutput)]
    assert len(partials) > 3
    assert all(set(p.raw) <= {"severity", "summary"} for p in partials)
    assert partials[-1].raw == LONG.model_dump()
    assert result.output == LONG


@MODES
async def test_stream_text_reflection_previews_by_response(mode: Any) -> None:
    """Each JSON answer's preview is a ReflectionPreview carrying the response id."""

    @tool(name="final_output")
    def named_like_the_output(query: str) -> str:
        """A helper with the default output name: its results are not previews in text modes."""
        return query

    output = OutputTool(Triage, mode=mode, reflection_handler=lambda t: f"severity {t.severity}")
    agent = triage_agent(output=output, helpers=[named_like_the_output])
    client = ScriptedClient([output_call(GOOD), submit_call()])
    events, result = await _events(agent, client)
    previews = [event for event in events if isinstance(event, ReflectionPreview)]
    assert [(p.attempt, p.iteration, p.preview) for p in previews] == [(1, 1, "severity 2")]
    assert previews[0].id.startswith("msg_")
    assert result.ok is True


async def test_stream_native_answer_through_the_sdk() -> None:
    """Over real HTTP (the fake server's SSE and the SDK's accumulator) the partials come from the text deltas."""
    agent = triage_agent(output=OutputTool(Triage, mode="native"))
    with FakeAnthropicServer([output_call(LONG)]) as server:
        events, result = await _events(agent, server.client())
        assert server.requests[0]["stream"] is True
        assert "format" in server.requests[0]["output_config"]
    partials = [event for event in events if isinstance(event, PartialOutput)]
    assert partials[-1].raw == LONG.model_dump()
    assert partials[-1].id == "msg_fake_000001"
    assert result.output == LONG

"""Shared test helpers: common agents, and a runner that checks every conversation is API-valid."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from typedagent import AgentDefinition, ExecuteResult, OutputTool, define_agent, execute_agent
from typedagent.testing import ScriptedClient, assert_valid_conversation, conversation_problems


class Triage(BaseModel):
    """The output type most tests use."""

    severity: int = Field(ge=1, le=5)
    summary: str


GOOD = Triage(severity=2, summary="VPN drops hourly")


def triage_agent(**overrides: Any) -> AgentDefinition[Triage, None]:
    """A small agent; keyword arguments override ``define_agent`` parameters."""
    params: dict[str, Any] = {"name": "triage", "model": "claude-sonnet-4-6", "output": OutputTool(Triage)}
    params.update(overrides)
    return define_agent(**params)


def reflecting(**kwargs: Any) -> OutputTool[Triage]:
    """An output tool in reflection mode."""
    return OutputTool(Triage, reflection_handler=lambda t: f"severity {t.severity}: {t.summary}", **kwargs)


async def run(
    agent: AgentDefinition[Triage, Any], client: ScriptedClient, prompt: str = "Ticket: VPN drops", **kwargs: Any
) -> ExecuteResult[Triage]:
    """Execute, then assert the final conversation and every request sent were API-valid."""
    result = await execute_agent(agent, prompt, client=client, **kwargs)
    assert_api_valid(result, client)
    return result


def assert_api_valid(result: ExecuteResult[Any], client: ScriptedClient) -> None:
    """The result's conversation and each request's messages are ones the Messages API accepts."""
    assert_valid_conversation(result.metadata.messages)
    for number, request in enumerate(client.requests, start=1):
        problems = conversation_problems(request["messages"])
        assert not problems, f"request {number}: {problems}"


def results_of(message: Any) -> list[tuple[str, str, bool]]:
    """``(tool_use_id, content, is_error)`` of each tool_result in a user message."""
    return [
        (block["tool_use_id"], block["content"], block.get("is_error", False))
        for block in message["content"]
        if block["type"] == "tool_result"
    ]


DATA = Path(__file__).resolve().parent / "data"


def recorded(name: str) -> Any:
    """A file of ``tests/data`` (responses of real recorded traffic, see its README), parsed."""
    return json.loads((DATA / name).read_text())


def handing_over(message: dict[str, Any], output: BaseModel, *, name: str = "final_output") -> dict[str, Any]:
    """A recorded response that, in the end, also calls the output tool with ``output`` (stop reason ``tool_use``)."""
    call = {"type": "tool_use", "id": "toolu_01HandOver", "name": name, "input": output.model_dump(mode="json")}
    return {**message, "content": [*message["content"], call], "stop_reason": "tool_use"}

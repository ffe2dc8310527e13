"""Containers carry over: the container a response names is passed back on the execution's next request."""

from __future__ import annotations

from support import GOOD, handing_over, recorded, run, triage_agent

from typedagent.server_tools import code_execution
from typedagent.testing import FunctionClient, ScriptedClient, output_call, response, text, tool_call

RECORDED_CONTAINER = "container_011Caqgq9X3d68B2So2LZGmk"


async def test_the_container_of_a_response_is_sent_on_the_next_request() -> None:
    """After a code execution response names its container, every later request of the execution sends its id.

    Modelled on pydantic-ai's test_anthropic_code_execution_tool_container_reuse.yaml, where the second request
    passes `container: container_011Caqgq9X3d68B2So2LZGmk` back (code_execution_response.json).
    """
    responses = [
        {**recorded("code_execution_response.json"), "stop_reason": "end_turn"},
        output_call(GOOD),
    ]
    client = FunctionClient(lambda request: responses.pop(0))
    result = await run(triage_agent(server_tools=[code_execution()]), client)  # type: ignore[arg-type]
    assert result.ok
    assert "container" not in client.requests[0]
    assert client.requests[1]["container"] == RECORDED_CONTAINER


async def test_a_container_setting_given_as_a_dict_keeps_its_skills() -> None:
    """model_settings' container {"id": None, "skills": [...]} gets the id the API assigned, skills kept."""
    skills = [{"type": "anthropic", "skill_id": "pptx", "version": "latest"}]
    agent = triage_agent(server_tools=[code_execution()], model_settings={"container": {"skills": skills}})
    client = ScriptedClient(
        [
            response(tool_call("lookup", {"q": "x"}, unknown=True), container="container_0001"),
            response(text("again"), tool_call("lookup", {"q": "y"}, unknown=True), container="container_0001"),
            output_call(GOOD),
        ]
    )
    result = await run(agent, client)
    assert result.ok
    assert [request.get("container") for request in client.requests] == [
        {"skills": skills},
        {"skills": skills, "id": "container_0001"},
        {"skills": skills, "id": "container_0001"},
    ]


async def test_a_newer_container_replaces_the_one_sent() -> None:
    """When the API starts a new container (the old one expired), the next request names the new one."""
    client = ScriptedClient(
        [
            response(tool_call("x", unknown=True), container="container_a"),
            response(tool_call("x", unknown=True), container="container_b"),
            response(tool_call("x", unknown=True)),
            output_call(GOOD),
        ]
    )
    await run(triage_agent(model_settings={"container": "container_a"}), client)
    assert [request["container"] for request in client.requests] == [
        "container_a",
        "container_a",
        "container_b",
        "container_b",
    ]


async def test_a_container_survives_into_the_next_attempt() -> None:
    """A rejected attempt does not lose the container: the next attempt's requests send it too."""
    paused = handing_over(recorded("code_execution_response.json"), GOOD.model_copy(update={"severity": 9}))
    responses = [paused, output_call(GOOD)]
    client = FunctionClient(lambda request: responses.pop(0))
    result = await run(triage_agent(server_tools=[code_execution()]), client)  # type: ignore[arg-type]
    assert result.ok
    assert len(result.metadata.attempts) == 2
    assert client.requests[1]["container"] == RECORDED_CONTAINER

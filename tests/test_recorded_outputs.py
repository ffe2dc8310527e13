"""Native and prompted outputs against real API exchanges (pydantic-ai's cassettes, ``tests/data/README.md``).

Each recorded response is served byte for byte by ``FakeAnthropicServer`` to the real SDK, and the request typedagent
sends is compared with the recorded request: the same ``output_config``, tools, ``tool_choice`` and messages where the
two libraries mean the same thing. pydantic-ai drops schema titles and sends empty tool descriptions; typedagent keeps
pydantic's titles and sends docstrings, so those are left out of the comparison. The recordings asked for
``claude-sonnet-4-5``, which the installed SDK warns is deprecated: the agents here ask for its successor.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from pydantic import BaseModel
from support import recorded

from typedagent import AgentErrorCode, OutputTool, define_agent, execute_agent, tool
from typedagent.testing import FakeAnthropicServer, ScriptItem, conversation, malformed_body, output_call, submit_call

MODEL = "claude-sonnet-4-6"
VERTEX_SONNET_4 = "claude-sonnet-4@20250514"
"""``claude-sonnet-4-0`` (recorded, without structured outputs) by the id Vertex AI gives it: the installed SDK does
not name Sonnet 4, and warns about an id it does not know, but not about a platform's."""


class CityInfo(BaseModel):
    city: str
    country: str
    population: int


class CityLocation(BaseModel):
    city: str
    country: str


class Sum(BaseModel):
    response: int


class Payment(BaseModel):
    amount: Decimal


@tool(strict=True)
def lookup_country(city: str) -> str:
    """The country a city is in."""
    return "France"


@tool
def get_user_country() -> str:
    """The user's country."""
    return "Mexico"


def replayed(body: dict[str, Any]) -> ScriptItem:
    """A recorded response body, served exactly as recorded (``malformed_body`` sends any text as the JSON body)."""
    return malformed_body(json.dumps(body))


def untitled(node: Any, *, names: bool = False) -> Any:
    """A schema without its ``title`` keywords (a property called ``title`` stays: ``names`` marks property maps)."""
    if isinstance(node, dict):
        return {
            key: untitled(value, names=key == "properties" and not names)
            for key, value in node.items()
            if names or not (key == "title" and isinstance(value, str))
        }
    if isinstance(node, list):
        return [untitled(item) for item in node]
    return node


def tool_shape(tool_param: dict[str, Any]) -> dict[str, Any]:
    """A tool definition as the two libraries both mean it: without description and titles."""
    return untitled({key: value for key, value in tool_param.items() if key != "description"})


async def test_recorded_native_output_without_tools() -> None:
    """Native mode sends the recorded request (output_config.format, no tools) and reads the recorded JSON text."""
    exchange = recorded("native_output_no_tools.json")
    expected = exchange["request"]["body"]
    agent = define_agent(name="cities", model=MODEL, output=OutputTool(CityInfo, mode="native"), prompt_caching=False)
    with FakeAnthropicServer([replayed(exchange["response"]["body"])]) as server:
        result = await execute_agent(agent, [{"type": "text", "text": "Tell me about London"}], client=server.client())
    assert result.ok is True
    assert result.output == CityInfo(city="London", country="United Kingdom", population=9002488)
    sent = server.requests[0]
    assert set(sent) - {"system"} == set(expected) - {"stream"}
    assert untitled(sent["output_config"]) == expected["output_config"]
    assert (sent["max_tokens"], sent["messages"]) == (expected["max_tokens"], expected["messages"])


async def test_recorded_native_output_after_a_strict_tool() -> None:
    """A strict helper and the format in one request, as recorded; the tool runs, then the JSON text is the output."""
    first = recorded("native_output_strict_tool_turn1.json")
    second = recorded("native_output_strict_tool_turn2.json")
    agent = define_agent(
        name="cities",
        model=MODEL,
        output=OutputTool(CityInfo, mode="native"),
        helpers=[lookup_country],
        prompt_caching=False,
    )
    script = [replayed(first["response"]["body"]), replayed(second["response"]["body"])]
    with FakeAnthropicServer(script) as server:
        result = await execute_agent(
            agent, [{"type": "text", "text": "Give me details about Paris"}], client=server.client()
        )
    assert result.ok is True
    assert result.output == CityInfo(city="Paris", country="France", population=2161000)
    for sent, exchange in zip(server.requests, (first, second), strict=True):
        expected = exchange["request"]["body"]
        assert untitled(sent["output_config"]) == expected["output_config"]
        assert sent["tool_choice"] == expected["tool_choice"] == {"type": "auto"}
        assert [tool_shape(tool) for tool in sent["tools"]] == [tool_shape(tool) for tool in expected["tools"]]
    call = server.requests[1]["messages"][1]["content"][0]
    recorded_call = second["request"]["body"]["messages"][1]["content"][0]
    assert {key: call[key] for key in ("type", "id", "name", "input")} == recorded_call
    assert call["caller"] == {"type": "direct"}  # the assistant turn goes back verbatim, as the API sent it
    assert server.requests[1]["messages"][2]["content"][0]["content"] == "France"


async def test_recorded_native_reflection_submits_after_the_preview() -> None:
    """Reflection on the recorded exchange: the JSON answer is previewed, then the model calls submit.

    ``submit`` is a tool, which the format does not constrain; every request keeps the format and offers submit.
    """
    first = recorded("native_output_strict_tool_turn1.json")
    second = recorded("native_output_strict_tool_turn2.json")
    agent = define_agent(
        name="cities",
        model=MODEL,
        output=OutputTool(
            CityInfo, mode="native", reflection_handler=lambda c: f"{c.city}, {c.country}: {c.population}"
        ),
        helpers=[lookup_country],
    )
    script = [replayed(first["response"]["body"]), replayed(second["response"]["body"]), submit_call()]
    with FakeAnthropicServer(script) as server:
        result = await execute_agent(agent, "Give me details about Paris", client=server.client())
    assert result.ok is True
    assert result.output.population == 2161000
    expected_format = first["request"]["body"]["output_config"]
    for sent in server.requests:
        assert untitled(sent["output_config"]) == expected_format
        assert [tool["name"] for tool in sent["tools"]] == ["lookup_country", "submit"]
        assert sent["tool_choice"] == {"type": "auto"}
    messages = conversation(result)
    assert [message["role"] for message in messages] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert messages[3]["content"] == second["response"]["body"]["content"]
    assert messages[4]["content"][0]["text"].startswith("Preview of your answer:\n\nParis, France: 2161000\n\n")
    assert messages[5]["content"][0]["name"] == "submit"
    assert messages[6]["content"][0]["content"] == "Output accepted."


async def test_recorded_prompted_output_after_a_tool() -> None:
    """Prompted mode: no output_config, tool_choice auto, the tool result sent as recorded; the JSON text is read."""
    exchange = recorded("prompted_output_after_tool.json")
    expected = exchange["request"]["body"]
    call = expected["messages"][1]["content"][0]
    turn_one = {
        "id": "msg_01TurnOne",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [call],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 480, "output_tokens": 20},
    }
    agent = define_agent(
        name="largest",
        model=MODEL,
        output=OutputTool(CityLocation, mode="prompted"),
        helpers=[get_user_country],
        prompt_caching=False,
    )
    with FakeAnthropicServer([replayed(turn_one), replayed(exchange["response"]["body"])]) as server:
        result = await execute_agent(agent, expected["messages"][0]["content"], client=server.client())
    assert result.ok is True
    assert result.output == CityLocation(city="Mexico City", country="Mexico")
    sent = server.requests[1]
    assert "output_config" not in sent
    assert "output_config" not in expected
    assert sent["tool_choice"] == expected["tool_choice"]
    assert [tool["name"] for tool in sent["tools"]] == [tool["name"] for tool in expected["tools"]]
    assert sent["messages"][:2] == expected["messages"][:2]
    assert sent["messages"][2]["content"][0]["content"] == expected["messages"][2]["content"][0]["content"] == "Mexico"
    schema = json.loads(sent["system"].rsplit("\n", 1)[1])
    assert untitled(schema) == untitled(json.loads(expected["system"].split("\n\n")[1]))


async def test_recorded_prompted_output_with_thinking() -> None:
    """With thinking, on a model without structured outputs: no tools, no tool_choice; the text after it is read."""
    exchange = recorded("prompted_output_with_thinking.json")
    expected = exchange["request"]["body"]
    agent = define_agent(
        name="sums",
        model=VERTEX_SONNET_4,
        output=OutputTool(Sum, mode="prompted"),
        model_settings={"thinking": expected["thinking"]},
        prompt_caching=False,
    )
    with FakeAnthropicServer([replayed(exchange["response"]["body"])]) as server:
        result = await execute_agent(agent, expected["messages"][0]["content"], client=server.client())
    assert result.ok is True
    assert result.output == Sum(response=6)
    sent = server.requests[0]
    assert set(sent) - {"system"} == set(expected) - {"stream", "system"}
    assert sent["thinking"] == expected["thinking"]
    assert conversation(result)[1]["content"] == exchange["response"]["body"]["content"]  # the signed thinking kept


async def test_recorded_answer_of_another_shape_is_fed_back() -> None:
    """The recorded ``{"response": 6}`` for an ``int`` output is a validation failure told to the model.

    typedagent wraps an ``int`` as ``value`` (pydantic-ai as ``response``); the corrected answer is the output.
    """
    exchange = recorded("prompted_output_with_thinking.json")
    expected = exchange["request"]["body"]
    agent = define_agent(
        name="sums",
        model=VERTEX_SONNET_4,
        output=OutputTool(int, mode="prompted"),
        model_settings={"thinking": expected["thinking"]},
    )
    with FakeAnthropicServer([replayed(exchange["response"]["body"]), output_call(6)]) as server:
        result = await execute_agent(agent, "What is 3 + 3?", client=server.client())
    assert result.ok is True
    assert result.output == 6
    first = result.metadata.attempts[0]
    assert first.outcome is AgentErrorCode.VALIDATION_FAILED
    assert first.candidate == {"response": 6}
    assert first.validation_errors == ("value: Field required", "response: Extra inputs are not permitted")
    assert conversation(result)[-1]["content"] == [{"type": "text", "text": '{"value": 6}'}]


async def test_recorded_native_output_of_a_lossy_schema() -> None:
    """A Decimal field goes out in the recorded shape (an ``anyOf`` of a number and a string) and the number is read.

    The recording's pydantic gave the string a ``pattern``, which ``transform_schema`` moved into its description;
    the installed pydantic gives none, so descriptions are left out of the comparison.
    """
    exchange = recorded("native_output_lossy_schema.json")
    expected = exchange["request"]["body"]
    agent = define_agent(name="payments", model=MODEL, output=OutputTool(Payment, mode="native"), prompt_caching=False)
    with FakeAnthropicServer([replayed(exchange["response"]["body"])]) as server:
        result = await execute_agent(agent, expected["messages"][0]["content"], client=server.client())
    assert result.ok is True
    assert result.output == Payment(amount=Decimal("12.34"))
    assert undescribed(untitled(server.requests[0]["output_config"])) == undescribed(expected["output_config"])


def undescribed(node: Any) -> Any:
    """A schema without its descriptions."""
    if isinstance(node, dict):
        return {key: undescribed(value) for key, value in node.items() if key != "description"}
    if isinstance(node, list):
        return [undescribed(item) for item in node]
    return node

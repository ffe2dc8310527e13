"""Shared agents, clients and contexts of the evals tests."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from typedagent import AgentDefinition, OutputTool, define_agent, tool
from typedagent.evals import EvalContext
from typedagent.testing import FunctionClient, MessagesRequest, ScriptStep, output_call, tool_call


class City(BaseModel):
    """The output type of the evals tests."""

    name: str
    population: int
    tags: list[str]


PARIS = City(name="Paris", population=2_100_000, tags=["capital", "france"])


@tool
def lookup(city: str) -> str:
    """Look a city up.

    Args:
        city: Its name.
    """
    return f"{city}: about 2.1 million people"


def city_agent() -> AgentDefinition[City, None]:
    """An agent that looks the city up, then answers."""
    return define_agent(name="cities", model="claude-sonnet-4-6", output=OutputTool(City), helpers=[lookup])


def answering(*outputs: City) -> FunctionClient:
    """A model that looks the city up, then answers with ``outputs`` in turn (one per execution)."""
    answers = list(outputs)

    def reply(request: MessagesRequest) -> ScriptStep:
        if len(request["messages"]) == 1:
            return tool_call("lookup", {"city": "Paris"})
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        return output_call(answer)

    return FunctionClient(reply)


def context(**fields: Any) -> EvalContext[City]:
    """An ``EvalContext`` of a successful run answering ``PARIS``, fields overridden."""
    values: dict[str, Any] = {"case": "paris", "prompt": "Tell me about Paris", "expected": PARIS, "output": PARIS}
    values.update({"error_code": None, **fields})
    return EvalContext(**values)

"""Type-checked, never run: the output type flows from OutputTool to the result."""

from typing import assert_type

from pydantic import BaseModel

from typedagent import AgentDefinition, ExecuteResult, OutputTool, define_agent, execute_agent


class Answer(BaseModel):
    text: str


agent = define_agent(name="a", model="m", output=OutputTool(Answer))
assert_type(agent, AgentDefinition[Answer, None])


async def run() -> None:
    result = await execute_agent(agent, "hi")
    assert_type(result, ExecuteResult[Answer])
    if result.ok:
        assert_type(result.output, Answer)

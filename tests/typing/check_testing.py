"""Type-checked, never run: scripts and ``FunctionClient`` functions written the natural way need no annotation.

Every line ending in ``# type: ignore[...]`` must stay an error for mypy (``warn_unused_ignores``),
every ``# pyright: ignore[...]`` one for basedpyright (``reportUnnecessaryTypeIgnoreComment``).
"""

from typing import assert_type

from pydantic import BaseModel

from typedagent.testing import (
    Block,
    FakeAnthropicServer,
    FakeAnthropicServerProcess,
    FunctionClient,
    FunctionReturn,
    MessagesRequest,
    ScriptedClient,
    ScriptItem,
    ScriptStep,
    api_error,
    delay,
    dropped_connection,
    malformed_body,
    output_call,
    response,
    script_to_json,
    text,
    tool_call,
)


class Triage(BaseModel):
    severity: int
    summary: str


# Every helper returns a ScriptStep, so a script mixing them is one list type (mypy would join unrelated
# classes to ``object``) that every client and server takes.

assert_type(tool_call("search", {"query": "vpn"}), Block)
assert_type(text("hello"), Block)
faults = [api_error(429, retry_after=0.01), dropped_connection(), delay(0.1, text("late")), malformed_body()]
script = [*faults, tool_call("search", {"query": "vpn"}), output_call(Triage(severity=2, summary="VPN drops"))]
ScriptedClient(script)
ScriptedClient(faults)
FakeAnthropicServer(script)
FakeAnthropicServerProcess(script)
script_to_json(script)
ScriptedClient([response(text("Checking."), tool_call("search")), "plain text", output_call({"severity": 2})])
annotated: list[ScriptItem] = [*script, "plain text"]
ScriptedClient(annotated)
steps: list[ScriptStep] = [api_error(529), tool_call("search"), response(text("Found it."))]
ScriptedClient(steps)
ScriptedClient([object()])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]


# A FunctionClient function takes the request as a MessagesRequest and returns a FunctionReturn, sync or async.


def model(request: MessagesRequest) -> FunctionReturn:
    last = request["messages"][-1]
    if last["role"] == "user" and isinstance(last["content"], str):
        return tool_call("search", {"query": last["content"]})
    return output_call(Triage(severity=2, summary=str(last["content"][0]["content"])))


async def async_model(request: MessagesRequest) -> FunctionReturn:
    return api_error(529) if len(request["messages"]) > 3 else text("thinking")


assert_type(FunctionClient(model).requests, list[MessagesRequest])
FunctionClient(async_model)
FunctionClient(lambda request: output_call({"severity": len(request["messages"])}))
FunctionClient(lambda: text("no request"))  # type: ignore[arg-type, misc]  # pyright: ignore[reportArgumentType]
FunctionClient(lambda request: 42)  # type: ignore[arg-type, return-value]  # pyright: ignore[reportArgumentType]

"""``approve_all`` and ``deny_all``: a paused execution's calls decided in one line of a test."""

from __future__ import annotations

import pytest
from toolkit_support import PARIS, geo_agent

from typedagent import Approve, Deny, ExecutePaused, ExternalResult, execute_agent, tool
from typedagent.testing import ScriptedClient, approve_all, deny_all, output_call, response, tool_call


@tool(requires_approval=True)
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool(external=True)
def ask_user(question: str) -> str:
    """Ask the user."""
    ...


AGENT = geo_agent(helpers=[delete, ask_user])


async def _paused(client: ScriptedClient) -> ExecutePaused:
    result = await execute_agent(AGENT, "Paris?", client=client, pausable=True)
    assert isinstance(result, ExecutePaused)
    return result


async def test_approval_helpers_approve_all_and_deny_all_decide_every_approval_call() -> None:
    """Every approval call gets ``Approve()`` (or ``Deny(reason)``); external results come by tool name."""
    client = ScriptedClient(
        [
            response(
                tool_call("delete", {"path": "/a"}),
                tool_call("ask_user", {"question": "?"}),
                tool_call("delete", {"path": "/b"}),
            ),
            output_call(PARIS),
        ]
    )
    paused = await _paused(client)
    approved = approve_all(paused, results={"ask_user": "yes"})
    assert approved == {
        "toolu_01_001": Approve(),
        "toolu_01_002": ExternalResult("yes"),
        "toolu_01_003": Approve(),
    }
    assert deny_all(paused.state, "not now", results={"ask_user": "no"})["toolu_01_003"] == Deny("not now")
    result = await execute_agent(AGENT, resume=paused.state, decisions=approved, client=client)
    assert result.ok


async def test_approval_helpers_external_call_without_a_result_is_a_value_error() -> None:
    """A waiting external call and no ``results`` for its tool: ``ValueError`` naming the tool."""
    paused = await _paused(ScriptedClient([tool_call("ask_user", {"question": "?"})]))
    with pytest.raises(ValueError, match="call 'toolu_01_001' of external tool 'ask_user' waits for its result"):
        approve_all(paused)
    with pytest.raises(ValueError, match=r"results=\{'ask_user': \.\.\.\}"):
        deny_all(paused, results={"other": 1})


async def test_approval_helpers_scripted_client_skip_passes_over_answered_items() -> None:
    """``ScriptedClient.skip(n)`` serves the script from item ``n``: a resumed run in a fresh process."""
    client = ScriptedClient([tool_call("delete", {"path": "/a"}), output_call(PARIS)])
    paused = await _paused(client)
    fresh = ScriptedClient(client.script).skip(1)
    assert fresh.remaining == 1
    result = await execute_agent(AGENT, resume=paused.state, decisions=approve_all(paused), client=fresh)
    assert result.ok
    assert ScriptedClient([]).skip(5).remaining == 0

"""Declaring tools whose calls wait for a decision: ``requires_approval`` and external tools, checked at definition."""

from __future__ import annotations

from typing import Any

import pytest
from support import triage_agent

from typedagent import AgentDefinitionError, HelperTool, RunContext, tool

DEFINITION: Any = {"name": "status", "input_schema": {"type": "object", "properties": {"id": {"type": "string"}}}}


def test_waiting_tools_tool_declares_approval_as_a_bool_or_a_predicate() -> None:
    """``tool(requires_approval=...)`` keeps the flag or the predicate; the default is False."""

    def outside(ctx: RunContext[Any], args: dict[str, Any]) -> bool:
        return True

    @tool(requires_approval=True)
    def delete(path: str) -> str:
        """Delete."""
        return path

    def move(path: str) -> str:
        """Move."""
        return path

    checked = tool(move, requires_approval=outside)
    plain = tool(move)
    assert (delete.requires_approval, checked.requires_approval, plain.requires_approval) == (True, outside, False)
    assert (delete.external, plain.external) == (False, False)


def test_waiting_tools_external_tool_is_a_signature_whose_schema_is_sent() -> None:
    """``tool(fn, external=True)``: the schema comes from the signature, as for any tool; the function never runs."""

    def ask_user(question: str, options: list[str] | None = None) -> str:
        """Ask the person at the keyboard.

        Args:
            question: What to ask.
            options: The answers to offer.
        """
        ...

    made = tool(ask_user, external=True)
    assert made.external
    assert made.to_param() == tool(ask_user).to_param()
    agent = triage_agent(helpers=[made])
    assert agent.tool_params()[0]["name"] == "ask_user"


def test_waiting_tools_helper_tool_without_handler_is_external() -> None:
    """``HelperTool(definition=..., handler=None)`` is an external tool; with a handler it is not."""
    external = HelperTool(definition=DEFINITION, handler=None)
    assert external.external
    assert not HelperTool(definition=DEFINITION, handler=lambda _: "x").external
    approved = HelperTool(definition=DEFINITION, handler=lambda _: "x", requires_approval=True)
    assert approved.requires_approval is True
    assert approved.approval_args({"id": "1"}) == {"id": "1"}


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: HelperTool(definition=DEFINITION, handler=5), "handler must be callable (or None for an external"),  # type: ignore[arg-type]
        (
            lambda: HelperTool(definition=DEFINITION, handler=lambda _: "", requires_approval="yes"),  # type: ignore[arg-type]
            "requires_approval must be True, False or a predicate (ctx, args) -> bool, got 'yes'",
        ),
        (
            lambda: HelperTool(definition=DEFINITION, handler=None, requires_approval=True),
            "Tool 'status' is external: its calls always wait for a result from outside",
        ),
        (
            lambda: HelperTool(definition=DEFINITION, handler=None, timeout_s=3),
            "Tool 'status' is external: its result comes from outside, so there is nothing to time out",
        ),
        (lambda: tool(lambda: "", name="t", requires_approval=1), "requires_approval must be True, False or"),  # type: ignore[call-overload]
        (lambda: tool(lambda: "", name="t", external=True, requires_approval=True), "Tool 't' is external"),
        (lambda: tool(lambda: "", name="t", external=True, timeout_s=1.0), "nothing to time out"),
    ],
)
def test_waiting_tools_wrong_declarations_fail_at_definition(make: Any, message: str) -> None:
    """A ``requires_approval`` that is neither a bool nor a predicate, or one (or a timeout) on an external tool."""
    with pytest.raises(AgentDefinitionError) as raised:
        make()
    assert message in str(raised.value)

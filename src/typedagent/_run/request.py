"""The request: its parameters, the system prompt with its protocol note, and the opening messages."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from .._agent.context import RunContext
from .._agent.output import SUBMIT_TOOL_NAME
from .._shared.errors import safe_str
from .._shared.frozen import fresh_copy, thaw
from . import feedback
from .caching import cached_request

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, MessageParam

    from .._agent.definition import AgentDefinition
    from .._api.api_errors import ApiFailure
    from .conversation import Conversation

__all__ = ["build_messages", "build_system_prompt", "last_iteration_params", "protocol_note", "request_params"]


def protocol_note(agent: AgentDefinition[Any, Any]) -> str:
    """The short note telling the model how its turn ends: the tool that hands over the result, the budget if it binds.

    The budget binds when the model's own choices can use it up (helpers, server tools or reflection give it calls
    to spend) and nothing forces the output on the last iteration. Plain text is ruled out in words only when
    ``tool_choice`` allows it (extended thinking, where it is ``auto``).
    """
    name = agent.output.name
    if agent.reflection_enabled:
        lines = [
            f"Calling `{name}` shows a preview of your result (its input); call it again to revise. "
            f"Calling `{SUBMIT_TOOL_NAME}` hands over the last one for validation and ends your turn."
        ]
    else:
        lines = [f"Calling `{name}` hands over your result (its input) and ends your turn."]
    if thinking_on(agent.model_settings):
        lines.append("Do not answer in plain text.")
    spends = agent.helpers or agent.toolsets or agent.server_tools or agent.reflection_enabled
    if spends and not agent.validation.force_output_on_last_iteration:
        lines.append(f"You have at most {agent.validation.max_iterations_per_attempt} responses.")
    return " ".join(lines)


def build_system_prompt(agent: AgentDefinition[Any, Any], ctx: RunContext[Any]) -> str:
    """The agent's instructions (fixed or built from the context) followed by the protocol note."""
    instructions = agent.instructions
    text = instructions(ctx) if callable(instructions) else (instructions or "")
    if not isinstance(text, str):
        raise TypeError(
            f"Agent {agent.name!r}: the instructions callable must return a str, got {type(text).__name__}."
        )
    note = protocol_note(agent)
    return f"{text.rstrip()}\n\n{note}" if text.strip() else note


def build_messages(
    prompt: str | Sequence[ContentBlockParam], history: Sequence[MessageParam] | None
) -> list[MessageParam]:
    """The opening conversation: a copy of ``history`` plus the prompt as a user turn.

    When the history ends with a user turn, the prompt is added to that turn so roles keep alternating.
    """
    messages: list[Any] = copy.deepcopy(list(history or ()))
    if isinstance(prompt, str):
        blocks: list[Any] = [{"type": "text", "text": prompt}] if prompt.strip() else []
    else:
        blocks = list(prompt)
    if messages and messages[-1]["role"] == "user":
        previous = messages[-1]["content"]
        previous_blocks = [{"type": "text", "text": previous}] if isinstance(previous, str) else list(previous)
        messages[-1] = {"role": "user", "content": [*previous_blocks, *blocks]}
    elif blocks:
        messages.append({"role": "user", "content": prompt if isinstance(prompt, str) else blocks})
    return messages


def request_params(agent: AgentDefinition[Any, Any], system: str, messages: list[Any]) -> dict[str, Any]:
    """The keyword arguments of every ``messages.create`` call of an execution.

    ``messages`` is the conversation's own list, so each call sends the conversation as it is then.
    """
    params: dict[str, Any] = {
        "model": agent.model,
        "max_tokens": agent.max_tokens,
        "system": system,
        # A fresh copy: a client changing it cannot change the agent.
        "tools": fresh_copy(agent._tool_params),
        "tool_choice": {"type": "auto" if thinking_on(agent.model_settings) else "any"},
        "messages": messages,
        **thaw(agent.model_settings),  # plain dicts and lists again, the client's own to keep
    }
    return cached_request(params, agent.prompt_caching)


def last_iteration_params(
    agent: AgentDefinition[Any, Any],
    params: dict[str, Any],
    conversation: Conversation,
    has_candidate: bool,
    *,
    can_force: bool = True,
) -> dict[str, Any] | None:
    """The request of an attempt's last iteration under ``force_output_on_last_iteration``; None if it cannot force.

    The tool to call is the output tool, or ``submit`` when reflecting with a candidate. Without extended thinking,
    ``tool_choice`` names it. With thinking, where the API forbids forcing, ``tool_choice`` stays ``auto`` and the
    tools stay as they are (so the prompt cache holds); the last user turn is told instead, in the conversation
    itself, so that later requests extend the same cached prefix. A paused turn (the assistant's, last) cannot be
    told anything: then nothing is forced.
    """
    name = SUBMIT_TOOL_NAME if agent.reflection_enabled and has_candidate else agent.output.name
    if can_force and not thinking_on(agent.model_settings):
        return {**params, "tool_choice": {"type": "tool", "name": name}}
    if not conversation.messages or conversation.messages[-1]["role"] != "user":
        return None
    conversation.add_user_text(feedback.last_turn(name))
    return params


def refuses_forcing(failure: ApiFailure, sent: Mapping[str, Any]) -> bool:
    """Whether the API refused a request because its ``tool_choice`` forced a tool (an HTTP 400 naming it).

    Models that always think refuse ``any`` and ``tool``, as any model does with thinking on; the loop then
    falls back to ``auto`` rather than failing.
    """
    choice = sent.get("tool_choice")
    forced = isinstance(choice, Mapping) and cast("Mapping[str, object]", choice).get("type") in ("any", "tool")
    return forced and failure.status_code == 400 and "tool_choice" in safe_str(failure.cause)


ENABLED_THINKING = ("enabled", "adaptive")


def thinking_on(settings: Mapping[str, Any]) -> bool:
    """Whether extended thinking is on (the API then forbids forcing tool use)."""
    thinking = settings.get("thinking")
    return isinstance(thinking, Mapping) and cast("Mapping[str, object]", thinking).get("type") in ENABLED_THINKING

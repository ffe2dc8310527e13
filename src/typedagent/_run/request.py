"""The request: its parameters, the system prompt with its protocol note, and the opening messages."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from .._agent.context import RunContext
from .._agent.output import SUBMIT_TOOL_NAME
from .._api.hop import thinking_on
from .._shared.errors import safe_str
from .._shared.frozen import fresh_copy, thaw
from . import feedback
from .caching import cached_request

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, MessageParam

    from .._agent.definition import AgentDefinition
    from .._api.api_errors import ApiFailure
    from .conversation import Conversation

__all__ = [
    "PROMPTED_SCHEMA_HEADING",
    "build_messages",
    "build_system_prompt",
    "last_iteration_params",
    "protocol_note",
    "request_params",
    "schema_in_prompt",
]

PROMPTED_SCHEMA_HEADING = "JSON schema of the result:"
"""Prompted mode: the line of the protocol note after which the result's JSON schema follows."""


def protocol_note(agent: AgentDefinition[Any, Any]) -> str:
    """The short note telling the model how its turn ends, and the budget if it binds.

    In ``"tool"`` mode: the tool that hands over the result. In ``"native"`` and ``"prompted"`` modes: a JSON
    answer in the text that ends the turn (``"prompted"`` adds the schema below a heading). The budget binds when
    the model's own choices can use it up (helpers, server tools or reflection give it calls to spend) and nothing
    forces the output on the last iteration. Plain text is ruled out in words only when ``tool_choice`` allows it
    (extended thinking, where it is ``auto``).
    """
    lines = _handing_over(agent)
    spends = agent.helpers or agent.toolsets or agent.server_tools or agent.reflection_enabled
    if spends and not agent.validation.force_output_on_last_iteration:
        lines.append(f"You have at most {agent.validation.max_iterations_per_attempt} responses.")
    note = " ".join(lines)
    if agent.output.mode == "prompted":
        note += f"\n\n{PROMPTED_SCHEMA_HEADING}\n{json.dumps(agent.output._input_schema)}"
    return note


def _handing_over(agent: AgentDefinition[Any, Any]) -> list[str]:
    """How the output is handed over in the agent's mode: a tool call, or a JSON answer (then ``submit``)."""
    name = agent.output.name
    mode = agent.output.mode
    if mode != "tool":
        schema = "that matches the JSON schema below " if mode == "prompted" else ""
        lines = [f"Answer with your result as one JSON object {schema}in the text that ends your turn."]
        if mode == "prompted":
            lines.append("Write only the JSON: no text or Markdown fence before or after it.")
        if agent.reflection_enabled:
            lines.append(
                "Each answer shows a preview of your result. Send a revised JSON answer to change it, and call "
                f"`{SUBMIT_TOOL_NAME}` to hand over the last one for validation and end your turn."
            )
        return lines
    if agent.reflection_enabled:
        lines = [
            f"Calling `{name}` shows a preview of your result (its input); call it again to revise. "
            f"Calling `{SUBMIT_TOOL_NAME}` hands over the last one for validation and ends your turn."
        ]
    else:
        lines = [f"Calling `{name}` hands over your result (its input) and ends your turn."]
    if thinking_on(agent.model_settings):
        lines.append("Do not answer in plain text.")
    return lines


def schema_in_prompt(system: object) -> dict[str, Any] | None:
    """The result's JSON schema a prompted agent's system prompt (a string, or text blocks) gives; None if none."""
    if isinstance(system, list):
        system = "\n".join(str(block.get("text", "")) for block in system if isinstance(block, Mapping))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType, reportUnknownVariableType]
    if not isinstance(system, str):
        return None
    heading = system.rfind(PROMPTED_SCHEMA_HEADING)
    start = system.find("{", heading) if heading >= 0 else -1
    if start < 0:
        return None
    try:
        schema, _ = json.JSONDecoder().raw_decode(system, start)
    except ValueError:
        return None
    return cast("dict[str, Any]", schema) if isinstance(schema, dict) else None


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
    messages: list[Any] = copy.deepcopy(list(history)) if history else []
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
        **_tools(agent),
        "messages": messages,
        **thaw(agent.model_settings),  # plain dicts and lists again, the client's own to keep
    }
    output_format = agent.output._format
    if output_format is not None:
        # Native mode: the format joins what the user set in output_config (its effort, say).
        params["output_config"] = {**(params.get("output_config") or {}), "format": thaw(output_format)}
    return cached_request(params, agent.prompt_caching, agent._tool_params)


def _tools(agent: AgentDefinition[Any, Any]) -> dict[str, Any]:
    """``tools`` and ``tool_choice``: the output tool forced (tool mode), or a choice left to the model.

    In native and prompted modes the answer is text, so no tool is forced; an agent with no tool at all then sends
    neither (the API refuses a ``tool_choice`` without tools).
    """
    tools = fresh_copy(agent._tool_params)  # a fresh copy: a client changing it cannot change the agent
    if agent.output.mode != "tool":
        return {"tools": tools, "tool_choice": {"type": "auto"}} if tools else {}
    return {"tools": tools, "tool_choice": {"type": "auto" if thinking_on(agent.model_settings) else "any"}}


def last_iteration_params(
    agent: AgentDefinition[Any, Any],
    params: dict[str, Any],
    conversation: Conversation,
    has_candidate: bool,
    *,
    can_force: bool = True,
) -> dict[str, Any] | None:
    """The request of an attempt's last iteration under ``force_output_on_last_iteration``; None if it cannot force.

    In native and prompted modes the output is text: ``tool_choice`` ``none`` makes this response the answer (the
    tools stay, so the prompt cache holds; allowed with thinking), unless reflecting with a candidate, when ``submit``
    is the tool to call. An agent with no tools sends nothing else: its response is text anyway.

    The tool to call is the output tool, or ``submit`` when reflecting with a candidate. Without extended thinking,
    ``tool_choice`` names it. With thinking, where the API forbids forcing, ``tool_choice`` stays ``auto`` and the
    tools stay as they are (so the prompt cache holds); the last user turn is told instead, in the conversation
    itself, so that later requests extend the same cached prefix. A paused turn (the assistant's, last) cannot be
    told anything: then nothing is forced.
    """
    submits = agent.reflection_enabled and has_candidate
    if agent.output.mode != "tool" and not submits:
        return {**params, "tool_choice": {"type": "none"}} if "tools" in params else params
    name = SUBMIT_TOOL_NAME if submits else agent.output.name
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

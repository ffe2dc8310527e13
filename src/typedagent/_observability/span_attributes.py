"""The attributes of typedagent's spans, as the OpenTelemetry GenAI semantic conventions name them."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

from .._api.secrets import REDACTED
from .._run.conversation import block_param
from .._run.server_calls import CALL_KINDS, is_server_result, result_text
from .._shared.results import ExecuteFailure

if TYPE_CHECKING:
    from .._agent.definition import AgentDefinition
    from .._shared.events import FallbackSwitch
    from .._shared.pausing import PausableResult
    from .._shared.results import TokenUsage

__all__ = [
    "MAX_CONTENT_CHARS",
    "agent_attributes",
    "chat_request_attributes",
    "chat_response_attributes",
    "content_json",
    "execution_end_attributes",
    "fallback_attributes",
    "messages_content",
    "server_call_events",
    "usage_attributes",
]

MAX_CONTENT_CHARS: Final = 100_000
"""A content attribute longer than this is cut, with a marker: backends refuse attributes of many megabytes."""

_REQUEST: Final = {"max_tokens": "gen_ai.request.max_tokens"}
"""The request's numeric ``messages.create`` parameters that have a GenAI attribute (tests/test_sdk_tables.py
keeps every one a parameter the installed SDK accepts)."""


def content_json(value: object, secrets: Iterable[str]) -> str:
    """``value`` for a content attribute (a text as it is, anything else as JSON), secrets cut out, length capped."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    if len(text) > MAX_CONTENT_CHARS:
        text = text[:MAX_CONTENT_CHARS] + "…[truncated]"
    return text


def agent_attributes(agent: AgentDefinition[Any, Any], conversation_id: str) -> dict[str, Any]:
    """What the ``invoke_agent`` span starts with."""
    return {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.agent.name": agent.name,
        "gen_ai.request.model": agent.model,
        "gen_ai.conversation.id": conversation_id,
        "gen_ai.output.type": "json",
        "typedagent.output.tool": agent.output.name,
        "typedagent.output.mode": agent.output.mode,
        "typedagent.validation.max_attempts": agent.validation.max_attempts,
    }


def usage_attributes(prefix: str, usage: TokenUsage) -> dict[str, int]:
    """Token counts under ``prefix``: input (cache reads and writes included, as the conventions count them)."""
    return {
        f"{prefix}.input_tokens": usage.input_tokens
        + usage.cache_read_input_tokens
        + usage.cache_creation_input_tokens,
        f"{prefix}.output_tokens": usage.output_tokens,
        f"{prefix}.cache_read.input_tokens": usage.cache_read_input_tokens,
        f"{prefix}.cache_creation.input_tokens": usage.cache_creation_input_tokens,
    }


def execution_end_attributes(result: PausableResult[Any]) -> dict[str, Any]:
    """What a finished execution adds to its span: outcome, counts and the aggregated usage.

    The usage goes under ``typedagent.usage.*``, never ``gen_ai.usage.*``: backends that add up the usage of a
    trace's spans would count every model call twice.
    """
    meta = result.metadata
    attributes: dict[str, Any] = {
        "typedagent.outcome": result.status,
        "typedagent.attempts": len(meta.attempts),
        "typedagent.iterations": meta.iterations,
        "typedagent.tool_calls": meta.tool_calls,
        "typedagent.pauses": meta.pauses,
        **usage_attributes("typedagent.usage", meta.tokens),
    }
    if meta.response_model is not None:
        attributes["gen_ai.response.model"] = meta.response_model
    if meta.cost_usd is not None:
        attributes["typedagent.cost_usd"] = meta.cost_usd
    if len(set(meta.models_used)) > 1:
        attributes["typedagent.models_used"] = meta.models_used  # the calls went to more than one model
    if isinstance(result, ExecuteFailure):
        attributes["error.type"] = result.error.code.value
    return attributes


def fallback_attributes(event: FallbackSwitch) -> dict[str, Any]:
    """A switch to another model of the fallback chain, for the next ``chat`` span and the execution span's event."""
    attributes: dict[str, Any] = {
        "typedagent.fallback.from_model": event.from_model,
        "typedagent.fallback.to_model": event.to_model,
        "typedagent.fallback.position": event.position,
        "typedagent.fallback.reason": event.reason,
        "typedagent.fallback.server_side": event.server_side,
    }
    if event.status_code is not None:
        attributes["typedagent.fallback.status_code"] = event.status_code
    return attributes


def chat_request_attributes(params: Mapping[str, Any], conversation_id: str) -> dict[str, Any]:
    """What typedagent's own ``chat`` span starts with (used when the SDK emits no span of its own)."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": str(params.get("model", "")),
        "gen_ai.conversation.id": conversation_id,
    }
    for name, attribute in _REQUEST.items():
        value = params.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            attributes[attribute] = value
    return attributes


def chat_response_attributes(response: Any, usage: TokenUsage) -> dict[str, Any]:
    """What a model call's response adds to typedagent's own ``chat`` span."""
    attributes: dict[str, Any] = usage_attributes("gen_ai.usage", usage)
    for name, attribute in (("id", "gen_ai.response.id"), ("model", "gen_ai.response.model")):
        value = getattr(response, name, None)
        if isinstance(value, str):
            attributes[attribute] = value
    stop = getattr(response, "stop_reason", None)
    if isinstance(stop, str):
        attributes["gen_ai.response.finish_reasons"] = (stop,)
    return attributes


def _part(block: Mapping[str, Any]) -> dict[str, Any]:
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "content": block.get("text", "")}
    if kind in ("thinking", "redacted_thinking"):
        return {"type": "reasoning", "content": block.get("thinking", "")}
    if kind in ("tool_use", *CALL_KINDS):
        return {"type": "tool_call", "id": block.get("id"), "name": block.get("name"), "arguments": block.get("input")}
    if kind == "tool_result" or is_server_result(block):
        return {"type": "tool_call_response", "id": block.get("tool_use_id"), "response": result_text(block)[0]}
    return {"type": str(kind)}  # images and documents: their data is not content worth a span's size


def _as_mapping(block: Any) -> Mapping[str, Any]:
    return cast("Mapping[str, Any]", block) if isinstance(block, Mapping) else block_param(block)


def messages_content(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Messages in the conventions' shape (``role`` and ``parts``), for ``gen_ai.input.messages`` / ``output``."""
    shaped: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts = [{"type": "text", "content": content}]
        else:
            blocks = cast("list[Any]", content or [])
            parts = [_part(_as_mapping(block)) for block in blocks]
        shaped.append({"role": message.get("role"), "parts": parts})
    return shaped


def server_call_events(response: Any) -> list[tuple[str, dict[str, Any]]]:
    """An event per server or MCP tool call in ``response``, and per result: the API ran them, no span can time them."""
    events: list[tuple[str, dict[str, Any]]] = []
    for block in (block_param(block) for block in getattr(response, "content", ())):
        kind = CALL_KINDS.get(block.get("type", ""))
        if kind is not None:
            call = {"gen_ai.tool.name": str(block.get("name")), "gen_ai.tool.call.id": str(block.get("id"))}
            events.append(("typedagent.server_tool_call", {**call, "typedagent.tool.kind": kind}))
        elif is_server_result(block):
            is_error = result_text(block)[1]
            attributes: dict[str, Any] = {
                "gen_ai.tool.call.id": str(block.get("tool_use_id")),
                "typedagent.tool.is_error": is_error,
            }
            events.append(("typedagent.server_tool_result", {**attributes, "typedagent.result.type": block["type"]}))
    return events

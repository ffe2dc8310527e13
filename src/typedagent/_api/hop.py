"""The request one model of a fallback chain is sent: the same conversation and tools, with that model's settings.

What moves with the conversation, as the Messages API documents it:

- **Thinking blocks** (``thinking``, ``redacted_thinking``) are sent back verbatim to a model that thinks: their
  signatures hold across models and platforms, and the SDK's own refusal fallback replays them unchanged. A model
  called without thinking is sent the conversation without them: the API lets earlier turns' thinking be left
  out, and a model that does not think may not take them. A model that thinks cannot continue a turn (a tool
  loop) that another model began without thinking (the API wants the turn's assistant message to open with a
  thinking block): that one request goes without thinking, and later turns think again.
- **Fallback blocks** (``{"type": "fallback", ...}``, which the API's server-side fallback puts where one model's
  output gives way to the next) are sent back in place on requests that carry the server-side fallback beta, and
  left out of any other request (they hold no content; the API rejects them elsewhere).
- **Structured outputs**: a native output's ``output_config.format`` goes with the request to every model (the
  model's own ``output_config`` settings join it); a model without structured outputs (Claude 3, Sonnet 4 and Opus
  4 before 4.1) cannot take a request with that format or with strict tools, and is skipped, with
  ``lacks_structured_outputs`` saying why.
- **Server state** that belongs to one platform cannot move to another client: a code execution container, and
  the calls made through an MCP connector session. An alternative on another client is then skipped, with
  ``cannot_move`` saying why, rather than sent a request that names what does not exist there.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

from .._shared.frozen import thaw

__all__ = [
    "FALLBACK_CREDIT_BETA",
    "MAX_SERVER_FALLBACKS",
    "NO_STRUCTURED_OUTPUTS",
    "SERVER_FALLBACK_BETA",
    "cannot_move",
    "continues_turn_without_thinking",
    "credit_token",
    "hop_request",
    "lacks_structured_outputs",
    "moved_messages",
    "recommended_model",
    "served_by",
    "server_entry",
    "supports_server_fallback",
    "thinking_on",
]

SERVER_FALLBACK_BETA: Final = "server-side-fallback-2026-07-01"
"""The beta of the ``fallbacks`` request parameter (and of echoing ``fallback`` blocks back)."""
FALLBACK_CREDIT_BETA: Final = "fallback-credit-2026-07-01"
"""The beta under which a refusal carries a ``fallback_credit_token``, redeemed on the retry."""
MAX_SERVER_FALLBACKS: Final = 3
"""The most entries the API takes in ``fallbacks``."""
SERVER_ENTRY_SETTINGS: Final = frozenset({"thinking", "output_config", "speed"})
"""The settings an entry of ``fallbacks`` may change besides ``model`` and ``max_tokens``."""
THINKING_BLOCKS: Final = frozenset({"thinking", "redacted_thinking"})
ENABLED_THINKING: Final = ("enabled", "adaptive")
NO_STRUCTURED_OUTPUTS: Final = re.compile(r"claude-(?:instant|2|3)|claude-(?:sonnet|opus)-4(?!-[1-9](?:\D|$))")
"""Models without structured outputs and strict tools (Claude 3 and earlier, Sonnet 4 and Opus 4 before 4.1:
``claude-sonnet-4-0``, ``claude-opus-4-20250514``, ``claude-sonnet-4@20250514``, not ``claude-sonnet-4-5``): newer
ones have them, so a model this does not match is taken to (a Bedrock or Vertex id names the model inside it)."""


def thinking_on(settings: Mapping[str, Any]) -> bool:
    """Whether extended thinking is on (the API then forbids forcing tool use)."""
    thinking = settings.get("thinking")
    return isinstance(thinking, Mapping) and cast("Mapping[str, object]", thinking).get("type") in ENABLED_THINKING


def hop_request(
    params: Mapping[str, Any],
    *,
    model: str,
    max_tokens: int,
    replaced: Mapping[str, Any],
    settings: Mapping[str, Any],
) -> dict[str, Any]:
    """``params`` (the execution's request) for another model: its ``model``, ``max_tokens`` and settings.

    ``replaced``: the settings ``params`` was built with (the agent's), taken out; ``settings``: the model's, put
    in. A container the conversation carries stays unless the model's settings name one. A tool choice that forces
    a tool becomes ``auto`` when the model thinks (the API forbids forcing with thinking).
    """
    request = {key: value for key, value in params.items() if key not in replaced or key == "container"}
    request.update(thaw(settings))
    request["model"], request["max_tokens"] = model, max_tokens
    output_format = _output_format(params)
    if output_format is not None:  # the native output's, not a setting: it joins the model's own output_config
        request["output_config"] = {**(request.get("output_config") or {}), "format": output_format}
    choice = request.get("tool_choice")
    forced = isinstance(choice, Mapping) and cast("Mapping[str, object]", choice).get("type") in ("any", "tool")
    if forced and thinking_on(settings):
        request["tool_choice"] = {"type": "auto"}
    return request


def moved_messages(messages: Sequence[Any], *, thinking: bool, keep_seams: bool) -> list[Any] | None:
    """``messages`` as this request must send them (see the module docstring); None when they go as they are."""
    drop = {"fallback"} if not keep_seams else set[str]()
    if not thinking:
        drop |= THINKING_BLOCKS
    if not drop:
        return None
    changed = False
    moved: list[Any] = []
    for message in messages:
        content = _blocks(message)
        if content is None or _field(message, "role") != "assistant":
            moved.append(message)
            continue
        kept = [block for block in content if _type(block) not in drop]
        if len(kept) == len(content) or not kept:
            moved.append(message)  # nothing to drop, or nothing would be left: the API refuses an empty turn
            continue
        changed = True
        moved.append({**cast("Mapping[str, Any]", message), "content": kept})
    return moved if changed else None


def continues_turn_without_thinking(messages: Sequence[Any]) -> bool:
    """Whether the conversation continues an assistant turn (a tool loop) that did not open with thinking.

    The turn goes on while the user messages after it hold only ``tool_result`` blocks.
    """
    for message in reversed(messages):
        blocks = _blocks(message)
        if _field(message, "role") == "user":
            if blocks is None or any(_type(block) != "tool_result" for block in blocks):
                return False
            continue
        first = next((block for block in blocks or () if _type(block) != "fallback"), None)
        return _type(first) not in THINKING_BLOCKS
    return False


def _output_format(params: Mapping[str, Any]) -> object:
    output_config = params.get("output_config")
    if isinstance(output_config, Mapping):
        return cast("Mapping[str, object]", output_config).get("format")
    return None


def lacks_structured_outputs(params: Mapping[str, Any], model: str) -> str | None:
    """Why ``model`` cannot take ``params``, a request with a native output's format or strict tools; else None."""
    if NO_STRUCTURED_OUTPUTS.search(model) is None:
        return None
    if _output_format(params) is not None:
        needs = "the native output's format (output_config.format)"
    elif any(
        isinstance(tool, Mapping) and cast("Mapping[str, object]", tool).get("strict")
        for tool in cast("Sequence[object]", params.get("tools") or ())
    ):
        needs = "strict tools"
    else:
        return None
    return (
        f"model {model!r} has no structured outputs, which {needs} needs: put a newer model in the chain, or use "
        "OutputTool(..., mode='prompted') (and tools without strict)"
    )


def cannot_move(params: Mapping[str, Any], messages: Sequence[Any]) -> str | None:
    """Why the conversation cannot move to another client, or None when it can."""
    container: object = params.get("container")
    if container:
        shown = _field(container, "id") or container
        return (
            f"the conversation runs code in container {shown!r} on the primary's platform, and a container cannot "
            "move to another client"
        )
    for message in messages:
        if any(_type(block) in ("mcp_tool_use", "mcp_tool_result") for block in _blocks(message) or ()):
            return (
                "the conversation holds MCP tool calls made through the primary's MCP connector session, which "
                "cannot move to another client"
            )
    return None


def server_entry(
    model: str, max_tokens: int, settings: Mapping[str, Any], base_settings: Mapping[str, Any], base_max_tokens: int
) -> dict[str, Any] | None:
    """The ``fallbacks`` entry sending a refused request to ``model`` with ``settings``; None when no entry can.

    An entry changes only ``max_tokens``, ``thinking``, ``output_config`` and ``speed``; a model whose settings
    differ in anything else (or that thinks where the request does not: its tool choice would differ) is
    tried by the client instead.
    """
    differing = {key for key in {*settings, *base_settings} if settings.get(key) != base_settings.get(key)}
    if not differing <= SERVER_ENTRY_SETTINGS or (thinking_on(settings) and not thinking_on(base_settings)):
        return None
    entry: dict[str, Any] = {"model": model}
    if max_tokens != base_max_tokens:
        entry["max_tokens"] = max_tokens
    for key in sorted(differing):
        value = settings.get(key)
        if value is None:
            value = {"type": "disabled"} if key == "thinking" else ("standard" if key == "speed" else None)
        entry[key] = thaw(value)
    return entry


def supports_server_fallback(client: object) -> bool:
    """Whether ``client`` sends to Anthropic's own API, which takes ``fallbacks`` and mints fallback credit.

    Only the SDK's ``AsyncAnthropic`` itself (through typedagent's rate-limited wrapper too): Bedrock, Vertex AI
    and Foundry clients, and testing clients, have the client try the alternatives instead.
    """
    sdk = sys.modules.get("anthropic")
    seen = 0
    while client is not None and seen < 4:
        if sdk is not None and type(client) is sdk.AsyncAnthropic:
            return True
        client, seen = getattr(client, "forwards_to", None), seen + 1
    return False


def credit_token(response: object) -> str | None:
    """The ``fallback_credit_token`` of a refusal's ``stop_details``, if the API minted one."""
    token = _field(getattr(response, "stop_details", None), "fallback_credit_token")
    return token if isinstance(token, str) and token else None


def recommended_model(response: object) -> str | None:
    """The model a refusal names in ``stop_details.recommended_model`` (a server-side fallback that could not run)."""
    model = _field(getattr(response, "stop_details", None), "recommended_model")
    return model if isinstance(model, str) and model else None


def served_by(response: object) -> str | None:
    """The model of a server-side fallback that served the response (its ``fallback_message`` usage), if any."""
    iterations = _field(getattr(response, "usage", None), "iterations")
    for entry in reversed(cast("list[object]", iterations) if isinstance(iterations, list) else []):
        if _field(entry, "type") == "fallback_message":
            model = _field(entry, "model")
            return model if isinstance(model, str) and model else None
    return None


def _blocks(message: object) -> list[object] | None:
    """A message's content blocks; None for a message whose content is a string (or not a message)."""
    content = _field(message, "content")
    return cast("list[object]", content) if isinstance(content, list) else None


def _type(block: object) -> object:
    return _field(block, "type")


def _field(value: object, name: str) -> object:
    """A field of a dict, or an attribute (or an extra field the SDK kept) of a model."""
    if isinstance(value, Mapping):
        return cast("Mapping[str, object]", value).get(name)
    found = getattr(value, name, None)
    if found is None:
        extra = getattr(value, "__pydantic_extra__", None)
        if isinstance(extra, dict):
            found = cast("dict[str, object]", extra).get(name)
    return found

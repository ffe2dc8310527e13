"""Which Messages resource a request goes through: beta parameters go to ``client.beta.messages`` with their headers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

__all__ = [
    "BETA_ONLY_SETTINGS",
    "EDIT_BETAS",
    "FALLBACK_BETAS",
    "MCP_BETA",
    "MCP_BETA_WITH_TOOL_CONFIGURATION",
    "beta_messages",
    "beta_request",
    "check_beta_client",
    "needs_beta",
]

BETA_ONLY_SETTINGS: Final = frozenset({"betas", "mcp_servers", "context_management"})
"""The ``model_settings`` keys only the SDK's beta ``messages.create`` takes: a request holding one goes there."""

FALLBACK_BETAS: Final[dict[str, str]] = {
    "fallbacks": "server-side-fallback-2026-07-01",
    "fallback_credit_token": "fallback-credit-2026-07-01",
}
"""The beta parameters of a fallback chain (typedagent builds them, never ``model_settings``), with their betas."""

MCP_BETA: Final = "mcp-client-2025-11-20"
"""The MCP connector's beta, for ``mcp_servers`` entries configured with ``mcp_toolset`` tools."""
MCP_BETA_WITH_TOOL_CONFIGURATION: Final = "mcp-client-2025-04-04"
"""The MCP connector's earlier beta, for ``mcp_servers`` entries that carry their own ``tool_configuration``."""

EDIT_BETAS: Final[dict[str, str]] = {
    "clear_tool_uses_20250919": "context-management-2025-06-27",
    "clear_thinking_20251015": "context-management-2025-06-27",
    "compact_20260112": "compact-2026-01-12",
}
"""The beta each ``context_management`` edit needs (every edit the installed SDK knows)."""


def needs_beta(params: Mapping[str, Any]) -> bool:
    """Whether the request holds a parameter only the beta ``messages.create`` takes."""
    return not BETA_ONLY_SETTINGS.isdisjoint(params) or not FALLBACK_BETAS.keys().isdisjoint(params)


def check_beta_client(settings: Mapping[str, Any], client: object) -> None:
    """Raise ``TypeError`` when the agent's settings need the beta resource and ``client`` has none."""
    if needs_beta(settings) and beta_messages(client) is None:
        used = ", ".join(sorted(BETA_ONLY_SETTINGS.intersection(settings)))
        raise TypeError(
            f"the agent's model_settings use beta parameters ({used}), which go through client.beta.messages.create, "
            f"but the client ({type(client).__name__}) has no beta.messages: pass an AsyncAnthropic (or Bedrock, "
            "Vertex or testing client), or give yours a beta.messages.create."
        )


def beta_messages(client: object) -> Any:
    """``client.beta.messages``, or None when the client has no beta Messages resource."""
    messages = getattr(getattr(client, "beta", None), "messages", None)
    return messages if callable(getattr(messages, "create", None)) else None


def beta_request(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` for the beta resource: ``betas`` holds the user's betas, plus each one a feature used needs.

    A feature's beta is added only when ``betas`` names no version of it, so a user who picks another version
    (``"mcp-client-2025-04-04"``) keeps it.
    """
    betas = [str(beta) for beta in params.get("betas") or ()]
    for beta in _needed(params):
        family = beta.rsplit("-", 3)[0]
        if not any(chosen.startswith(f"{family}-") for chosen in betas):
            betas.append(beta)
    request = dict(params)
    if betas:
        request["betas"] = betas
    else:
        request.pop("betas", None)  # an empty list would still send an empty anthropic-beta header
    return request


def _needed(params: Mapping[str, Any]) -> list[str]:
    needed: list[str] = [beta for name, beta in FALLBACK_BETAS.items() if params.get(name)]
    servers = params.get("mcp_servers")
    if isinstance(servers, Sequence) and servers:
        entries = cast("Sequence[object]", servers)
        legacy = any(isinstance(server, Mapping) and "tool_configuration" in server for server in entries)
        needed.append(MCP_BETA_WITH_TOOL_CONFIGURATION if legacy else MCP_BETA)
    management = params.get("context_management")
    edits = cast("Mapping[str, Any]", management).get("edits") if isinstance(management, Mapping) else None
    for edit in cast("Sequence[object]", edits) if isinstance(edits, Sequence) else ():
        kind = cast("Mapping[str, Any]", edit).get("type") if isinstance(edit, Mapping) else None
        beta = EDIT_BETAS.get(kind) if isinstance(kind, str) else None
        if beta is not None and beta not in needed:
            needed.append(beta)
    return needed

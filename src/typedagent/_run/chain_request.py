"""The request each model of an execution's fallback chain is sent: the iteration's own, made fit for that model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._api.hop import (
    FALLBACK_CREDIT_BETA,
    MAX_SERVER_FALLBACKS,
    SERVER_FALLBACK_BETA,
    continues_turn_without_thinking,
    hop_request,
    lacks_structured_outputs,
    moved_messages,
    server_entry,
    thinking_on,
)

if TYPE_CHECKING:
    from .fallback_state import Link

__all__ = ["chain_request"]


def chain_request(
    params: Mapping[str, Any],
    link: Link,
    links: Sequence[Link],
    *,
    replaced: Mapping[str, Any],
    seams: bool,
    token: str | None,
) -> dict[str, Any]:
    """The request ``link``'s model is sent for the iteration's ``params`` (what moves and how: ``_api.hop``).

    ``replaced``: the agent's settings, which ``params`` holds; ``seams``: the conversation holds ``fallback``
    blocks; ``token``: a refusal's fallback credit token to redeem on this call.
    """
    if link.position:
        params = hop_request(
            params, model=link.model, max_tokens=link.max_tokens, replaced=replaced, settings=link.settings
        )
    request = dict(params)
    messages = request["messages"]
    thinking = thinking_on(link.settings)
    if thinking and continues_turn_without_thinking(messages):
        request.pop("thinking", None)
        thinking = False
    betas = [str(beta) for beta in request.get("betas") or ()]
    if link.server:
        if token is not None:
            request["fallback_credit_token"] = {"token": token, "mode": "best_effort"}
        else:
            entries = _server_entries(params, link, links)
            if entries:
                request["fallbacks"] = entries
        wanted = [SERVER_FALLBACK_BETA] if "fallbacks" in request or seams else []
        betas += [beta for beta in (*wanted, FALLBACK_CREDIT_BETA) if beta not in betas]
    keep_seams = SERVER_FALLBACK_BETA in betas
    moved = moved_messages(messages, thinking=thinking, keep_seams=keep_seams)
    if moved is not None:
        request["messages"] = moved
    if betas:
        request["betas"] = betas
    return request


def _server_entries(params: Mapping[str, Any], link: Link, links: Sequence[Link]) -> list[dict[str, Any]]:
    """``fallbacks``: the models after ``link`` on its client the API can try itself, in order, up to its limit.

    A model without the structured outputs ``params`` needs ends the list: the client skips it, saying why.
    """
    entries: list[dict[str, Any]] = []
    for later in links[link.position + 1 :]:
        if later.client is not link.client or len(entries) == MAX_SERVER_FALLBACKS:
            break
        if lacks_structured_outputs(params, later.model) is not None:
            break
        entry = server_entry(later.model, later.max_tokens, later.settings, link.settings, link.max_tokens)
        if entry is None:
            break
        entries.append(entry)
    return entries

"""Where an execution's model calls go in its fallback chain: the chain as called, and what is kept between calls."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._shared.determinism import runtime
from .._shared.errors import AlternativeFailure

if TYPE_CHECKING:
    from .._api.fallback import CircuitBreaker
    from .._api.pricing import ModelPrice
    from .._shared.clients import MessagesClient
    from .._shared.paused_json import Fallback

__all__ = ["FallbackState", "Link", "fallback_json", "restore_fallback"]


@dataclass(frozen=True, slots=True)
class Link:
    """One model of the chain as this execution calls it."""

    position: int
    """0 for the agent's own model, then the alternatives in order."""
    model: str
    client: MessagesClient
    own_client: bool
    """The execution's own client (``execute_agent(client=...)``): the conversation's server state is there."""
    settings: Mapping[str, Any]
    max_tokens: int
    breaker: CircuitBreaker
    server: bool
    """Refusals move on through the API itself here: ``fallbacks`` and fallback credit (Anthropic's own API)."""


@dataclass(slots=True)
class FallbackState:
    """Where an execution's model calls go, kept between calls (what a paused execution records of its fallback)."""

    position: int = 0
    """The model the calls go to now: 0 for the agent's own, 1 for the first alternative, …"""
    stay_until: float | None = None
    """The runtime clock (``runtime().clock()``) until which the calls stay on an alternative (None: own model)."""
    seams: bool = False
    """The conversation holds ``fallback`` blocks (a server-side fallback served a response)."""
    answered: str | None = None
    """The model whose price the last response has (the one it was sent to, or the server-side fallback's)."""
    tried: list[AlternativeFailure] = field(default_factory=list[AlternativeFailure])
    """The models that did not answer the last call, in the order tried."""
    links: tuple[Link, ...] = ()
    """The chain, as this execution calls it (built on its first call)."""
    prices: dict[str, ModelPrice | None] = field(default_factory=dict[str, "ModelPrice | None"])
    """The price of each model that answered, looked up once."""


def fallback_json(state: FallbackState) -> Fallback | None:
    """The ``"fallback"`` entry of a paused state's totals: none while no call went through the chain."""
    if not state.links and not state.position and not state.seams:
        return None
    clock = runtime()
    stay = None if state.stay_until is None else clock.wall_clock() + (state.stay_until - clock.clock())
    return {"position": state.position, "stay_until_unix": stay, "seams": state.seams, "answered": state.answered}


def restore_fallback(state: FallbackState, data: Fallback | None, alternatives: int) -> None:
    """Put back where a paused execution's calls went; the stay runs on wall-clock time, so a long pause ends it.

    A position the agent's chain no longer has (``alternatives``, fewer now) goes back to the agent's own model.
    """
    if data is None:
        return
    state.seams, state.answered = data["seams"], data["answered"]
    if data["position"] > alternatives:
        return
    state.position = data["position"]
    stay, clock = data["stay_until_unix"], runtime()
    state.stay_until = None if stay is None else clock.clock() + (stay - clock.wall_clock())

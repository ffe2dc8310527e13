"""An agent's fallback chain: the ``Alternative`` models (and clients) to move to, and when (``FallbackPolicy``)."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any, cast

from .._shared.clients import MessagesClient
from .._shared.errors import AgentDefinitionError
from .._shared.frozen import freeze
from .._shared.numbers import is_finite_number
from .models import check_model
from .settings import ModelSettings, check_thinking_budget, checked_settings

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

__all__ = ["Alternative", "FallbackPolicy", "fallback_chain"]


@dataclass(frozen=True, slots=True)
class Alternative:
    """A model the execution moves to when the one before it in ``define_agent(fallback=[...])`` fails.

    A plain model name in ``fallback=[...]`` is ``Alternative(name)``: the same client, the agent's settings.

    Example:
        ``Alternative("anthropic.claude-sonnet-4-6", client=AsyncAnthropicBedrock(aws_region="us-east-1"))``
    """

    model: str
    """The model id, as the alternative's client names it (a Bedrock or Vertex AI id on those platforms)."""
    _: KW_ONLY
    client: MessagesClient | AsyncAnthropic | None = None
    """The client the calls go to (``AsyncAnthropicBedrock``, ``AsyncAnthropicVertex``, ``AsyncAnthropicFoundry``,
    another ``AsyncAnthropic``, a testing client); None: the execution's own client (``execute_agent(client=...)``).
    (``AsyncAnthropic`` is named in the type because pyright does not see ``AsyncAnthropicFoundry``'s
    ``messages``, a ``functools.cached_property``, as the ``MessagesClient`` protocol's property.)"""
    model_settings: ModelSettings | None = None
    """The ``model_settings`` of the calls made to this model, instead of the agent's (``{}`` sends none: a
    model that does not take the agent's thinking settings, say); None: the agent's own."""
    max_tokens: int | None = None
    """``max_tokens`` of the calls made to this model; None: the agent's."""

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model:
            raise AgentDefinitionError(f"Alternative(model=...) must be a model id string, got {self.model!r}.")
        check_model(self.model)
        client = self.client
        if client is not None and (
            isinstance(client, type) or not callable(getattr(getattr(client, "messages", None), "create", None))
        ):
            shown = client.__name__ if isinstance(client, type) else type(client).__name__
            raise AgentDefinitionError(
                f"Alternative({self.model!r}, client=...) must be a client instance with an async messages.create "
                f"(AsyncAnthropic, AsyncAnthropicBedrock, AsyncAnthropicVertex, AsyncAnthropicFoundry), got {shown}."
            )
        tokens = self.max_tokens
        if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1):
            raise AgentDefinitionError(
                f"Alternative({self.model!r}, max_tokens=...) must be an int >= 1, got {tokens!r}."
            )
        settings = self.model_settings
        if settings is not None:
            if not isinstance(settings, Mapping):
                raise AgentDefinitionError(
                    f"Alternative({self.model!r}, model_settings=...) must be a dict of messages.create parameters, "
                    f"got {type(settings).__name__}."
                )
            # Checked now (keys and values); the thinking budget once the agent's max_tokens is known.
            frozen = freeze(checked_settings(settings, tokens if tokens is not None else sys.maxsize))
            object.__setattr__(self, "model_settings", frozen)


@dataclass(frozen=True, kw_only=True, slots=True)
class FallbackPolicy:
    """When an execution moves to the next model of its fallback chain, and how it comes back.

    Example:
        ``define_agent(..., fallback=["claude-haiku-4-5"], fallback_policy=FallbackPolicy(stay_s=60))``
    """

    max_retry_after_s: float = 30.0
    """A rate limit (HTTP 429, after the client's own retries) moves the call on when its ``retry-after`` asks for
    a longer wait than this, or names none; a shorter one fails the call as before (raise the client's
    ``max_retries`` to wait it out)."""
    stay_s: float = 300.0
    """Once an alternative answers, the execution's calls stay on it for this many seconds (no back and forth);
    then the agent's own model is tried again. 0 tries it again on every call."""
    breaker_threshold: int = 5
    """Failures in a row (of the kinds that move a call on) after which a model's circuit breaker opens: the
    executions of one ``execute_many`` run skip it until ``breaker_cooldown_s`` passes."""
    breaker_cooldown_s: float = 30.0
    """Seconds an open breaker skips its model; then one call probes it (half-open): an answer closes the breaker,
    another failure opens it again for as long."""

    def __post_init__(self) -> None:
        for name in ("max_retry_after_s", "stay_s", "breaker_cooldown_s"):
            value = getattr(self, name)
            if not (is_finite_number(value) and value >= 0):
                raise AgentDefinitionError(f"FallbackPolicy.{name} must be a finite number >= 0, got {value!r}.")
        threshold = self.breaker_threshold
        if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1:
            raise AgentDefinitionError(f"FallbackPolicy.breaker_threshold must be an int >= 1, got {threshold!r}.")


def fallback_chain(
    fallback: object, model: str, max_tokens: int, model_settings: Mapping[str, Any]
) -> tuple[Alternative, ...]:
    """``define_agent(fallback=...)`` as ``Alternative``s, checked against the agent's own model and ``max_tokens``.

    Raises:
        AgentDefinitionError: not a list, an entry that is neither a model name nor an ``Alternative``, the agent's
            own model (on its own client) or an entry listed twice, or a thinking budget at or above the
            ``max_tokens`` the alternative's calls send.
    """
    if isinstance(fallback, str | Alternative) or not isinstance(fallback, Sequence):
        shown = repr(fallback.model if isinstance(fallback, Alternative) else fallback)
        raise AgentDefinitionError(
            f"define_agent(fallback=...) must be a list of model names or Alternative(...), got "
            f"{type(fallback).__name__}: write fallback=[{shown}] even for one."
        )
    chain: list[Alternative] = []
    seen: set[tuple[str, int]] = {(model, id(None))}
    for entry in cast("Sequence[object]", fallback):
        alternative = Alternative(entry) if isinstance(entry, str) else entry
        if not isinstance(alternative, Alternative):
            raise AgentDefinitionError(
                f"define_agent(fallback=[...]) entries are model names or Alternative(...), got {type(entry).__name__}."
            )
        key = (alternative.model, id(alternative.client))
        if key in seen:
            what = "the agent's own model" if key == (model, id(None)) else "listed twice"
            raise AgentDefinitionError(
                f"define_agent(fallback=[...]): {alternative.model!r} on the same client is {what}; each alternative "
                "must be another model, or the same model on another client (Alternative(model, client=...))."
            )
        seen.add(key)
        own: Mapping[str, Any] | None = alternative.model_settings
        settings = model_settings if own is None else own
        check_thinking_budget(settings.get("thinking"), alternative.max_tokens or max_tokens)
        chain.append(alternative)
    return tuple(chain)

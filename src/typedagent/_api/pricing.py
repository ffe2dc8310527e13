"""What Claude models cost: the price table, its public registry, and the estimated cost of a response.

The built-in prices are Anthropic's published list prices in US dollars per million tokens, for the models
the ``anthropic`` SDK's ``Model`` literal names (checked 2026-11-24):

- https://platform.claude.com/docs/en/about-claude/pricing (the model pricing table: Fable and Mythos 5.1
  and 5, Opus 5, 4.8, 4.7, 4.6 and 4.5, Sonnet 4.6 and 4.5, Haiku 4.5; long-context pricing of Sonnet 4.5);
- the model overviews under https://platform.claude.com/docs/en/models/ (Opus 5.5, Sonnet 5.5, Sonnet 5,
  Haiku 5.5 with its two prompt-length bands);
- Sonnet 5.5's cache reads, cut to $0.10 on 2026-10-07, and Fable 5.2 ($8 / $40, cache write $10, cache
  read $0.20), as reported by price trackers that follow the pricing page (github.com/kurofune/claudit
  v1.9.2, github.com/TheKrush/PromptFuel v1.0.23, github.com/archid21/rightsize v0.10.2); Mythos models
  are priced like the Fable model of the same version, as every earlier pair is.

Claude Mythos Preview has no published price and is left out. Cache writes are priced by their TTL, as the API
reports them (``usage.cache_creation``): 5-minute writes at 1.25 times the input price, 1-hour writes at twice it
(https://platform.claude.com/docs/en/build-with-claude/prompt-caching#pricing).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, NamedTuple, cast

from .._shared.errors import AgentDefinitionError
from .._shared.numbers import is_finite_number
from .._shared.results import TokenUsage, usual_usage
from .._shared.usage import split_usage

__all__ = ["ModelPrice", "Priced", "price_for", "register_price"]

PER_MILLION: Final = 1_000_000
PER_THOUSAND: Final = 1_000
BATCH_DISCOUNT: Final = 0.5
"""What the Message Batches API charges for tokens, as a share of the standard rates."""
ONE_HOUR_WRITE_FACTOR: Final = 2.0
"""What a 1-hour cache write costs, as a multiple of the input price (every current model)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelPrice:
    """What a model costs, in US dollars per million tokens.

    Example:
        ``register_price("my-proxy-model", ModelPrice(input=3, output=15, cache_write=3.75, cache_read=0.3))``
    """

    input: float
    """Uncached input tokens."""
    output: float
    """Output tokens (thinking included)."""
    cache_write: float
    """Input tokens written to the prompt cache (5-minute writes)."""
    cache_read: float
    """Input tokens read from the prompt cache."""
    cache_write_1h: float | None = None
    """Input tokens written to the 1-hour prompt cache; None (the default) means twice ``input``, as the API prices
    every current model. Always a number once the price is made."""
    long_prompt: ModelPrice | None = None
    """The prices of a response whose prompt is longer than ``long_prompt_threshold`` tokens, if the model
    has such a band: they then apply to every token of that response, output included."""
    long_prompt_threshold: int | None = None
    """Prompt tokens (input, cache writes and cache reads) above which ``long_prompt`` applies."""
    web_search: float = 10.0
    """Server-side web searches, in US dollars per thousand (the API's published $10 per 1,000 searches);
    their results' tokens are billed as input like any other."""

    def __post_init__(self) -> None:
        if self.cache_write_1h is None and is_finite_number(self.input):
            object.__setattr__(self, "cache_write_1h", self.input * ONE_HOUR_WRITE_FACTOR)
        for name in ("input", "output", "cache_write", "cache_read", "cache_write_1h", "web_search"):
            value = getattr(self, name)
            if not (is_finite_number(value) and value >= 0):
                raise AgentDefinitionError(
                    f"ModelPrice.{name} must be a finite number >= 0 (US dollars per million tokens), got {value!r}."
                )
        if (self.long_prompt is None) != (self.long_prompt_threshold is None):
            raise AgentDefinitionError(
                "ModelPrice.long_prompt and ModelPrice.long_prompt_threshold go together: give both or neither."
            )

    def cost_usd(self, usage: TokenUsage) -> float:
        """The price of one response's usage, in US dollars.

        Priced response by response: a prompt-length band applies to the response whose prompt passed it.
        """
        return self._priced(usage)[0]

    def _savings_usd(self, usage: TokenUsage) -> float:
        """What the prompt cache saved on one response's usage, in US dollars.

        Its cache reads at the input price less their read price, minus what its cache writes cost above the input
        price (negative when the writes cost more than the reads saved, as on a first call nothing reads back).
        """
        return self._priced(usage)[1]

    def _priced(self, usage: TokenUsage) -> tuple[float, float]:
        """``cost_usd`` and ``_savings_usd`` of one response's usage, in one pass: this runs after every response."""
        rates = self if self.long_prompt is None else self._band(usage)
        reads = usage.cache_read_input_tokens
        one_hour = usage.cache_creation_1h_input_tokens
        five_minutes = usage.cache_creation_input_tokens - one_hour
        input_rate, write_rate, write_1h_rate = rates.input, rates.cache_write, rates.cache_write_1h or 0.0
        # Written out (BILLED lists the same terms).
        cost = (
            usage.input_tokens * input_rate
            + usage.output_tokens * rates.output
            + five_minutes * write_rate
            + one_hour * write_1h_rate
            + reads * rates.cache_read
        ) / PER_MILLION + usage.web_search_requests * rates.web_search / PER_THOUSAND
        savings = (
            reads * (input_rate - rates.cache_read)
            - five_minutes * (write_rate - input_rate)
            - one_hour * (write_1h_rate - input_rate)
        ) / PER_MILLION
        return cost, savings

    def _band(self, usage: TokenUsage) -> ModelPrice:
        """The rates of a response: the long-prompt ones when its prompt passed the threshold, else these."""
        if self.long_prompt is not None and self.long_prompt_threshold is not None:
            prompt = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
            if prompt > self.long_prompt_threshold:
                return self.long_prompt
        return self


BILLED: Final = (
    ("input_tokens", "input", PER_MILLION),
    ("output_tokens", "output", PER_MILLION),
    ("cache_creation_5m_input_tokens", "cache_write", PER_MILLION),
    ("cache_creation_1h_input_tokens", "cache_write_1h", PER_MILLION),
    ("cache_read_input_tokens", "cache_read", PER_MILLION),
    ("web_search_requests", "web_search", PER_THOUSAND),
)
"""Each billed ``TokenUsage`` counter, the ``ModelPrice`` field that prices it, and how many of it that price
buys. A counter billed per use (a web search) is one more row, with a price field per use and a unit of 1."""


class Priced(NamedTuple):
    """One response's usage as counts, its price and what the prompt cache saved on it (US dollars)."""

    usage: TokenUsage
    cost_usd: float
    """0 without a price."""
    cache_savings_usd: float
    """What its cache reads saved, less what its cache writes cost above the input price; 0 without a price."""


def response_cost(usage: object, price: ModelPrice) -> float:
    """The price of one response's usage (its raw ``usage``), in US dollars (see ``priced_usage``)."""
    return priced_usage(usage, price).cost_usd


def priced_usage(usage: object, price: ModelPrice | None) -> Priced:
    """One response's usage (its raw ``usage``) as counts, its price in US dollars and the cache's savings.

    Read once: the counts include each separate inference the API reports only in ``usage.iterations`` (an
    advisor consultation, a compaction). The response's own counters and server tool requests are priced at
    ``price``, each separate inference at the price of the model that ran it when the entry names one the table
    knows, else at ``price``. A response of the Message Batches API (``service_tier: "batch"``) pays half of
    those token rates.
    """
    if usage is None:
        return Priced(TokenUsage(), 0.0, 0.0)
    usual = usual_usage(usage)  # almost every response: read straight from the SDK's Usage
    if usual is not None and price is not None and getattr(usage, "service_tier", None) != "batch":
        return Priced(usual, *price._priced(usual))
    top, separate = split_usage(usage)
    own = TokenUsage(**top)
    if not separate and price is not None and _service_tier(usage) != "batch":
        return Priced(own, price.cost_usd(own), price._savings_usd(own))
    total = own
    for _model, counts in separate:
        total += TokenUsage(**counts)
    if price is None:
        return Priced(total, 0.0, 0.0)
    batch = _service_tier(usage) == "batch"
    parts = [(_tier(price, batch), own)]
    for model, counts in separate:
        rates = (price_for(model) if model is not None else None) or price
        parts.append((_tier(rates, batch), TokenUsage(**counts)))
    cost = sum(rates.cost_usd(part) for rates, part in parts)
    return Priced(total, cost, sum(rates._savings_usd(part) for rates, part in parts))


def _service_tier(usage: object) -> object:
    if isinstance(usage, Mapping):
        return cast("Mapping[str, object]", usage).get("service_tier")
    return getattr(usage, "service_tier", None)


def _tier(price: ModelPrice, batch: bool) -> ModelPrice:
    """``price``, or its token rates at the Message Batches discount (a response with ``service_tier: "batch"``).

    The discount applies to tokens only: server tool uses (web searches) keep their price.
    """
    if not batch:
        return price
    return dataclasses.replace(
        price,
        input=price.input * BATCH_DISCOUNT,
        output=price.output * BATCH_DISCOUNT,
        cache_write=price.cache_write * BATCH_DISCOUNT,
        cache_read=price.cache_read * BATCH_DISCOUNT,
        cache_write_1h=cast("float", price.cache_write_1h) * BATCH_DISCOUNT,
        long_prompt=None if price.long_prompt is None else _tier(price.long_prompt, batch),
    )


def _price(input: float, output: float, cache_read: float) -> ModelPrice:
    """A price whose 5-minute cache writes cost 1.25 times the input (and 1-hour ones twice), as every model's do."""
    return ModelPrice(input=input, output=output, cache_write=input * 1.25, cache_read=cache_read)


_FABLE_5_2 = _price(8, 40, 0.20)
_FABLE_5_1 = _price(10, 50, 0.25)
_FABLE_5 = _price(10, 50, 1)
_OPUS_5 = _price(5, 25, 0.50)
_SONNET_4 = _price(3, 15, 0.30)
_HAIKU_5_5 = ModelPrice(
    input=0.10,
    output=0.50,
    cache_write=0.125,
    cache_read=0.01,
    long_prompt=ModelPrice(input=0.50, output=2.50, cache_write=0.625, cache_read=0.05),
    long_prompt_threshold=100_000,
)
_SONNET_4_5 = ModelPrice(
    input=3,
    output=15,
    cache_write=3.75,
    cache_read=0.30,
    long_prompt=ModelPrice(input=6, output=22.50, cache_write=7.50, cache_read=0.60),
    long_prompt_threshold=200_000,
)

BUILT_IN: Final[Mapping[str, ModelPrice]] = {
    "claude-fable-5-2": _FABLE_5_2,
    "claude-mythos-5-2": _FABLE_5_2,
    "claude-fable-5-1": _FABLE_5_1,
    "claude-mythos-5-1": _FABLE_5_1,
    "claude-fable-5": _FABLE_5,
    "claude-mythos-5": _FABLE_5,
    "claude-opus-5-5": _price(4, 20, 0.20),
    "claude-opus-5": _OPUS_5,
    "claude-opus-4-8": _OPUS_5,
    "claude-opus-4-7": _OPUS_5,
    "claude-opus-4-6": _OPUS_5,
    "claude-opus-4-5": _OPUS_5,
    "claude-sonnet-5-5": _price(2, 10, 0.10),
    "claude-sonnet-5": _price(2, 10, 0.20),
    "claude-sonnet-4-6": _SONNET_4,
    "claude-sonnet-4-5": _SONNET_4_5,
    "claude-haiku-5-5": _HAIKU_5_5,
    "claude-haiku-4-5": _price(1, 5, 0.10),
}

_registered: dict[str, ModelPrice] = {}
_looked_up: dict[str, ModelPrice | None] = {}
"""``price_for``'s answers so far (every execution looks its model up): forgotten when a price is registered."""
_DATED: Final = re.compile(r"^(?P<base>.+)-\d{8}$")
_PLATFORM: Final = re.compile(
    r"^(?:[a-z-]+\.)?anthropic\.(?P<name>[^:@]+?)(?:-v\d+(?::\d+)?)?$|^(?P<vertex>[^@]+)@\w+$"
)
"""A Bedrock id (``anthropic.claude-opus-4-8``, ``us.anthropic.claude-sonnet-4-5-20250929-v1:0``) or a Vertex AI
one (``claude-sonnet-4-5@20250929``): the model's own name is in it."""


def register_price(model: str, price: ModelPrice) -> None:
    """Price a model typedagent does not know, or replace a built-in price (a negotiated rate, a proxy's).

    Registered prices apply to every execution that starts afterwards, in every thread: register them once,
    where the program starts.

    Args:
        model: The model id exactly as agents name it (``define_agent(model=...)``).
        price: Its prices in US dollars per million tokens.

    Raises:
        AgentDefinitionError: ``model`` is not a non-empty string or ``price`` not a ``ModelPrice``.
    """
    if not isinstance(model, str) or not model:
        raise AgentDefinitionError(f"register_price(model=...) must be a model id string, got {model!r}.")
    if not isinstance(price, ModelPrice):
        raise AgentDefinitionError(
            f"register_price(price=...) must be a ModelPrice, got {type(price).__name__}: "
            "write ModelPrice(input=..., output=..., cache_write=..., cache_read=...)."
        )
    _registered[model] = price
    _looked_up.clear()


def price_for(model: str) -> ModelPrice | None:
    """The price of ``model``: a registered one, else the built-in one; None when typedagent has none.

    A dated id (``claude-sonnet-4-5-20250929``) has the price of its model unless it was registered itself, and so
    does a Bedrock or Vertex AI id (``us.anthropic.claude-sonnet-4-6``, ``claude-sonnet-4-5@20250929``): the
    first-party list price (register the platform's id for the platform's own price).
    """
    try:
        return _looked_up[model]
    except KeyError:
        found = _look_up(model)
    if len(_looked_up) < 1024:
        _looked_up[model] = found
    return found


def _look_up(model: str) -> ModelPrice | None:
    platform = _PLATFORM.match(model)
    names = [model]
    if platform is not None:
        names.append(platform["name"] or platform["vertex"])
    for name in list(names):
        names.extend(match["base"] for match in [_DATED.match(name)] if match)
    for name in names:
        price = _registered.get(name) or BUILT_IN.get(name)
        if price is not None:
            return price
    return None

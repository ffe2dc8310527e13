"""The price table: built-in list prices, registered prices, and the cost of a response."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import anthropic.types
import pytest

from typedagent import AgentDefinitionError, ModelPrice, TokenUsage, price_for, register_price
from typedagent._api.pricing import BILLED, BUILT_IN, priced_usage, response_cost
from typedagent._shared.usage import split_usage

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(autouse=True)
def _fresh_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("typedagent._api.pricing._registered", {})
    monkeypatch.setattr("typedagent._api.pricing._looked_up", {})


def test_pricing_covers_the_sdks_models() -> None:
    """Every model the installed SDK's ``Model`` literal names has a price, except the unpriced preview."""
    literal = next(arg for arg in typing.get_args(anthropic.types.Model) if typing.get_origin(arg) is typing.Literal)
    unpriced = {model for model in typing.get_args(literal) if price_for(model) is None}
    assert unpriced == {"claude-mythos-preview"}


@pytest.mark.parametrize(
    ("model", "input", "output", "cache_write", "cache_read"),
    [
        ("claude-sonnet-4-6", 3, 15, 3.75, 0.30),
        ("claude-opus-4-8", 5, 25, 6.25, 0.50),
        ("claude-haiku-4-5", 1, 5, 1.25, 0.10),
        ("claude-sonnet-5-5", 2, 10, 2.50, 0.10),
        ("claude-opus-5-5", 4, 20, 5, 0.20),
        ("claude-fable-5-1", 10, 50, 12.50, 0.25),
        ("claude-fable-5-2", 8, 40, 10, 0.20),
    ],
)
def test_pricing_built_in_prices(
    model: str, input: float, output: float, cache_write: float, cache_read: float
) -> None:
    """The table holds the published prices per million tokens (5-minute cache writes)."""
    price = price_for(model)
    assert price is not None
    assert (price.input, price.output, price.cache_write, price.cache_read) == pytest.approx(
        (input, output, cache_write, cache_read)
    )


def test_pricing_dated_ids_share_their_models_price() -> None:
    """A dated model id is priced like its model; an unknown id has no price."""
    assert price_for("claude-sonnet-4-5-20250929") is BUILT_IN["claude-sonnet-4-5"]
    assert price_for("claude-haiku-4-5-20251001") is BUILT_IN["claude-haiku-4-5"]
    assert price_for("claude-unknown-9") is None
    assert price_for("gpt-4o") is None


def test_pricing_cost_of_a_response() -> None:
    """Each counter is priced at its own rate."""
    price = ModelPrice(input=3, output=15, cache_write=3.75, cache_read=0.30)
    usage = TokenUsage(
        input_tokens=2_000, output_tokens=1_000, cache_creation_input_tokens=4_000, cache_read_input_tokens=10_000
    )
    assert price.cost_usd(usage) == pytest.approx((2_000 * 3 + 1_000 * 15 + 4_000 * 3.75 + 10_000 * 0.30) / 1e6)
    assert [counter for counter, _, _ in BILLED] == [
        "input_tokens",
        "output_tokens",
        "cache_creation_5m_input_tokens",
        "cache_creation_1h_input_tokens",
        "cache_read_input_tokens",
        "web_search_requests",
    ]


def test_pricing_one_hour_cache_writes_cost_twice_the_input() -> None:
    """1-hour writes (usage.cache_creation) cost 2x input by default, 5-minute ones the cache_write rate."""
    price = ModelPrice(input=3, output=15, cache_write=3.75, cache_read=0.30)
    assert price.cache_write_1h == 6
    assert ModelPrice(input=3, output=15, cache_write=3.75, cache_read=0.30, cache_write_1h=5).cache_write_1h == 5
    for model in ("claude-sonnet-4-6", "claude-haiku-4-5", "claude-opus-4-8"):
        built_in = price_for(model)
        assert built_in is not None
        assert built_in.cache_write_1h == built_in.input * 2
        assert built_in.cache_write == built_in.input * 1.25
    raw = {
        "input_tokens": 100,
        "output_tokens": 10,
        "cache_creation_input_tokens": 3_000,
        "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_5m_input_tokens": 1_000, "ephemeral_1h_input_tokens": 2_000},
    }
    expected = (100 * 3 + 10 * 15 + 1_000 * 3.75 + 2_000 * 6) / 1e6
    assert response_cost(raw, price) == pytest.approx(expected)
    assert response_cost(anthropic.types.Usage.model_validate(raw), price) == pytest.approx(expected)
    # Without the split (older responses, streamed deltas), every write is priced as a 5-minute one.
    unsplit = {key: value for key, value in raw.items() if key != "cache_creation"}
    assert response_cost(unsplit, price) == pytest.approx((100 * 3 + 10 * 15 + 3_000 * 3.75) / 1e6)


def test_pricing_cache_savings_compare_with_the_input_price() -> None:
    """Savings: reads at (input - read) minus writes at (write - input), per TTL, at the response's own band."""
    price = ModelPrice(input=3, output=15, cache_write=3.75, cache_read=0.30)
    usage = {
        "input_tokens": 50,
        "output_tokens": 10,
        "cache_creation_input_tokens": 300,
        "cache_read_input_tokens": 10_000,
        "cache_creation": {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200},
    }
    priced = priced_usage(usage, price)
    assert priced.cache_savings_usd == pytest.approx((10_000 * 2.70 - 100 * 0.75 - 200 * 3) / 1e6)
    # Caching off would have billed every prompt token as input: cost + savings is that price.
    uncached = price.cost_usd(TokenUsage(input_tokens=50 + 300 + 10_000, output_tokens=10))
    assert priced.cost_usd + priced.cache_savings_usd == pytest.approx(uncached)
    cold = priced_usage({"input_tokens": 5, "output_tokens": 1, "cache_creation_input_tokens": 2_000}, price)
    assert cold.cache_savings_usd == pytest.approx(-2_000 * 0.75 / 1e6)
    assert priced_usage(usage, None).cache_savings_usd == 0
    batch = priced_usage({**usage, "service_tier": "batch"}, price)
    assert batch.cache_savings_usd == pytest.approx(priced.cache_savings_usd / 2)


def test_pricing_web_searches_are_billed_per_thousand() -> None:
    """Each server-side web search costs $10 per 1,000, on top of the tokens."""
    price = ModelPrice(input=3, output=15, cache_write=3.75, cache_read=0.30)
    usage = TokenUsage(input_tokens=1_000, web_search_requests=3, web_fetch_requests=2)
    assert price.cost_usd(usage) == pytest.approx(1_000 * 3 / 1e6 + 3 * 10 / 1_000)


def test_pricing_advisor_iterations_are_priced_at_the_advisors_model() -> None:
    """A separate inference in usage.iterations (an advisor consultation) is priced at the model that ran it."""
    usage = json.loads((DATA / "advisor_response.json").read_text())["usage"]
    main = price_for("claude-sonnet-4-6")
    advisor = price_for("claude-opus-4-8")
    assert main is not None
    assert advisor is not None
    top, separate = split_usage(usage)
    assert separate, "the recorded advisor response has advisor iterations"
    expected = main.cost_usd(TokenUsage(**top)) + sum(
        (advisor if model == "claude-opus-4-8" else main).cost_usd(TokenUsage(**counts)) for model, counts in separate
    )
    assert response_cost(usage, main) == pytest.approx(expected)
    assert response_cost(usage, main) > main.cost_usd(TokenUsage.from_usage(usage))  # Opus costs more than Sonnet


def test_pricing_long_prompt_band_prices_the_whole_response() -> None:
    """Past the prompt-length threshold (cache included), every token of the response is priced at the long rates."""
    haiku = price_for("claude-haiku-5-5")
    assert haiku is not None
    short = TokenUsage(input_tokens=50_000, cache_read_input_tokens=50_000, output_tokens=1_000)
    long = TokenUsage(input_tokens=50_001, cache_read_input_tokens=50_000, output_tokens=1_000)
    assert haiku.cost_usd(short) == pytest.approx((50_000 * 0.10 + 50_000 * 0.01 + 1_000 * 0.50) / 1e6)
    assert haiku.cost_usd(long) == pytest.approx((50_001 * 0.50 + 50_000 * 0.05 + 1_000 * 2.50) / 1e6)


def test_pricing_register_price_adds_and_overrides() -> None:
    """A registered price is used for its model, in place of a built-in one too."""
    mine = ModelPrice(input=1, output=1, cache_write=1, cache_read=1)
    register_price("my-proxy/claude", mine)
    register_price("claude-sonnet-4-6", mine)
    assert price_for("my-proxy/claude") is mine
    assert price_for("claude-sonnet-4-6") is mine
    assert price_for("claude-sonnet-4-6-20260101") is mine


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: ModelPrice(input=-1, output=1, cache_write=1, cache_read=1), r"ModelPrice.input must be a finite"),
        (lambda: ModelPrice(input=1, output=float("nan"), cache_write=1, cache_read=1), "ModelPrice.output"),
        (
            lambda: ModelPrice(input=1, output=1, cache_write=1, cache_read=1, long_prompt_threshold=10),
            "go together",
        ),
        (lambda: register_price("", ModelPrice(input=1, output=1, cache_write=1, cache_read=1)), "model id string"),
        (lambda: register_price("m", {"input": 1}), "must be a ModelPrice"),
    ],
)
def test_pricing_rejects_bad_prices(make: typing.Callable[[], object], message: str) -> None:
    """Bad prices are definition errors that say what to write."""
    with pytest.raises(AgentDefinitionError, match=message):
        make()


async def test_pricing_execution_cost_prices_advisor_iterations_at_their_model() -> None:
    """metadata.cost_usd of a run with an advisor consultation prices it at the advisor's model."""
    from support import GOOD, triage_agent

    from typedagent import execute_agent
    from typedagent.testing import FunctionClient, output_call

    advisor = json.loads((DATA / "advisor_response.json").read_text())
    answers = iter([advisor, output_call(GOOD)])
    client = FunctionClient(lambda request: next(answers))
    result = await execute_agent(triage_agent(), "Ticket: VPN drops", client=client)
    main = price_for("claude-sonnet-4-6")
    assert main is not None
    expected = response_cost(advisor["usage"], main) + main.cost_usd(TokenUsage(input_tokens=10, output_tokens=5))
    assert result.metadata.cost_usd == pytest.approx(expected)


@pytest.mark.parametrize("as_object", [False, True], ids=["json", "sdk"])
def test_pricing_batch_tier_pays_half_the_token_rates(as_object: bool) -> None:
    """A Message Batches response (``service_tier: "batch"``) costs half for tokens; web searches keep their price."""
    price = ModelPrice(input=3, output=15, cache_write=3.75, cache_read=0.30)
    counts = {"input_tokens": 1_000, "output_tokens": 200, "cache_read_input_tokens": 500}
    raw: dict[str, object] = {**counts, "server_tool_use": {"web_search_requests": 2, "web_fetch_requests": 0}}
    standard = response_cost(anthropic.types.Usage.model_validate(raw) if as_object else raw, price)
    batch_raw = {**raw, "service_tier": "batch"}
    batch = response_cost(anthropic.types.Usage.model_validate(batch_raw) if as_object else batch_raw, price)
    tokens = price.cost_usd(TokenUsage(**counts))
    assert standard == pytest.approx(tokens + 2 * 10 / 1_000)
    assert batch == pytest.approx(tokens / 2 + 2 * 10 / 1_000)


def test_pricing_cost_prices_every_billed_counter_at_its_rate() -> None:
    """``cost_usd`` (written out for speed) prices exactly what ``BILLED`` lists, each counter at its own rate."""
    price = ModelPrice(input=3, output=15, cache_write=3.75, cache_read=0.30, web_search=11)
    usage = TokenUsage(
        input_tokens=1_001,
        output_tokens=2_003,
        cache_creation_input_tokens=3_007,
        cache_creation_1h_input_tokens=1_009,
        cache_read_input_tokens=4_013,
        web_search_requests=5,
        web_fetch_requests=7,
    )
    expected = sum(getattr(usage, counter) * getattr(price, rate) / unit for counter, rate, unit in BILLED)
    assert price.cost_usd(usage) == pytest.approx(expected, rel=1e-12)

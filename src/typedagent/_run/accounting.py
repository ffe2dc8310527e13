"""What each response adds to an execution's totals, priced as the model that produced it (a fallback chain's too)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._api.pricing import ModelPrice, Priced, price_for, priced_usage
from .execution import lineage

if TYPE_CHECKING:
    from .._api.api_errors import ApiFailure
    from .._shared.results import TokenUsage
    from .execution import Execution

__all__ = ["account_failed_call", "add_response_usage", "answered_by"]


def add_response_usage(execution: Execution, raw: object, model: str | None = None) -> TokenUsage:
    """Add a response's own ``usage`` (read once, priced per model that ran each part); return its counts.

    ``model``: the model the call was sent to (its price applies, its cache savings too), default the agent's.
    """
    price = execution.price if model is None else _price_of(execution, model)
    priced = priced_usage(raw, price)
    _add(execution, priced if price is not None else None, priced.usage)
    return priced.usage


def _price_of(execution: Execution, model: str) -> ModelPrice | None:
    """``price_for(model)``, looked up once per execution."""
    prices = execution.fallback.prices
    if model not in prices:
        prices[model] = price_for(model)
    return prices[model]


def answered_by(execution: Execution, model: object, asked: str | None = None) -> None:
    """Record the model a response named (the one that answered, not the alias requested), else ``asked``."""
    if isinstance(model, str) and model:
        execution.response_model = model
        execution.models_used.append(model)
    elif asked:
        execution.models_used.append(asked)


def account_failed_call(execution: Execution, failure: ApiFailure, *, first: bool = True) -> None:
    """Account for a failed model call: a malformed response's readable tokens; no API call if nothing was sent.

    ``first``: the iteration's own call (not a later model of the fallback chain): nothing sent, no iteration.
    """
    usage = failure.usage
    if usage is not None:  # a malformed response's readable tokens, at the execution's model's price
        price = execution.price
        _add(execution, None if price is None else Priced(usage, *price._priced(usage)), usage)
    if failure.sent:
        return
    if first:
        execution.take_back_iteration()
    else:  # a later model of the chain: the iteration's call was sent, to another model
        for counted in lineage(execution):
            counted.iterations -= 1


def _add(execution: Execution, priced: Priced | None, usage: TokenUsage) -> None:
    """Add ``usage`` and its price (None: it has none) here and up the lineage: a sub-run's counts there too."""
    for counted in lineage(execution):
        counted.tokens += usage
        if priced is None:
            counted.cost_complete = False
        else:
            counted.cost_usd += priced.cost_usd
            counted.cache_savings_usd += priced.cache_savings_usd

"""What each response adds to an execution's totals, priced as the model that produced it (a fallback chain's too)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._api.pricing import ModelPrice, price_for, priced_usage
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
    for counted in lineage(execution):  # a sub-run's usage counts in the executions it runs under too
        counted.tokens += priced.usage
        if price is None:
            counted.cost_complete = False
        else:
            counted.cost_usd += priced.cost_usd
            counted.cache_savings_usd += priced.cache_savings_usd
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
    if failure.usage is not None:
        _add_usage(execution, failure.usage)
    if failure.sent:
        return
    if first:
        execution.take_back_iteration()
    else:  # a later model of the chain: the iteration's call was sent, to another model
        for counted in lineage(execution):
            counted.iterations -= 1


def _add_usage(execution: Execution, usage: TokenUsage) -> None:
    """Add a failed call's readable tokens (and their price at the execution's model) here and up the lineage."""
    price = execution.price
    for counted in lineage(execution):
        counted.tokens += usage
        if price is None:
            counted.cost_complete = False
        else:
            cost, savings = price._priced(usage)
            counted.cost_usd += cost
            counted.cache_savings_usd += savings

"""The agent under test: a refund desk that decides a refund from the order's data.

It looks the order up with a helper tool, then hands over a typed ``RefundDecision``. Two validators
hold the model to the shop's policy whatever it writes: never refund more than the order total, and
never approve a refund outside the 30-day window (or for an order that does not exist).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from pydantic import BaseModel, Field

from typedagent import OutputRejected, OutputTool, RunContext, ValidationConfig, define_agent, tool

REFUND_WINDOW = timedelta(days=30)


class Order(BaseModel):
    order_id: str
    total: float
    delivered_on: date | None = Field(description="None while the order is on its way.")


@dataclass(frozen=True)
class Shop:
    """The run-time dependencies: the order book and today's date (fixed in tests)."""

    orders: dict[str, Order]
    today: date


class RefundDecision(BaseModel):
    order_id: str
    approve: bool
    amount: float = Field(ge=0, description="Amount to refund; 0 when the refund is denied.")
    reason: str = Field(min_length=3, description="One sentence for the customer.")


@tool
def get_order(ctx: RunContext[Shop], order_id: str) -> Order:
    """Look an order up by its id (like A-100)."""
    try:
        return ctx.deps.orders[order_id]
    except KeyError:
        raise LookupError(f"no order {order_id!r}") from None


def within_the_order_total(decision: RefundDecision, ctx: RunContext[Shop]) -> None:
    order = ctx.deps.orders.get(decision.order_id)
    if order is not None and decision.amount > order.total:
        raise OutputRejected(f"amount {decision.amount} exceeds the order total {order.total}")


def approved_only_within_the_window(decision: RefundDecision, ctx: RunContext[Shop]) -> None:
    if not decision.approve:
        return
    order = ctx.deps.orders.get(decision.order_id)
    if order is None:
        raise OutputRejected(f"cannot approve a refund for unknown order {decision.order_id!r}")
    if order.delivered_on is not None and ctx.deps.today - order.delivered_on > REFUND_WINDOW:
        raise OutputRejected(f"order {order.order_id} was delivered more than 30 days ago: deny the refund")


agent = define_agent(
    name="refund_desk",
    model="claude-haiku-4-5",
    instructions=(
        "You handle refund requests. Look the order up with get_order, then decide. Refunds are allowed "
        "within 30 days of delivery, up to the order total."
    ),
    output=OutputTool(RefundDecision, name="decide_refund", description="Hand over the refund decision."),
    helpers=[get_order],
    validators=[within_the_order_total, approved_only_within_the_window],
    deps_type=Shop,
    validation=ValidationConfig(max_attempts=2, max_iterations_per_attempt=5),
)


def demo_shop() -> Shop:
    """The fixed order book every scenario runs against."""
    today = date(2025, 3, 31)
    orders = [
        Order(order_id="A-100", total=40.0, delivered_on=today - timedelta(days=3)),
        Order(order_id="A-200", total=120.0, delivered_on=today - timedelta(days=90)),
        Order(order_id="A-300", total=15.5, delivered_on=None),
    ]
    return Shop(orders={order.order_id: order for order in orders}, today=today)

"""Invoice extraction with custom validators: the totals must add up and the dates must make sense.

The model reads an invoice, looks the vendor up, and hands over a typed ``Invoice``. Its first
try misreads two digits (total 1,820.70 instead of 1,280.70, due date in February instead of
April): the validators reject it with both problems at once, the feedback goes back into the
conversation, and the second attempt is accepted.

Run it:

    python examples/invoice_extraction.py      # scripted model without ANTHROPIC_API_KEY, live with it
    typedagent run examples/invoice_extraction.py:agent "$(cat invoice.txt)"
"""

from __future__ import annotations

import os
import sys
from datetime import date, timedelta
from decimal import Decimal

from pydantic import BaseModel, Field

from typedagent import OutputRejected, OutputTool, ValidationConfig, define_agent, execute_agent_sync, tool
from typedagent.testing import ScriptedClient, output_call, response, text, tool_call, usage

CENT = Decimal("0.01")


class LineItem(BaseModel):
    description: str
    quantity: Decimal = Field(gt=0)
    unit_price: Decimal = Field(description="Net price of one unit.")
    amount: Decimal = Field(description="Net line amount as printed (quantity times unit price).")


class Invoice(BaseModel):
    """An invoice, as printed."""

    vendor: str
    invoice_number: str
    issue_date: date
    due_date: date
    currency: str = Field(pattern=r"^[A-Z]{3}$", description="ISO 4217 code, e.g. EUR.")
    line_items: list[LineItem] = Field(min_length=1)
    subtotal: Decimal = Field(description="Sum of the line amounts, before tax.")
    tax: Decimal
    total: Decimal = Field(description="Amount due: subtotal + tax.")


VENDORS = {
    "nordlicht bürobedarf gmbh": {"vat_id": "DE811907234", "currency": "EUR", "payment_terms_days": 30},
    "harbor office supply inc.": {"vat_id": "US-EIN 47-1234567", "currency": "USD", "payment_terms_days": 15},
}


@tool
def lookup_vendor(name: str) -> dict[str, object]:
    """Look a vendor up in the supplier registry: VAT id, billing currency and payment terms.

    Args:
        name: The vendor's name as printed on the invoice.
    """
    record = VENDORS.get(name.strip().lower())
    if record is None:
        return {"found": False, "hint": "not a registered supplier; take every value from the invoice itself"}
    return {"found": True, **record}


def line_amounts_match(invoice: Invoice) -> None:
    """Every line's amount is its quantity times its unit price."""
    wrong = [
        f"line_items.{index}.amount: {item.amount} but quantity {item.quantity} * unit_price {item.unit_price} "
        f"= {(item.quantity * item.unit_price).quantize(CENT)}"
        for index, item in enumerate(invoice.line_items)
        if (item.quantity * item.unit_price).quantize(CENT) != item.amount
    ]
    if wrong:
        raise OutputRejected("; ".join(wrong))


def totals_add_up(invoice: Invoice) -> None:
    """The line amounts add up to the subtotal, and subtotal plus tax to the total."""
    lines = sum((item.amount for item in invoice.line_items), Decimal(0))
    if lines != invoice.subtotal:
        raise OutputRejected(f"subtotal: {invoice.subtotal} but the line amounts add up to {lines}")
    if invoice.subtotal + invoice.tax != invoice.total:
        raise OutputRejected(
            f"total: {invoice.total} but subtotal {invoice.subtotal} + tax {invoice.tax} = "
            f"{invoice.subtotal + invoice.tax}; re-read the total"
        )


def dates_are_valid(invoice: Invoice) -> None:
    """The invoice is not dated in the future, and it falls due on or after its issue date."""
    if invoice.issue_date > date.today():
        raise OutputRejected(f"issue_date: {invoice.issue_date} is in the future")
    if invoice.due_date < invoice.issue_date:
        raise OutputRejected(
            f"due_date: {invoice.due_date} is before issue_date {invoice.issue_date}; re-read both dates"
        )


agent = define_agent(
    name="invoice_extraction",
    model="claude-sonnet-4-6",
    instructions=(
        "You extract invoices for accounts payable. Copy every value exactly as printed; amounts are "
        "decimal numbers without thousands separators. Look the vendor up to confirm the currency."
    ),
    output=OutputTool(Invoice, name="record_invoice", description="Record the extracted invoice."),
    helpers=[lookup_vendor],
    validators=[line_amounts_match, totals_add_up, dates_are_valid],
    validation=ValidationConfig(max_attempts=3, max_iterations_per_attempt=5),
)

PROMPT = """\
Extract this invoice.

Nordlicht Bürobedarf GmbH · Hafenstraße 12 · 20457 Hamburg · VAT DE811907234
INVOICE No. NB-2025-0317                       Date: 14.03.2025
Payment due: 13.04.2025 (30 days net)

Pos  Description                          Qty   Unit price      Amount
1    Ergonomic office chair "Kiel"          2       289.00      578.00
2    Standing desk frame, electric          1       412.50      412.50
3    A4 copy paper, box of 5 reams          4        21.43       85.72

                                            Subtotal         1,076.22 EUR
                                            VAT 19 %           204.48 EUR
                                            Total            1,280.70 EUR
"""

EXTRACTED = Invoice(
    vendor="Nordlicht Bürobedarf GmbH",
    invoice_number="NB-2025-0317",
    issue_date=date(2025, 3, 14),
    due_date=date(2025, 3, 14) + timedelta(days=30),
    currency="EUR",
    line_items=[
        LineItem(
            description='Ergonomic office chair "Kiel"',
            quantity=Decimal(2),
            unit_price=Decimal("289.00"),
            amount=Decimal("578.00"),
        ),
        LineItem(
            description="Standing desk frame, electric",
            quantity=Decimal(1),
            unit_price=Decimal("412.50"),
            amount=Decimal("412.50"),
        ),
        LineItem(
            description="A4 copy paper, box of 5 reams",
            quantity=Decimal(4),
            unit_price=Decimal("21.43"),
            amount=Decimal("85.72"),
        ),
    ],
    subtotal=Decimal("1076.22"),
    tax=Decimal("204.48"),
    total=Decimal("1280.70"),
)

MISREAD = EXTRACTED.model_copy(update={"total": Decimal("1820.70"), "due_date": date(2025, 2, 13)})
"""The first try: two transposed digits, the kind of slip validators exist to catch."""


def scripted_client() -> ScriptedClient:
    """The model's side of a typical run: a misread first try, then the fix after the feedback."""
    return ScriptedClient(
        [
            response(
                tool_call("lookup_vendor", {"name": "Nordlicht Bürobedarf GmbH"}),
                usage=usage(input_tokens=1490, output_tokens=47, cache_creation_input_tokens=880),
            ),
            response(
                output_call(MISREAD), usage=usage(input_tokens=112, output_tokens=402, cache_read_input_tokens=880)
            ),
            response(
                text("I misread the total and the due date; correcting both from the invoice."),
                output_call(EXTRACTED),
                usage=usage(input_tokens=596, output_tokens=418, cache_read_input_tokens=880),
            ),
        ]
    )


if __name__ == "__main__":
    live = bool(os.environ.get("ANTHROPIC_API_KEY"))
    if not live:
        print("No ANTHROPIC_API_KEY: the model is scripted.", file=sys.stderr)
    result = execute_agent_sync(agent, PROMPT, client=None if live else scripted_client())
    print(result.unwrap().model_dump_json(indent=2))

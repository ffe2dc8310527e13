"""``outputs(agent)``: a hypothesis strategy of the values an agent's output tool accepts."""

from __future__ import annotations

import datetime
import hashlib
import sys
import uuid
from typing import Annotated, Literal

import pytest
from hypothesis import given, settings
from pydantic import BaseModel, Field, model_validator

from typedagent import OutputRejected, OutputTool, define_agent
from typedagent.testing import outputs


class Line(BaseModel):
    sku: str = Field(pattern=r"^[A-Z]{2,3}-\d{3}$")
    qty: int = Field(ge=1, le=50)
    unit_price: float = Field(gt=0, le=1000)
    shipped: datetime.date | None = None


class Invoice(BaseModel):
    number: uuid.UUID
    lines: list[Line] = Field(min_length=1, max_length=4)
    currency: Literal["EUR", "USD"]

    @model_validator(mode="after")
    def total_is_small(self) -> Invoice:
        if sum(line.qty * line.unit_price for line in self.lines) > 20_000:
            raise ValueError("total over 20,000")
        return self


agent = define_agent(name="invoices", model="claude-sonnet-4-6", output=OutputTool(Invoice))


def no_duplicate_lines(invoice: Invoice) -> None:
    skus = [line.sku for line in invoice.lines]
    if len(skus) != len(set(skus)):
        raise OutputRejected(f"merge the duplicate lines: {sorted(skus)}")


@settings(max_examples=40, deadline=None)
@given(outputs(agent))
def test_outputs_respect_the_schema_and_the_models_own_checks(invoice: Invoice) -> None:
    """Every drawn value is an instance of the output type that meets its constraints and validators."""
    assert isinstance(invoice, Invoice)
    assert 1 <= len(invoice.lines) <= 4
    assert all(1 <= line.qty <= 50 and line.unit_price > 0 for line in invoice.lines)
    assert sum(line.qty * line.unit_price for line in invoice.lines) <= 20_000


@settings(max_examples=40, deadline=None)
@given(outputs(agent))
def test_outputs_property_test_a_validator(invoice: Invoice) -> None:
    """The intended use: a validator either accepts an output or rejects it with a message that names the fix."""
    if len({line.sku for line in invoice.lines}) == len(invoice.lines):
        no_duplicate_lines(invoice)
    else:
        with pytest.raises(OutputRejected, match=r"^merge the duplicate lines"):
            no_duplicate_lines(invoice)


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int = Field(ge=0, le=9)


class Dog(BaseModel):
    kind: Literal["dog"] = "dog"


@settings(max_examples=30, deadline=None)
@given(outputs(OutputTool(list[Annotated[Cat | Dog, Field(discriminator="kind")]])))
def test_outputs_of_an_output_tool_and_a_wrapped_type(pets: list[Cat | Dog]) -> None:
    """An ``OutputTool`` works too, and a wrapped type is drawn unwrapped: a list of Cats and Dogs."""
    assert isinstance(pets, list)
    assert all(isinstance(pet, Cat | Dog) for pet in pets)


@settings(max_examples=20, deadline=None)
@given(outputs(OutputTool(Literal["low", "high"])))
def test_outputs_of_a_literal(level: str) -> None:
    """Scalars and literals are drawn from their allowed values."""
    assert level in ("low", "high")


def test_outputs_without_hypothesis_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without hypothesis installed, ``outputs()`` raises an ImportError naming the ``testing`` extra."""
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    with pytest.raises(ImportError, match=r"pip install 'typedagent\[testing\]'"):
        outputs(agent)


class Schedule(BaseModel):
    """Four times that must come in order: about one value in 24 drawn from the schema meets the check."""

    doors: float
    start: float
    interval: float
    end: float

    @model_validator(mode="after")
    def in_order(self) -> Schedule:
        if not self.doors < self.start < self.interval < self.end:
            raise ValueError("doors < start < interval < end")
        return self


@settings(max_examples=50, deadline=None, derandomize=True, database=None)
@given(outputs(define_agent(name="schedules", model="claude-sonnet-4-6", output=OutputTool(Schedule))))
def test_outputs_meet_a_cross_field_model_validator(schedule: Schedule) -> None:
    """A cross-field check that rejects most random values still passes hypothesis's health check."""
    assert schedule.doors < schedule.start < schedule.interval < schedule.end


class Signed(BaseModel):
    """A payload and its digest: no value drawn at random has the right one."""

    payload: str
    digest: str

    @model_validator(mode="after")
    def digest_matches(self) -> Signed:
        if self.digest != hashlib.sha256(self.payload.encode()).hexdigest()[:16]:
            raise ValueError("the digest does not match the payload")
        return self


def test_outputs_of_a_check_random_values_never_meet_says_what_to_do() -> None:
    """A check no drawn value meets is a clear error naming the model, its message and the way out."""
    signed = define_agent(name="signed", model="claude-sonnet-4-6", output=OutputTool(Signed))

    @settings(max_examples=20, deadline=None, database=None)
    @given(outputs(signed))
    def property_of(value: Signed) -> None:
        raise AssertionError("never reached: no value is drawn")

    with pytest.raises(ValueError, match=r"outputs\(\): Signed's own checks rejected \d+ of the \d+ values") as raised:
        property_of()
    message = str(raised.value)
    assert "Value error, the digest does not match the payload" in message
    assert "Field(ge=..., le=...)" in message
    assert "write the strategy yourself" in message

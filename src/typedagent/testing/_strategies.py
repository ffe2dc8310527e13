"""``outputs()``: a hypothesis strategy of an agent's valid outputs, for property-testing validators and handlers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import pydantic
from typing_extensions import TypeVar

from .._agent.definition import AgentDefinition
from .._agent.output import OutputTool
from ._schema_values import generate

if TYPE_CHECKING:
    from hypothesis.strategies import DrawFn, SearchStrategy

__all__ = ["outputs"]

OutputT = TypeVar("OutputT")

_TRIES: Final = 10
"""Values drawn from the schema for one example before it is given up: a cross-field check (a
``model_validator``) that random values meet one time in 20 still yields most examples."""
_HOPELESS: Final = 40
"""Examples given up, with fewer than ``_ENOUGH`` made, after which the output type's checks are reported as
ones that drawn values do not meet (before hypothesis's own health check says only "filtering")."""
_ENOUGH: Final = 10


def outputs(agent: AgentDefinition[OutputT, Any] | OutputTool[OutputT]) -> SearchStrategy[OutputT]:
    """A hypothesis strategy of values the agent's output tool accepts, typed as its output.

    Each value is made from the output tool's JSON schema (every constraint it states: bounds, lengths,
    patterns, formats, enums, discriminated unions, recursive models) and validated by the output type, so
    it is a value your validators and reflection handler can meet. Use it to property-test them::

        @given(outputs(agent))
        def test_validator_accepts_or_says_why(triage: Triage) -> None: ...

    A check the schema does not state (a ``model_validator`` relating two fields) is met by drawing again:
    up to 10 values per example. A check that drawn values practically never meet (two fields that must be
    equal) cannot be met this way: after 40 examples given up it raises a ``ValueError`` saying so. State
    the constraint in the schema where it can be (``Field(ge=1, le=30)``), or write the strategy yourself
    (``st.builds(Model, ...)``).

    Needs ``hypothesis`` (``pip install 'typedagent[testing]'``).

    Args:
        agent: The agent (or just its ``OutputTool``).

    Raises:
        ImportError: hypothesis is not installed.
    """
    try:
        from hypothesis import reject, strategies
    except ImportError as exc:
        raise ImportError(
            "typedagent.testing.outputs() needs hypothesis: install it with `pip install 'typedagent[testing]'` "
            "(or `pip install hypothesis`)."
        ) from exc
    output = agent.output if isinstance(agent, AgentDefinition) else agent
    schema = output._input_schema
    tally = _Tally()

    def build(draw: DrawFn) -> OutputT:
        problem: pydantic.ValidationError | None = None
        for _ in range(_TRIES):
            raw = generate(schema, _Draws(draw, strategies))
            try:
                value = output.parse(raw)
            except pydantic.ValidationError as exc:  # a check only pydantic sees (a model_validator): draw again
                problem = exc
                tally.refused += 1
                continue
            tally.made += 1
            return value
        tally.given_up += 1
        if tally.given_up >= _HOPELESS and tally.made < _ENOUGH and problem is not None:
            raise ValueError(_hopeless(output.type_name, tally, problem))
        reject()

    return strategies.composite(build)()


@dataclass(slots=True)
class _Tally:
    """What one ``outputs()`` strategy has drawn so far."""

    made: int = 0
    refused: int = 0
    given_up: int = 0


def _hopeless(type_name: str, tally: _Tally, problem: pydantic.ValidationError) -> str:
    reason = problem.errors(include_url=False)[0]["msg"]
    return (
        f"outputs(): {type_name}'s own checks rejected {tally.refused} of the {tally.refused + tally.made} values "
        f"drawn from its JSON schema (the last: {reason!r}). A check the schema does not state, such as a "
        "model_validator relating two fields, is met by drawing again, and drawn values practically never meet "
        "this one. State the constraint in the schema where it can be (Field(ge=..., le=...), a Literal), so "
        f"values are drawn within it; or write the strategy yourself, e.g. st.builds({type_name}, ...) with a "
        "strategy per field, or st.composite drawing one field from another."
    )


@dataclass(slots=True)
class _Draws:
    """The schema walker's choices drawn from hypothesis, so a failing example shrinks."""

    draw: DrawFn
    strategies: Any

    def integer(self, low: int | None, high: int | None) -> int:
        value: int = self.draw(self.strategies.integers(min_value=low, max_value=high))
        return value

    def number(self, low: float | None, high: float | None) -> float:
        value: float = self.draw(
            self.strategies.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False)
        )
        return value

    def index(self, count: int) -> int:
        return self.integer(0, count - 1)

    def text(self, min_size: int, max_size: int | None) -> str:
        value: str = self.draw(self.strategies.text(min_size=min_size, max_size=max_size))
        return value

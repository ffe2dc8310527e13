"""``outputs()``: a hypothesis strategy of an agent's valid outputs, for property-testing validators and handlers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pydantic
from typing_extensions import TypeVar

from .._agent.definition import AgentDefinition
from .._agent.output import OutputTool
from ._schema_values import generate

if TYPE_CHECKING:
    from hypothesis.strategies import DrawFn, SearchStrategy

__all__ = ["outputs"]

OutputT = TypeVar("OutputT")


def outputs(agent: AgentDefinition[OutputT, Any] | OutputTool[OutputT]) -> SearchStrategy[OutputT]:
    """A hypothesis strategy of values the agent's output tool accepts, typed as its output.

    Each value is made from the output tool's JSON schema (every constraint it states: bounds, lengths,
    patterns, formats, enums, discriminated unions, recursive models) and validated by the output type, so
    it is a value your validators and reflection handler can meet. Use it to property-test them::

        @given(outputs(agent))
        def test_validator_accepts_or_says_why(triage: Triage) -> None: ...

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

    def build(draw: DrawFn) -> OutputT:
        raw = generate(schema, _Draws(draw, strategies))
        try:
            return output.parse(raw)
        except pydantic.ValidationError:
            reject()  # a check only pydantic sees (a model_validator) refused it: draw another

    return strategies.composite(build)()


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

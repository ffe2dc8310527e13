"""What an evaluator sees and returns: ``EvalContext`` in, ``Score`` out, through the ``Evaluator`` protocol."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, cast

from typing_extensions import TypeVar

from .._shared.errors import AgentErrorCode
from .._shared.generics import subscriptable
from .._shared.results import TokenUsage

__all__ = ["EvalContext", "Evaluator", "Score", "ToolUse", "tool_uses"]

OutputT_co = TypeVar("OutputT_co", covariant=True, default=Any)
OutputT_contra = TypeVar("OutputT_contra", contravariant=True, default=Any)


@dataclass(frozen=True, kw_only=True, slots=True)
class Score:
    """One evaluator's verdict on one run: pass/fail, a value from 0 to 1, and why."""

    evaluator: str
    """The evaluator's name (``ExpectedOutput``, ``ToolCalled(lookup_vendor)``, your own)."""
    passed: bool
    """Whether the run passes this check."""
    value: float
    """0 to 1; 1.0/0.0 for pass/fail checks, a fraction (fields matched, a judge's score) otherwise."""
    reason: str = ""
    """Why, in words: what differed, what was missing, what the judge said."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.value <= 1.0:
            raise ValueError(f"Score {self.evaluator!r}: value must be between 0 and 1, got {self.value!r}.")

    @classmethod
    def check(cls, evaluator: str, passed: bool, reason: str = "") -> Score:
        """A pass/fail score (value 1.0 or 0.0)."""
        return cls(evaluator=evaluator, passed=passed, value=1.0 if passed else 0.0, reason=reason)


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolUse:
    """One tool call the model made in a run, read from the conversation."""

    name: str
    """The tool's name (helpers, server tools and the output tool alike)."""
    input: Mapping[str, Any]
    """The arguments the model passed."""


@subscriptable
@dataclass(frozen=True, kw_only=True, slots=True)
class EvalContext(Generic[OutputT_co]):
    """One run of one case, as evaluators see it (live, or read back from a saved report)."""

    case: str
    """The case's name."""
    prompt: str
    """The prompt the agent got."""
    expected: OutputT_co | None
    """The case's expected output, if it has one."""
    output: OutputT_co | None
    """The agent's validated output; None when the execution failed."""
    error_code: AgentErrorCode | None
    """None on success, else the execution's ``AgentErrorCode``."""
    error_message: str = ""
    """The failure's message (empty on success)."""
    messages: Sequence[Mapping[str, Any]] = ()
    """The run's conversation (Messages API params)."""
    tokens: TokenUsage = field(default_factory=TokenUsage)
    """Tokens of every response of the run."""
    cost_usd: float | None = None
    """Estimated price in US dollars (None when typedagent has no price for the model)."""
    latency_ms: float = 0.0
    """Wall-clock duration of the execution."""
    iterations: int = 0
    """API calls made."""
    attempts: int = 0
    """Attempts (validation cycles) started."""
    metadata: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """The case's metadata."""

    @property
    def ok(self) -> bool:
        """Whether the execution produced a validated output."""
        return self.error_code is None

    @property
    def tool_uses(self) -> tuple[ToolUse, ...]:
        """Every tool call the model made, in order."""
        return tool_uses(self.messages)


def tool_uses(messages: Sequence[Mapping[str, Any]]) -> tuple[ToolUse, ...]:
    """The ``tool_use`` and ``server_tool_use`` blocks of the assistant's turns, in order."""
    found: list[ToolUse] = []
    for message in messages:
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        for block in cast("list[object]", content):
            if isinstance(block, Mapping):
                entry = cast("Mapping[str, Any]", block)
                if entry.get("type") in ("tool_use", "server_tool_use"):
                    arguments = entry.get("input")
                    found.append(
                        ToolUse(
                            name=str(entry.get("name")),
                            input=cast("Mapping[str, Any]", arguments) if isinstance(arguments, Mapping) else {},
                        )
                    )
    return tuple(found)


class Evaluator(Protocol[OutputT_contra]):
    """Anything that scores a run: the built-in evaluators, or your own class with this method.

    ``evaluate`` may be sync or async (an LLM judge is async); ``name`` labels its scores.
    """

    @property
    def name(self) -> str:
        """How reports label this evaluator's scores."""
        ...

    def evaluate(self, context: EvalContext[OutputT_contra], /) -> Score | Awaitable[Score]:
        """Score one run."""
        ...

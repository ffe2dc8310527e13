"""``Case`` and ``Dataset``: the prompts an agent is evaluated on, what to expect, and the pass-rate thresholds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic

from typing_extensions import TypeVar

from .._shared.generics import subscriptable
from ._score import Evaluator

__all__ = ["Case", "Dataset", "Thresholds"]

OutputT = TypeVar("OutputT", default=Any)
DepsT = TypeVar("DepsT", default=None)


def _check_rate(owner: str, value: float | None) -> None:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if value is not None and (not number or not 0.0 <= value <= 1.0):
        raise ValueError(f"{owner}: a pass rate is a number from 0 to 1, got {value!r}.")


@dataclass(frozen=True, kw_only=True, slots=True)
class Thresholds:
    """What a run of the suite must reach, or CI fails.

    A run passes when every one of its scores passes; a case's pass rate is its passing runs over
    ``repeat`` runs, and the suite's is every passing run over every run.
    """

    case_min_pass_rate: float = 1.0
    """Least pass rate of each case (a case may set its own ``min_pass_rate``)."""
    suite_min_pass_rate: float = 1.0
    """Least pass rate over every run of every case."""

    def __post_init__(self) -> None:
        _check_rate("Thresholds.case_min_pass_rate", self.case_min_pass_rate)
        _check_rate("Thresholds.suite_min_pass_rate", self.suite_min_pass_rate)


@subscriptable
@dataclass(frozen=True, kw_only=True, slots=True)
class Case(Generic[OutputT, DepsT]):
    """One prompt to evaluate the agent on, with its expected output and its own evaluators.

    Example:
        ``Case(name="vpn", prompt="My VPN drops hourly", evaluators=[ToolCalled(tool="search_kb")])``
    """

    name: str
    """Unique in its dataset; names the case in reports, JUnit and pytest."""
    prompt: str
    """The user's input."""
    deps: DepsT = None  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]
    """Run-time dependencies (required when the agent declares ``deps_type``)."""
    expected: OutputT | None = None
    """The expected output, for ``ExpectedOutput`` and judges."""
    metadata: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Anything you want in the report (tags, a ticket id); evaluators see it."""
    evaluators: Sequence[Evaluator[OutputT]] = ()
    """Evaluators of this case only, after the dataset's."""
    min_pass_rate: float | None = None
    """This case's least pass rate; None for the dataset's ``Thresholds.case_min_pass_rate``."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"Case.name must be a non-empty str, got {self.name!r}.")
        if not isinstance(self.prompt, str) or not self.prompt:
            raise ValueError(f"Case {self.name!r}: prompt must be a non-empty str.")
        _check_rate(f"Case {self.name!r}: min_pass_rate", self.min_pass_rate)
        object.__setattr__(self, "evaluators", tuple(self.evaluators))


@subscriptable
@dataclass(frozen=True, kw_only=True, slots=True)
class Dataset(Generic[OutputT, DepsT]):
    """The cases of an eval suite, the evaluators every case gets, and the thresholds CI enforces.

    Save it with ``save_dataset`` and read it back with ``load_dataset`` (YAML or JSON).
    """

    cases: Sequence[Case[OutputT, DepsT]]
    """The cases, names unique."""
    evaluators: Sequence[Evaluator[OutputT]] = ()
    """Applied to every case, before the case's own. With none at all, a run is scored by ``Outcome()``."""
    thresholds: Thresholds = field(default_factory=Thresholds)
    """Least pass rates per case and for the suite."""
    name: str = "evals"
    """Names the suite in reports."""

    def __post_init__(self) -> None:
        cases = tuple(self.cases)
        if not cases:
            raise ValueError(f"Dataset {self.name!r} has no cases: add at least one Case.")
        seen: set[str] = set()
        for case in cases:
            if case.name in seen:
                raise ValueError(f"Dataset {self.name!r}: two cases are named {case.name!r}; names must be unique.")
            seen.add(case.name)
        object.__setattr__(self, "cases", cases)
        object.__setattr__(self, "evaluators", tuple(self.evaluators))

    def case(self, name: str) -> Case[OutputT, DepsT]:
        """The case named ``name``.

        Raises:
            KeyError: no such case (the message lists the names).
        """
        for case in self.cases:
            if case.name == name:
                return case
        raise KeyError(f"Dataset {self.name!r} has no case {name!r}; cases: {[c.name for c in self.cases]}")

    def min_pass_rate(self, case: Case[OutputT, DepsT]) -> float:
        """The least pass rate that applies to ``case``."""
        return self.thresholds.case_min_pass_rate if case.min_pass_rate is None else case.min_pass_rate

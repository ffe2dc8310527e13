"""``EvalReport``: every run's inputs, outputs, scores and costs, the thresholds' verdict, and diffs to a baseline."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, cast

from .._shared.results import TokenUsage
from ._case import Thresholds
from ._score import Score

__all__ = ["REPORT_FORMAT", "REPORT_VERSION", "CaseChange", "CaseResult", "Comparison", "EvalReport", "EvalRun"]

REPORT_FORMAT: Final = "typedagent-eval-report"
REPORT_VERSION: Final = 1


@dataclass(frozen=True, kw_only=True, slots=True)
class EvalRun:
    """One execution of one case, with its scores; inputs and outputs as JSON data."""

    case: str
    """The case's name."""
    repeat: int
    """Which of the case's runs (0-based)."""
    prompt: str
    """The prompt."""
    deps: Any = None
    """The deps, as JSON data (their ``repr`` when they do not serialise)."""
    expected: Any = None
    """The expected output, as JSON data."""
    output: Any = None
    """The validated output, as JSON data; None when the execution failed."""
    error_code: str | None = None
    """None on success, else the ``AgentErrorCode`` value."""
    error_message: str = ""
    """The failure's message."""
    scores: tuple[Score, ...] = ()
    """Every evaluator's score."""
    tokens: TokenUsage = field(default_factory=TokenUsage)
    """Tokens of the run."""
    cost_usd: float | None = None
    """Estimated price in US dollars."""
    latency_ms: float = 0.0
    """Wall-clock duration."""
    iterations: int = 0
    """API calls."""
    attempts: int = 0
    """Attempts started."""
    messages: Sequence[Mapping[str, Any]] = ()
    """The conversation."""

    @property
    def passed(self) -> bool:
        """Every score passed."""
        return all(score.passed for score in self.scores)

    @property
    def failures(self) -> list[str]:
        """The failed scores as ``evaluator: reason`` lines."""
        return [f"{score.evaluator}: {score.reason}" for score in self.scores if not score.passed]


@dataclass(frozen=True, kw_only=True, slots=True)
class CaseResult:
    """A case's runs and its verdict against its threshold."""

    name: str
    """The case's name."""
    runs: tuple[EvalRun, ...]
    """Its runs, in repeat order."""
    min_pass_rate: float
    """The threshold that applies to it."""

    @property
    def passed_runs(self) -> int:
        """Runs that passed."""
        return sum(run.passed for run in self.runs)

    @property
    def pass_rate(self) -> float:
        """Passing runs over runs."""
        return self.passed_runs / len(self.runs) if self.runs else 0.0

    @property
    def mean_score(self) -> float:
        """The mean of every score value of every run (1.0 when there are none)."""
        values = [score.value for run in self.runs for score in run.scores]
        return sum(values) / len(values) if values else 1.0

    @property
    def met(self) -> bool:
        """The pass rate reaches the threshold."""
        return self.pass_rate >= self.min_pass_rate - 1e-9

    @property
    def flaky(self) -> bool:
        """Some runs passed and some failed."""
        return 0 < self.passed_runs < len(self.runs)

    @property
    def status(self) -> Literal["passed", "flaky", "failed"]:
        """``failed`` below the threshold, else ``flaky`` when some runs failed, else ``passed``."""
        if not self.met:
            return "failed"
        return "flaky" if self.flaky else "passed"


@dataclass(frozen=True, kw_only=True, slots=True)
class CaseChange:
    """How one case moved between a baseline report and this one."""

    case: str
    """The case's name."""
    before: float
    """Its pass rate in the baseline."""
    after: float
    """Its pass rate now."""
    score_before: float
    """Its mean score in the baseline."""
    score_after: float
    """Its mean score now."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Comparison:
    """What changed against a baseline: a lower pass rate (or, at equal rates, a lower mean score) regressed."""

    regressed: tuple[CaseChange, ...]
    """Cases that got worse."""
    improved: tuple[CaseChange, ...]
    """Cases that got better."""
    unchanged: tuple[str, ...]
    """Cases with the same pass rate and mean score."""
    added: tuple[str, ...]
    """Cases only in this report."""
    removed: tuple[str, ...]
    """Cases only in the baseline."""


@dataclass(frozen=True, kw_only=True, slots=True)
class EvalReport:
    """The result of ``run_evals``: every run, each case's verdict, the suite's, saved as versioned JSON."""

    suite: str
    """The dataset's name."""
    agent: str
    """The agent's name."""
    model: str
    """The agent's model."""
    repeat: int
    """Runs per case."""
    thresholds: Thresholds
    """The thresholds the verdicts use."""
    cases: tuple[CaseResult, ...]
    """One result per case, in dataset order."""
    created_at: str = ""
    """When the runs finished (ISO 8601, UTC)."""
    version: int = REPORT_VERSION
    """The report format's version."""

    @property
    def runs(self) -> list[EvalRun]:
        """Every run of every case."""
        return [run for case in self.cases for run in case.runs]

    @property
    def pass_rate(self) -> float:
        """Passing runs over every run."""
        runs = self.runs
        return sum(run.passed for run in runs) / len(runs) if runs else 0.0

    @property
    def passed(self) -> bool:
        """Every case meets its threshold and the suite meets its own: CI passes."""
        return not self.problems

    @property
    def problems(self) -> list[str]:
        """Why CI fails, one line per failed threshold (empty when it passes)."""
        lines = [
            f"case {case.name!r}: pass rate {case.pass_rate:.0%} below {case.min_pass_rate:.0%}"
            for case in self.cases
            if not case.met
        ]
        if self.pass_rate < self.thresholds.suite_min_pass_rate - 1e-9:
            lines.append(f"suite: pass rate {self.pass_rate:.0%} below {self.thresholds.suite_min_pass_rate:.0%}")
        return lines

    @property
    def flaky(self) -> list[str]:
        """Names of cases that passed sometimes."""
        return [case.name for case in self.cases if case.flaky]

    @property
    def tokens(self) -> TokenUsage:
        """Tokens of every run."""
        return sum((run.tokens for run in self.runs), TokenUsage())

    @property
    def cost_usd(self) -> float | None:
        """Estimated cost of every run (None when some run's cost is unknown)."""
        costs = [run.cost_usd for run in self.runs]
        return None if any(cost is None for cost in costs) else sum(cost or 0.0 for cost in costs)

    def case(self, name: str) -> CaseResult:
        """The result of the case named ``name``.

        Raises:
            KeyError: no such case.
        """
        for case in self.cases:
            if case.name == name:
                return case
        raise KeyError(f"the report has no case {name!r}; cases: {[c.name for c in self.cases]}")

    def compare(self, baseline: EvalReport) -> Comparison:
        """What regressed and what improved since ``baseline`` (an earlier report of the same suite)."""
        before = {case.name: case for case in baseline.cases}
        regressed: list[CaseChange] = []
        improved: list[CaseChange] = []
        unchanged: list[str] = []
        for case in self.cases:
            old = before.get(case.name)
            if old is None:
                continue
            change = CaseChange(
                case=case.name,
                before=old.pass_rate,
                after=case.pass_rate,
                score_before=old.mean_score,
                score_after=case.mean_score,
            )
            delta = (round(case.pass_rate - old.pass_rate, 9), round(case.mean_score - old.mean_score, 9))
            if delta < (0, 0):
                regressed.append(change)
            elif delta > (0, 0):
                improved.append(change)
            else:
                unchanged.append(case.name)
        names = {case.name for case in self.cases}
        return Comparison(
            regressed=tuple(regressed),
            improved=tuple(improved),
            unchanged=tuple(unchanged),
            added=tuple(case.name for case in self.cases if case.name not in before),
            removed=tuple(name for name in before if name not in names),
        )

    def to_json(self) -> dict[str, Any]:
        """The report as JSON data (``load_report`` reads it back)."""
        data = dataclasses.asdict(self)
        return {"format": REPORT_FORMAT, **data}

    def save(self, path: str | Path) -> None:
        """Write the report as indented JSON (parent folders are created)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(self.to_json(), indent=2, ensure_ascii=False, default=str) + "\n")

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EvalReport:
        """Read a report from JSON data.

        Raises:
            ValueError: not a typedagent eval report, or one of another version.
        """
        if data.get("format") != REPORT_FORMAT:
            raise ValueError("not a typedagent eval report (its 'format' is not 'typedagent-eval-report').")
        if data.get("version") != REPORT_VERSION:
            raise ValueError(
                f"eval report version {data.get('version')!r} is not supported (this typedagent reads version "
                f"{REPORT_VERSION}); run the evals again to write a new report."
            )
        cases = tuple(
            CaseResult(
                name=case["name"],
                min_pass_rate=case["min_pass_rate"],
                runs=tuple(_run_from_json(run) for run in case["runs"]),
            )
            for case in data["cases"]
        )
        return cls(
            suite=data["suite"],
            agent=data["agent"],
            model=data["model"],
            repeat=data["repeat"],
            thresholds=Thresholds(**data["thresholds"]),
            cases=cases,
            created_at=data.get("created_at", ""),
        )

    @classmethod
    def load(cls, path: str | Path) -> EvalReport:
        """Read a report saved with ``save``.

        Raises:
            ValueError: the file is not valid JSON or not a report this version reads.
            OSError: the file cannot be read.
        """
        try:
            data = json.loads(Path(path).read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc}).") from None
        if not isinstance(data, dict):
            raise ValueError(f"{path}: not a typedagent eval report.")
        try:
            return cls.from_json(cast("dict[str, Any]", data))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{path}: a damaged eval report (missing or wrong field {exc}).") from None


def _run_from_json(run: Mapping[str, Any]) -> EvalRun:
    fields = dict(run)
    fields["scores"] = tuple(Score(**score) for score in fields.get("scores", ()))
    fields["tokens"] = TokenUsage(**fields.get("tokens", {}))
    return EvalRun(**fields)

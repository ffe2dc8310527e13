"""pytest collection of ``*.eval.yaml`` files: one test item per case, plus one for the suite's threshold."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..evals._report import EvalReport

__all__ = ["EvalFailed", "EvalFile", "EvalItem"]

SUITE_ITEM = "[suite]"


class EvalFailed(AssertionError):
    """A case (or the suite) is below its pass-rate threshold."""


class EvalFile(pytest.File):
    """An eval suite file; its items share one run of the whole suite, made when the first item runs.

    The file names its agent (``agent: path/to/file.py:attr`` or ``package.module:attr``, a path
    relative to the file) and, to run offline, a ``cassette`` to replay (relative to the file).
    """

    _report: EvalReport | None = None
    _error: Exception | None = None

    def collect(self) -> Iterator[pytest.Item]:
        """One item per case, then the suite's."""
        from ..evals._files import read_file

        data = read_file(self.path)
        for case in data["cases"]:
            yield EvalItem.from_parent(self, name=str(case.get("name")))  # pyright: ignore[reportUnknownMemberType]
        yield EvalItem.from_parent(self, name=SUITE_ITEM)  # pyright: ignore[reportUnknownMemberType]

    def report(self) -> EvalReport:
        """The suite's report: run on the first call (replaying the file's cassette), then reused.

        A run that raised (no agent named, a cassette that drifted) raises the same error for every item.
        """
        if self._error is not None:
            raise self._error
        if self._report is None:
            try:
                self._report = self._run()
            except Exception as exc:
                self._error = exc
                raise
        return self._report

    def _run(self) -> EvalReport:
        from .._agent.locate import load_agent, split_target
        from ..evals._files import load_dataset, read_file
        from ..evals._run import run_evals_sync

        data = read_file(self.path)
        spec = data.get("agent")
        if not isinstance(spec, str):
            raise EvalFailed(f"{self.path.name}: name the agent to evaluate, e.g. `agent: ../agents.py:triage`.")
        ref, attr = split_target(spec)
        if ref.endswith(".py") or "/" in ref:
            spec = f"{(self.path.parent / ref).resolve()}:{attr}"
        agent = load_agent(spec).agent
        client: Any = None
        cassette = data.get("cassette")
        if isinstance(cassette, str):
            from . import ReplayClient

            client = ReplayClient(self.path.parent / cassette)
        repeat = data.get("repeat", 1)
        return run_evals_sync(load_dataset(self.path, agent), agent, repeat=repeat, client=client)


class EvalItem(pytest.Item):
    """One case of an eval suite: fails when the case's pass rate is below its threshold."""

    def runtest(self) -> None:
        """Check the case's (or the suite's) threshold in the suite's report."""
        parent = self.parent
        assert isinstance(parent, EvalFile)
        report = parent.report()
        if self.name == SUITE_ITEM:
            suite = [problem for problem in report.problems if problem.startswith("suite:")]
            if suite:
                raise EvalFailed(suite[0])
            return
        case = report.case(self.name)
        if case.flaky:
            self.user_properties.append(("flaky", f"{case.passed_runs}/{len(case.runs)} runs passed"))
        if not case.met:
            lines = [f"run {run.repeat}: {line}" for run in case.runs if not run.passed for line in run.failures]
            raise EvalFailed(
                f"case {case.name!r}: pass rate {case.pass_rate:.0%} below {case.min_pass_rate:.0%}\n"
                + "\n".join(lines)
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | Any:
        """The failed scores, without a traceback."""
        if isinstance(excinfo.value, EvalFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the case is."""
        return self.path, None, f"eval {self.name}"

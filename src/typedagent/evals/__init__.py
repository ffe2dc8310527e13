"""Evals for CI: run an agent on a dataset of cases, score every run, and fail CI when quality drops.

- ``Case`` and ``Dataset`` (generic over the agent's output and deps) hold the prompts, expected
  outputs, evaluators and ``Thresholds``; ``load_dataset`` / ``save_dataset`` read and write them
  as YAML or JSON, and ``dataset_json_schema`` describes those files for editors.
- Evaluators return a ``Score`` (pass/fail and a value from 0 to 1, with a reason): ``ExpectedOutput``,
  ``FieldEquals``, ``Contains``, ``Predicate``, ``ToolCalled``, ``ToolNotCalled``, ``ToolCalledWith``,
  ``ToolOrder``, ``ToolCount``, ``Budget``, ``Outcome`` and ``LLMJudge`` (itself a typedagent agent).
- ``run_evals`` runs every case ``repeat`` times on ``execute_many``; the ``EvalReport`` it returns
  says which thresholds failed and which cases are flaky, saves itself as versioned JSON, and
  compares itself with a baseline. ``rescore`` scores a saved report again without running the agent.
- ``format_report`` (a rich table), ``to_junit`` and ``to_html`` (a self-contained page with charts)
  render a report; ``typedagent eval`` and ``*.eval.yaml`` files collected by pytest run it in CI.
"""

from ._case import Case, Dataset, Thresholds
from ._console import format_report
from ._evaluators import Budget, Contains, ExpectedOutput, FieldEquals, Outcome, Predicate
from ._files import dataset_json_schema, load_dataset, save_dataset
from ._html import to_html
from ._judge import LLMJudge, Verdict
from ._junit import to_junit
from ._report import CaseChange, CaseResult, Comparison, EvalReport, EvalRun
from ._run import rescore, run_evals, run_evals_sync
from ._score import EvalContext, Evaluator, Score, ToolUse
from ._tool_checks import ToolCalled, ToolCalledWith, ToolCount, ToolNotCalled, ToolOrder

__all__ = [
    "Budget",
    "Case",
    "CaseChange",
    "CaseResult",
    "Comparison",
    "Contains",
    "Dataset",
    "EvalContext",
    "EvalReport",
    "EvalRun",
    "Evaluator",
    "ExpectedOutput",
    "FieldEquals",
    "LLMJudge",
    "Outcome",
    "Predicate",
    "Score",
    "Thresholds",
    "ToolCalled",
    "ToolCalledWith",
    "ToolCount",
    "ToolNotCalled",
    "ToolOrder",
    "ToolUse",
    "Verdict",
    "dataset_json_schema",
    "format_report",
    "load_dataset",
    "rescore",
    "run_evals",
    "run_evals_sync",
    "save_dataset",
    "to_html",
    "to_junit",
]

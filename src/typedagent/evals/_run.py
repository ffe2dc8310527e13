"""``run_evals`` runs a dataset's cases on ``execute_many`` and scores them; ``rescore`` scores a saved report again."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, cast

import pydantic
import pydantic_core
from typing_extensions import TypeVar

from .._agent.definition import AgentDefinition
from .._api.client import MessagesClient
from .._many.inputs import RunInput
from .._many.many import execute_many
from .._run.sync import refuse_running_loop, run_blocking
from .._shared.errors import AgentErrorCode
from .._shared.limits import ExecutionLimits
from .._shared.results import ExecuteResult
from ._case import Case, Dataset
from ._evaluators import ExpectedOutput, Outcome
from ._report import CaseResult, EvalReport, EvalRun
from ._score import EvalContext, Evaluator, Score

__all__ = ["rescore", "run_evals", "run_evals_sync"]

OutputT = TypeVar("OutputT", default=Any)
DepsT = TypeVar("DepsT", default=None)

DEFAULT_EVAL_CONCURRENCY = 8


def _jsonable(value: object) -> Any:
    return pydantic_core.to_jsonable_python(value, fallback=repr)


def _evaluators(dataset: Dataset[OutputT, DepsT], case: Case[OutputT, DepsT]) -> list[Evaluator[OutputT]]:
    """The dataset's evaluators that apply to the case, then the case's own (``Outcome()`` when there are none).

    A dataset-level ``ExpectedOutput`` applies to the cases that have an ``expected``: a case without one is
    scored by its other evaluators. Asked for by the case itself, it fails the case for the missing ``expected``.
    """
    shared = [e for e in dataset.evaluators if case.expected is not None or not isinstance(e, ExpectedOutput)]
    chosen = [*shared, *case.evaluators]
    return chosen or [Outcome()]


async def _score(evaluators: Sequence[Evaluator[OutputT]], context: EvalContext[OutputT]) -> tuple[Score, ...]:
    scores: list[Score] = []
    for evaluator in evaluators:
        name = str(getattr(evaluator, "name", type(evaluator).__name__))
        try:
            verdict = evaluator.evaluate(context)
            score = await verdict if inspect.isawaitable(verdict) else verdict
        except Exception as exc:  # a broken evaluator fails its run, with the error as the reason
            score = Score.check(name, False, f"the evaluator raised {type(exc).__name__}: {exc}")
        if not isinstance(score, Score):
            score = Score.check(name, False, f"the evaluator returned {type(score).__name__}, not a Score")
        scores.append(score)
    return tuple(scores)


def _context(case: Case[OutputT, DepsT], result: ExecuteResult[OutputT]) -> EvalContext[OutputT]:
    metadata = result.metadata
    return EvalContext(
        case=case.name,
        prompt=case.prompt,
        expected=case.expected,
        output=result.output if result.ok is True else None,
        error_code=None if result.ok is True else result.error.code,
        error_message="" if result.ok is True else result.error.message,
        messages=cast("Sequence[Mapping[str, Any]]", metadata.messages),
        tokens=metadata.tokens,
        cost_usd=metadata.cost_usd,
        latency_ms=metadata.latency_ms,
        iterations=metadata.iterations,
        attempts=len(metadata.attempts),
        metadata=case.metadata,
    )


def _record(case: Case[Any, Any], repeat: int, context: EvalContext[Any], scores: tuple[Score, ...]) -> EvalRun:
    return EvalRun(
        case=case.name,
        repeat=repeat,
        prompt=case.prompt,
        deps=_jsonable(case.deps),
        expected=_jsonable(case.expected),
        output=_jsonable(context.output),
        error_code=None if context.error_code is None else context.error_code.value,
        error_message=context.error_message,
        scores=scores,
        tokens=context.tokens,
        cost_usd=context.cost_usd,
        latency_ms=context.latency_ms,
        iterations=context.iterations,
        attempts=context.attempts,
        messages=_jsonable(context.messages),
    )


def _report(
    dataset: Dataset[Any, Any], agent: AgentDefinition[Any, Any], repeat: int, runs: Sequence[EvalRun]
) -> EvalReport:
    cases = tuple(
        CaseResult(
            name=case.name,
            min_pass_rate=dataset.min_pass_rate(case),
            runs=tuple(sorted((run for run in runs if run.case == case.name), key=lambda run: run.repeat)),
        )
        for case in dataset.cases
    )
    return EvalReport(
        suite=dataset.name,
        agent=agent.name,
        model=agent.model,
        repeat=repeat,
        thresholds=dataset.thresholds,
        cases=cases,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


async def run_evals(
    dataset: Dataset[OutputT, DepsT],
    agent: AgentDefinition[OutputT, DepsT],
    *,
    repeat: int = 1,
    concurrency: int = DEFAULT_EVAL_CONCURRENCY,
    client: MessagesClient | None = None,
    limits: ExecutionLimits | None = None,
) -> EvalReport:
    """Run every case ``repeat`` times (on ``execute_many``) and score each run with its evaluators.

    Nothing raises for a failed execution or a failed score: they are in the report, whose
    ``passed`` says whether the thresholds hold. Evaluators run once every execution finished,
    ``concurrency`` runs at a time (an ``LLMJudge`` calls a model).

    Args:
        dataset: The cases and evaluators.
        agent: The agent under evaluation.
        repeat: Runs per case (pass rates and flakiness come from them).
        concurrency: Most executions in flight at once.
        client: The agent's client (a ``ReplayClient`` replays a cassette); default ``AsyncAnthropic()``.
        limits: Token budget and timeout of each execution.

    Raises:
        ValueError: ``repeat`` or ``concurrency`` below 1.
    """
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat must be an int >= 1, got {repeat!r}.")
    cases = {case.name: case for case in dataset.cases}
    inputs = [
        _input(case, index)
        for index in range(repeat)
        for case in dataset.cases  # round-robin, so a stopped run has covered every case
    ]
    stream = execute_many(
        cast("AgentDefinition[Any, Any]", agent), inputs, concurrency=concurrency, client=client, limits=limits
    )
    finished: list[tuple[Case[OutputT, DepsT], int, ExecuteResult[OutputT]]] = []
    async with contextlib.aclosing(stream):
        async for item in stream:
            name, _, position = item.key.rpartition("#")
            finished.append((cases[name], int(position), cast("ExecuteResult[OutputT]", item.result)))
    slots = asyncio.Semaphore(concurrency)  # LLM judges call a model: as many at once as executions

    async def scored(case: Case[OutputT, DepsT], repeat_index: int, result: ExecuteResult[OutputT]) -> EvalRun:
        context = _context(case, result)
        async with slots:
            return _record(case, repeat_index, context, await _score(_evaluators(dataset, case), context))

    runs = await asyncio.gather(*(scored(*item) for item in finished))
    return _report(dataset, agent, repeat, runs)


def _input(case: Case[Any, Any], index: int) -> RunInput[Any]:
    return RunInput(case.prompt, deps=case.deps, key=f"{case.name}#{index}")


def run_evals_sync(
    dataset: Dataset[OutputT, DepsT],
    agent: AgentDefinition[OutputT, DepsT],
    *,
    repeat: int = 1,
    concurrency: int = DEFAULT_EVAL_CONCURRENCY,
    client: MessagesClient | None = None,
    limits: ExecutionLimits | None = None,
) -> EvalReport:
    """Blocking ``run_evals``: same arguments.

    Raises:
        RuntimeError: called inside a running event loop (``await run_evals(...)`` there).
    """
    refuse_running_loop("run_evals_sync()", "`await run_evals(...)`")
    return run_blocking(run_evals(dataset, agent, repeat=repeat, concurrency=concurrency, client=client, limits=limits))


async def rescore(
    report: EvalReport, dataset: Dataset[OutputT, DepsT], agent: AgentDefinition[OutputT, DepsT]
) -> EvalReport:
    """Score a saved report again with the dataset's (new or changed) evaluators and thresholds: no agent run.

    Outputs and expected outputs are validated back into the agent's output type, so evaluators see
    the same typed values as in a live run. Expected outputs, per-case evaluators and thresholds come
    from ``dataset``; runs of cases the dataset no longer has are dropped. Only an ``LLMJudge`` calls a model.
    """
    adapter: pydantic.TypeAdapter[OutputT] = pydantic.TypeAdapter(agent.output.schema)
    runs: list[EvalRun] = []
    for run in report.runs:
        try:
            case = dataset.case(run.case)
        except KeyError:
            continue
        context = EvalContext(
            case=run.case,
            prompt=run.prompt,
            expected=case.expected,
            output=None if run.error_code is not None else adapter.validate_python(run.output),
            error_code=None if run.error_code is None else AgentErrorCode(run.error_code),
            error_message=run.error_message,
            messages=run.messages,
            tokens=run.tokens,
            cost_usd=run.cost_usd,
            latency_ms=run.latency_ms,
            iterations=run.iterations,
            attempts=run.attempts,
            metadata=case.metadata,
        )
        scores = await _score(_evaluators(dataset, case), context)
        runs.append(dataclasses.replace(run, expected=_jsonable(case.expected), scores=scores))
    rescored = _report(dataset, agent, report.repeat, runs)
    return dataclasses.replace(rescored, cases=tuple(case for case in rescored.cases if case.runs))

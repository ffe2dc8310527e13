"""Type-checked, never run: datasets and evaluators carry the agent's output and deps types.

Every line ending in ``# type: ignore[...]`` must stay an error for mypy (``warn_unused_ignores``),
every ``# pyright: ignore[...]`` one for basedpyright (``reportUnnecessaryTypeIgnoreComment``).
"""

from dataclasses import dataclass
from typing import assert_type

from pydantic import BaseModel

from typedagent import OutputTool, define_agent
from typedagent.evals import (
    Case,
    Dataset,
    EvalContext,
    EvalReport,
    ExpectedOutput,
    Predicate,
    Score,
    load_dataset,
    rescore,
    run_evals,
    run_evals_sync,
)


class Triage(BaseModel):
    severity: int
    summary: str


@dataclass
class Db:
    user: str


agent = define_agent(name="triage", model="claude-sonnet-4-5", output=OutputTool(Triage))
db_agent = define_agent(name="triage", model="claude-sonnet-4-5", output=OutputTool(Triage), deps_type=Db)


def urgent(triage: Triage) -> bool:
    return triage.severity >= 4


def check_cases() -> None:
    case = Case(name="vpn", prompt="VPN drops", expected=Triage(severity=2, summary="VPN"))
    assert_type(case, Case[Triage, None])
    dataset = Dataset(cases=[case], evaluators=[ExpectedOutput(), Predicate(function=urgent)])
    assert_type(dataset, Dataset[Triage, None])
    assert_type(run_evals_sync(dataset, agent), EvalReport)
    db_case: Case[Triage, Db] = Case(name="vpn", prompt="VPN drops", deps=Db(user="ann"))
    assert_type(db_case.deps, Db)
    run_evals_sync(Dataset(cases=[db_case]), db_agent)
    run_evals_sync(dataset, db_agent)  # type: ignore[misc]  # pyright: ignore[reportArgumentType]


def check_predicate_must_fit_the_output() -> None:
    def wrong(value: int) -> bool:
        return value > 0

    cases = [Case(name="a", prompt="x", expected=Triage(severity=1, summary="s"))]
    Dataset(cases=cases, evaluators=[Predicate(function=wrong)])  # type: ignore[misc]  # pyright: ignore[reportArgumentType]


async def check_async(path: str) -> None:
    dataset = load_dataset(path, agent)
    assert_type(dataset, Dataset[Triage, None])
    report = await run_evals(dataset, agent, repeat=3)
    assert_type(await rescore(report, dataset, agent), EvalReport)


class Urgent:
    name = "Urgent"

    def evaluate(self, context: EvalContext[Triage], /) -> Score:
        output = context.output
        return Score.check(self.name, output is not None and output.severity >= 4)


def check_own_evaluator() -> None:
    Dataset(cases=[Case(name="a", prompt="x", expected=Triage(severity=1, summary="s"))], evaluators=[Urgent()])

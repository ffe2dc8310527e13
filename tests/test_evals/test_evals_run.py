"""``run_evals`` on ``execute_many``: scores, repeats and thresholds, flaky cases, the judge, ``rescore``."""

from __future__ import annotations

import asyncio

import pytest
from evals_support import PARIS, City, answering

from typedagent import AgentDefinition
from typedagent.evals import (
    Case,
    Dataset,
    EvalContext,
    ExpectedOutput,
    LLMJudge,
    Outcome,
    Score,
    Thresholds,
    ToolCalled,
    Verdict,
    rescore,
    run_evals,
    run_evals_sync,
)
from typedagent.testing import FunctionClient, MessagesRequest, ScriptedClient, ScriptStep, api_error, output_call

WRONG = PARIS.model_copy(update={"population": 1})


def dataset(**fields: object) -> Dataset[City]:
    """One case about Paris, expected ``PARIS``, checked by ``ExpectedOutput`` and ``ToolCalled``."""
    case = Case(name="paris", prompt="Tell me about Paris", expected=PARIS, evaluators=[ToolCalled(tool="lookup")])
    return Dataset(cases=[case], evaluators=[ExpectedOutput()], **fields)  # type: ignore[arg-type]


async def test_run_evals_scores_every_run(agent: AgentDefinition[City, None]) -> None:
    """Each run carries its output, scores, tokens and conversation; passing runs make the suite pass."""
    report = await run_evals(dataset(), agent, client=answering(PARIS))
    (run,) = report.runs
    assert (run.case, run.repeat, run.output, run.error_code) == ("paris", 0, PARIS.model_dump(mode="json"), None)
    assert [(s.evaluator, s.passed) for s in run.scores] == [("ExpectedOutput", True), ("ToolCalled(lookup)", True)]
    assert [m["role"] for m in run.messages] == ["user", "assistant", "user", "assistant", "user"]
    assert (run.iterations, run.attempts, run.tokens.total > 0) == (2, 1, True)
    assert (report.passed, report.problems, report.agent, report.repeat) == (True, [], "cities", 1)


async def test_run_evals_repeats_and_reports_flaky_cases(agent: AgentDefinition[City, None]) -> None:
    """Over ``repeat`` runs a case passing sometimes is flaky, and fails a threshold above its pass rate."""
    report = await run_evals(dataset(), agent, client=answering(PARIS, WRONG), repeat=2, concurrency=1)
    case = report.case("paris")
    assert (case.passed_runs, case.pass_rate, case.flaky, case.status) == (1, 0.5, True, "failed")
    assert report.flaky == ["paris"]
    assert report.problems == ["case 'paris': pass rate 50% below 100%", "suite: pass rate 50% below 100%"]
    assert report.runs[1].failures == ["ExpectedOutput: population: expected 2100000, got 1"]
    lenient = dataset(thresholds=Thresholds(case_min_pass_rate=0.5, suite_min_pass_rate=0.5))
    report = await run_evals(lenient, agent, client=answering(PARIS, WRONG), repeat=2, concurrency=1)
    assert (report.passed, report.case("paris").status) == (True, "flaky")


async def test_run_evals_case_threshold_overrides_the_dataset(agent: AgentDefinition[City, None]) -> None:
    """A case's own ``min_pass_rate`` replaces the dataset's."""
    case = Case(name="paris", prompt="Tell me about Paris", expected=PARIS, min_pass_rate=0.0)
    lenient = Dataset(cases=[case], evaluators=[ExpectedOutput()], thresholds=Thresholds(suite_min_pass_rate=0.0))
    report = await run_evals(lenient, agent, client=answering(WRONG))
    assert (report.case("paris").met, report.passed) == (True, True)


async def test_run_evals_without_evaluators_scores_the_outcome(agent: AgentDefinition[City, None]) -> None:
    """With no evaluator at all a run is scored by ``Outcome()``: a failed execution fails."""
    plain = Dataset(cases=[Case(name="paris", prompt="Tell me about Paris")])
    client = ScriptedClient([api_error(400, "bad request")])
    report = await run_evals(plain, agent, client=client)
    (run,) = report.runs
    assert (run.error_code, run.output) == ("API_ERROR", None)
    assert [(s.evaluator, s.passed) for s in run.scores] == [("Outcome(success)", False)]


async def test_run_evals_dataset_expected_output_skips_cases_without_expected(
    agent: AgentDefinition[City, None],
) -> None:
    """A dataset-level ExpectedOutput scores the cases that have an ``expected``; the others are not failed by it."""
    mixed = Dataset(
        cases=[
            Case(name="paris", prompt="Tell me about Paris", expected=PARIS),
            Case(name="open", prompt="Tell me about Paris", evaluators=[ToolCalled(tool="lookup")]),
            Case(name="bare", prompt="Tell me about Paris"),
        ],
        evaluators=[ExpectedOutput()],
    )
    report = await run_evals(mixed, agent, client=answering(PARIS))
    scores = {run.case: [(s.evaluator, s.passed) for s in run.scores] for run in report.runs}
    assert scores == {
        "paris": [("ExpectedOutput", True)],
        "open": [("ToolCalled(lookup)", True)],
        "bare": [("Outcome(success)", True)],
    }
    assert report.passed is True
    own = Dataset(cases=[Case(name="asks", prompt="Tell me about Paris", evaluators=[ExpectedOutput()])])
    asked = await run_evals(own, agent, client=answering(PARIS))
    assert [(s.passed, s.reason) for s in asked.runs[0].scores] == [
        (False, "case 'asks' has no expected output to compare with")
    ]


class Broken:
    """An evaluator with a bug."""

    name = "Broken"

    def evaluate(self, context: EvalContext[City], /) -> Score:
        """Raise."""
        raise RuntimeError("oops")


async def test_run_evals_a_raising_evaluator_fails_its_run(agent: AgentDefinition[City, None]) -> None:
    """An evaluator that raises fails the run with the error as the reason, and the others still score."""
    broken = Dataset(cases=[Case(name="paris", prompt="Tell me about Paris")], evaluators=[Broken(), Outcome()])
    report = await run_evals(broken, agent, client=answering(PARIS))
    assert [(s.passed, s.reason) for s in report.runs[0].scores] == [
        (False, "the evaluator raised RuntimeError: oops"),
        (True, "ended with success"),
    ]


def test_run_evals_sync_refuses_a_bad_repeat(agent: AgentDefinition[City, None]) -> None:
    """``repeat`` must be at least 1."""
    with pytest.raises(ValueError, match="repeat must be an int >= 1"):
        run_evals_sync(dataset(), agent, repeat=0, client=answering(PARIS))


def test_dataset_refuses_duplicate_names_and_no_cases() -> None:
    """Case names are unique, a dataset has cases, and rates lie between 0 and 1."""
    case = Case(name="a", prompt="x")
    with pytest.raises(ValueError, match="two cases are named 'a'"):
        Dataset(cases=[case, case])
    with pytest.raises(ValueError, match="has no cases"):
        Dataset[City](cases=[])
    with pytest.raises(ValueError, match="pass rate is a number from 0 to 1"):
        Thresholds(case_min_pass_rate=2)
    with pytest.raises(ValueError, match="prompt must be a non-empty str"):
        Case(name="a", prompt="")
    with pytest.raises(KeyError, match="no case 'b'"):
        Dataset(cases=[case]).case("b")


async def test_llm_judge_is_a_scripted_agent(agent: AgentDefinition[City, None]) -> None:
    """The judge is an agent with a typed verdict: scripted here, its score and reason become the run's."""
    judge_client = ScriptedClient([output_call(Verdict(passed=True, score=0.8, reason="Names the capital."))])
    judge = LLMJudge(rubric="The answer names a capital city.", client=judge_client)
    judged = Dataset(cases=[Case(name="paris", prompt="Tell me about Paris", expected=PARIS)], evaluators=[judge])
    report = await run_evals(judged, agent, client=answering(PARIS))
    assert report.runs[0].scores == (Score(evaluator="LLMJudge", passed=True, value=0.8, reason="Names the capital."),)
    request = judge_client.requests[0]
    assert "The answer names a capital city." in str(request["system"])
    assert "<answer>" in str(request["messages"][0]["content"])
    assert "<expected>" in str(request["messages"][0]["content"])
    assert judge.agent.output.name == "record_verdict"


async def test_llm_judge_failure_fails_the_run(agent: AgentDefinition[City, None]) -> None:
    """A judge that cannot answer fails the run with its error; a low score fails too."""
    failing = LLMJudge(rubric="r", client=ScriptedClient([api_error(500, "down")] * 3))
    low = LLMJudge(rubric="r", client=ScriptedClient([output_call(Verdict(passed=True, score=0.2, reason="Weak."))]))
    judged = Dataset(cases=[Case(name="paris", prompt="Tell me about Paris")], evaluators=[failing, low])
    report = await run_evals(judged, agent, client=answering(PARIS))
    first, second = report.runs[0].scores
    assert first.passed is False
    assert first.reason.startswith("the judge failed: API_ERROR")
    assert (second.passed, second.value) == (False, 0.2)


async def test_rescore_uses_new_evaluators_without_running_the_agent(agent: AgentDefinition[City, None]) -> None:
    """A saved report scored again with a changed dataset: typed outputs, new verdicts, no model call."""
    report = await run_evals(dataset(), agent, client=answering(WRONG))
    assert report.passed is False
    tolerant = Dataset(
        cases=[Case(name="paris", prompt="Tell me about Paris", expected=PARIS), Case(name="rome", prompt="Rome?")],
        evaluators=[ExpectedOutput(ignore=("population",)), ToolCalled(tool="lookup")],
    )
    rescored = await rescore(report, tolerant, agent)
    assert [c.name for c in rescored.cases] == ["paris"]
    assert [(s.evaluator, s.passed) for s in rescored.runs[0].scores] == [
        ("ExpectedOutput", True),
        ("ToolCalled(lookup)", True),
    ]
    assert (rescored.passed, rescored.runs[0].output, rescored.runs[0].tokens) == (
        True,
        report.runs[0].output,
        report.runs[0].tokens,
    )


async def test_llm_judge_judges_an_answer_once(agent: AgentDefinition[City, None]) -> None:
    """Repeated runs with the same answer ask the judge once; an empty rubric is refused."""
    judge_client = ScriptedClient([output_call(Verdict(passed=False, score=0.1, reason="Wrong city."))])
    judge = LLMJudge(rubric="Right city.", client=judge_client)
    judged = Dataset(cases=[Case(name="paris", prompt="Tell me about Paris")], evaluators=[judge])
    report = await run_evals(judged, agent, client=answering(PARIS), repeat=3)
    assert [run.scores[0].reason for run in report.runs] == ["Wrong city."] * 3
    assert len(judge_client.requests) == 1
    with pytest.raises(ValueError, match="empty rubric"):
        LLMJudge(rubric=" ")


def test_llm_judge_shares_one_judgement_between_concurrent_runs(agent: AgentDefinition[City, None]) -> None:
    """Runs judged at once with the same answer wait for one judgement, kept across event loops."""

    async def slow_judge(request: MessagesRequest) -> ScriptStep:
        await asyncio.sleep(0.02)
        return output_call(Verdict(passed=True, score=1.0, reason="Right."))

    judge_client = FunctionClient(slow_judge)
    judge = LLMJudge(rubric="Right city.", client=judge_client)
    judged = Dataset(cases=[Case(name="paris", prompt="Tell me about Paris")], evaluators=[judge])
    first = run_evals_sync(judged, agent, client=answering(PARIS), repeat=3, concurrency=3)
    second = run_evals_sync(judged, agent, client=answering(PARIS))
    assert [run.passed for run in [*first.runs, *second.runs]] == [True] * 4
    assert len(judge_client.requests) == 1


async def test_llm_judge_does_not_keep_a_failed_judgement(agent: AgentDefinition[City, None]) -> None:
    """A judgement that failed is asked again for the next run."""
    verdict = Verdict(passed=True, score=1.0, reason="Right.")
    judge_client = ScriptedClient([api_error(400, "bad"), output_call(verdict)])
    judge = LLMJudge(rubric="Right city.", client=judge_client)
    judged = Dataset(cases=[Case(name="paris", prompt="Tell me about Paris")], evaluators=[judge])
    report = await run_evals(judged, agent, client=answering(PARIS), repeat=2, concurrency=1)
    assert [run.passed for run in report.runs] == [False, True]
    assert len(judge_client.requests) == 2

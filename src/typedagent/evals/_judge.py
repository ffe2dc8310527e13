"""``LLMJudge``: an evaluator that is itself a typedagent agent, with a rubric and a typed ``Verdict``."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import pydantic
from pydantic import BaseModel, Field

from .._agent.definition import AgentDefinition, ValidationConfig, define_agent
from .._agent.output import OutputTool
from .._api.client import MessagesClient
from .._run.execute import execute_agent
from ._compare import plain
from ._score import EvalContext, Score

__all__ = ["LLMJudge", "Verdict"]

DEFAULT_JUDGE_MODEL = "claude-haiku-4-5"


class Verdict(BaseModel):
    """What the judge hands over: pass/fail, a score from 0 to 1 and the reason."""

    passed: bool = Field(description="Whether the answer meets the rubric.")
    score: float = Field(ge=0.0, le=1.0, description="How well it meets the rubric, from 0 (not at all) to 1.")
    reason: str = Field(min_length=1, description="One or two sentences: why, citing the answer.")


def _instructions(rubric: str) -> str:
    return (
        "You grade the answer an AI agent gave to a task, strictly by this rubric:\n\n"
        f"{rubric}\n\n"
        "Judge only what the rubric asks. The expected answer, when given, is a reference, not the only "
        "acceptable wording. Hand over your verdict with the record_verdict tool."
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class LLMJudge:
    """A model grades the output against a rubric; validated, retried and scriptable like any agent.

    The judge is an agent (``judge.agent``) whose output is a ``Verdict``; in tests, pass a
    ``ScriptedClient`` answering with ``output_call(Verdict(...))``. A judge that fails (an API error,
    no valid verdict) fails the run, with its error as the reason. Verdicts are kept for the judge's
    lifetime: the same task, answer and expected output (a repeated run that answered the same, a
    re-score) is judged once.
    """

    rubric: str
    """What a good answer does, in words the judge can apply."""
    model: str = DEFAULT_JUDGE_MODEL
    """The judge's model."""
    client: MessagesClient | None = field(default=None, compare=False)
    """The judge's client; None for the default (``AsyncAnthropic()``, or the one ``use_client`` sets)."""
    pass_at: float = 0.5
    """The least score that passes (the verdict's ``passed`` must be true too)."""
    label: str = "LLMJudge"
    """The name reports show."""
    agent: AgentDefinition[Verdict, None] = field(init=False, repr=False, compare=False)
    """The judge agent, built once from the rubric and model."""
    _verdicts: dict[str, asyncio.Future[Score]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.rubric, str) or not self.rubric.strip():
            raise ValueError("LLMJudge.rubric must say what a good answer does, got an empty rubric.")
        judge = define_agent(
            name="llm_judge",
            model=self.model,
            instructions=_instructions(self.rubric),
            output=OutputTool(Verdict, name="record_verdict", description="Record your verdict."),
            validation=ValidationConfig(max_attempts=2, max_iterations_per_attempt=2),
            max_tokens=1024,
        )
        object.__setattr__(self, "agent", judge)
        object.__setattr__(self, "_verdicts", {})

    @property
    def name(self) -> str:
        """The label."""
        return self.label

    def prompt(self, context: EvalContext[Any]) -> str:
        """What the judge reads: the task, the answer, and the expected answer when the case has one."""
        parts = [f"<task>\n{context.prompt}\n</task>", f"<answer>\n{_json(context.output)}\n</answer>"]
        if context.expected is not None:
            parts.append(f"<expected>\n{_json(context.expected)}\n</expected>")
        return "\n\n".join(parts)

    async def evaluate(self, context: EvalContext[Any], /) -> Score:
        """Ask the judge; an answer it already judged (the same task, answer and expected) is not asked again."""
        if context.output is None:
            return Score.check(self.name, False, f"no output: the execution failed with {context.error_code}")
        prompt = self.prompt(context)
        # One judgement per prompt, shared by runs judged at the same time; a failed one is not kept.
        pending = self._verdicts.get(prompt)
        if pending is None:
            pending = self._verdicts[prompt] = asyncio.ensure_future(self._ask(prompt))
        try:
            return await asyncio.shield(pending)
        except _JudgeFailed as failed:
            self._verdicts.pop(prompt, None)
            return failed.score

    async def _ask(self, prompt: str) -> Score:
        result = await execute_agent(self.agent, prompt, client=self.client)
        if result.ok is False:
            raise _JudgeFailed(Score.check(self.name, False, f"the judge failed: {result.error}"))
        verdict = result.output
        return Score(
            evaluator=self.name,
            passed=verdict.passed and verdict.score >= self.pass_at,
            value=verdict.score,
            reason=verdict.reason,
        )


class _JudgeFailed(Exception):
    def __init__(self, score: Score) -> None:
        super().__init__(score.reason)
        self.score = score


def _json(value: object) -> str:
    return json.dumps(pydantic.TypeAdapter(Any).dump_python(plain(value), mode="json"), indent=2, ensure_ascii=False)

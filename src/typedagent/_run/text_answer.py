"""The answer of a native or prompted agent: the text its turn ends with, read as JSON, then previewed or validated.

What tool mode does with an output call (``tool_batch``), done for a text answer: the same parse, validators and
feedback, with the feedback sent as a user message after the answer (there is no tool call to answer). In
reflection mode an answer is previewed and the model ends the attempt with ``submit``, which ``tool_batch``
validates as in tool mode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._agent.output import preview_text
from .._agent.validation import Verdict, parse_candidate
from .._shared.errors import AgentErrorCode
from .._shared.limits import Interrupted
from . import failures, feedback
from .attempt import Accepted, AttemptEnd, Failed, Rejected
from .hooks import AnswerPreview
from .json_text import read_json, turn_text
from .tool_call import reflect, validate

if TYPE_CHECKING:
    from anthropic.types import Message

    from .execution import Execution

__all__ = ["take_answer"]


async def take_answer(execution: Execution, response: Message) -> AttemptEnd | None:
    """Read the answer from the text that ended the turn, then preview it (reflection) or validate it.

    None when the attempt goes on: the answer was previewed, or (reflection) did not pass the schema and the model
    was told so. Text that holds no JSON object is a validation problem like any other.
    """
    agent = execution.agent
    attempt = execution.attempt
    text = turn_text(response.content)
    if text is None:
        problem = feedback.attempt_feedback(AgentErrorCode.INVALID_RESPONSE, agent)
        execution.conversation.add_user_text(problem)
        return Rejected(AgentErrorCode.INVALID_RESPONSE, (problem,))
    read = read_json(text, wrapped=agent.output.wrapped)
    # On a forced last turn an answer is validated as if submitted, as an output call is in tool mode.
    final = not agent.reflection_enabled or attempt.output_forced
    if read.value is not None:
        execution.last_output = read.value
    try:
        if final:
            return await _judge(execution, read.value, read.problem)
        return await _preview(execution, response.id, read.value, read.problem)
    except Interrupted as interruption:
        return execution.interrupted(interruption, "tool")


async def _judge(execution: Execution, raw: dict[str, Any] | None, problem: str | None) -> AttemptEnd:
    """Validate the answer (schema, then every validator): accepted, or every problem goes back to the model."""
    agent = execution.agent
    if raw is None:
        verdict = Verdict(None, (str(problem),))
    else:
        execution.attempt.candidate = raw
        verdict = await execution.guard.run(
            validate(agent.output, agent.validators, agent._validator_takes_ctx, raw, execution.context())
        )
    if verdict.crash is not None:
        return Failed(failures.validator_crash(execution.where(), verdict.crash))
    if verdict.valid:
        return Accepted(verdict.output)
    execution.conversation.add_user_text(feedback.rejection(agent.output, verdict.problems))
    return Rejected(AgentErrorCode.VALIDATION_FAILED, verdict.problems)


async def _preview(
    execution: Execution, response_id: str, raw: dict[str, Any] | None, problem: str | None
) -> Failed | None:
    """Reflection: keep a schema-valid answer as the candidate and show the model its preview; else say why not."""
    output = execution.agent.output
    attempt = execution.attempt
    parsed = Verdict(None, (str(problem),)) if raw is None else parse_candidate(output, raw)
    if parsed.crash is not None:
        return Failed(failures.validator_crash(execution.where(), parsed.crash))
    if not parsed.valid:
        attempt.schema_problems = parsed.problems
        shown = message = feedback.answer_not_kept(parsed.problems)
    else:
        attempt.candidate, attempt.schema_problems = raw, ()
        try:
            preview = await execution.guard.run(reflect(output, parsed.output))
        except Interrupted:
            raise
        except Exception as exc:
            shown = message = feedback.reflection_failed(failures.describe(exc), in_text=True)
        else:
            shown, warning = preview_text(output.name, preview)
            if warning is not None:
                execution.warn(warning)
            message = feedback.answer_preview(shown)
    execution.hooks.answer_preview(AnswerPreview(response_id=response_id, preview=shown))
    execution.conversation.add_user_text(message)
    return None

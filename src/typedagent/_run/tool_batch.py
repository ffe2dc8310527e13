"""One response's tool calls: helpers run together, then the output and submit calls, answered in one message."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from .._agent.output import SUBMIT_TOOL_NAME
from .._shared.decisions import Decision
from .._shared.errors import AgentErrorCode
from .._shared.events import ToolCall, ToolKind
from .._shared.limits import Interrupted
from . import failures, feedback
from .approval import apply_decision, external, hold_calls
from .attempt import Accepted, AttemptEnd, Failed, Paused, Rejected
from .reply import Reply
from .steps import steps
from .subrun import delegating
from .tool_call import call_tool, judge, preview_output

if TYPE_CHECKING:
    from .._agent.definition import AgentDefinition
    from .._agent.validation import ValidatorCrash
    from .execution import Execution
    from .toolbox import Toolbox

__all__ = ["answer_unrun", "finish_tool_batch", "resume_tool_batch", "run_tool_batch"]


async def run_tool_batch(execution: Execution, blocks: list[Any]) -> AttemptEnd | Paused | None:
    """Handle every ``tool_use`` block of a response; None when the attempt goes on.

    Every call is answered, in block order, in one user message, however the batch ends — unless some wait for a
    decision: then every other helper call runs, and the batch (output and submit calls included) is finished on
    resume.
    """
    replies = _replies(execution, blocks)
    if execution.hooks.listening:
        await _announce(execution, replies)
    runnable = 0
    for reply in replies:
        if reply.kind == "output":
            # Kept before anything runs: an interruption below must not lose what the model handed over.
            execution.last_output = dict(reply.block.input)
        elif reply.kind == "helper" and not external(execution, reply):
            runnable += 1
    stop = execution.limit_reached("tool") or execution.tool_calls_left(runnable)
    if stop is not None:
        await _answer_rest(execution, replies, feedback.STOPPED_BEFORE_TOOLS)
        return stop
    try:
        await execution.guard.run(_hold_and_run(execution, replies))
    except Interrupted as interruption:
        await _answer_rest(execution, replies, feedback.STOPPED_BEFORE_TOOLS, started=feedback.ABANDONED)
        return execution.interrupted(interruption, "tool")
    if any(reply.hold is not None for reply in replies):
        return Paused(replies)
    return await finish_tool_batch(execution, replies)


async def resume_tool_batch(
    execution: Execution, replies: list[Reply], decisions: Mapping[str, Decision]
) -> AttemptEnd | None:
    """Finish the batch a paused execution stopped in: apply the decisions, run the approved calls, then as above."""
    stop = execution.limit_reached("tool")
    if stop is not None:
        await _answer_rest(execution, replies, feedback.STOPPED_BEFORE_TOOLS)
        return stop
    try:
        await execution.guard.run(_decide_and_run(execution, replies, decisions))
    except Interrupted as interruption:
        await _answer_rest(execution, replies, feedback.STOPPED_BEFORE_TOOLS, started=feedback.ABANDONED)
        return execution.interrupted(interruption, "tool")
    return await finish_tool_batch(execution, replies)


async def finish_tool_batch(execution: Execution, replies: list[Reply]) -> AttemptEnd | None:
    """The output and submit calls (preview, validation), then every answer sent in one message."""
    end = None
    if _decides(replies):
        try:
            end = await execution.guard.run(_handle_outputs(execution, replies))
        except Interrupted as interruption:
            await _answer_rest(execution, replies, feedback.STOPPED_DURING_OUTPUT)
            return execution.interrupted(interruption, "tool")
    _send(execution, replies)
    if execution.hooks.listening:
        await _report(execution, replies)
    return end


def _decides(replies: list[Reply]) -> bool:
    """Whether the batch holds an output or submit call: helpers alone leave nothing to preview or validate."""
    return any(reply.kind == "output" or reply.kind == "submit" for reply in replies)


async def _hold_and_run(execution: Execution, replies: list[Reply]) -> None:
    if execution.toolbox.may_wait:
        await hold_calls(execution, replies)
    await _run_helpers(execution, replies)


async def _decide_and_run(execution: Execution, replies: list[Reply], decisions: Mapping[str, Decision]) -> None:
    for reply in replies:
        if reply.hold is not None:
            await apply_decision(execution, reply, decisions[reply.block.id])
    await _run_helpers(execution, replies)


async def answer_unrun(execution: Execution, blocks: list[Any], code: AgentErrorCode) -> None:
    """Answer the tool calls of a response whose stop reason ended the attempt (keeps the conversation valid)."""
    if blocks:
        replies = _replies(execution, blocks)
        if execution.hooks.listening:
            await _announce(execution, replies)
        await _answer_rest(execution, replies, feedback.not_run(code))


def _replies(execution: Execution, blocks: list[Any]) -> list[Reply]:
    """A reply to build for each call."""
    toolbox = execution.toolbox
    return [
        Reply(block, kind_of(execution.agent, toolbox, block.name), server=toolbox.server_of(block.name))
        for block in blocks
    ]


async def _announce(execution: Execution, replies: list[Reply]) -> None:
    """``on_tool_call`` for each call (only when something listens: the caller checks)."""
    for reply in replies:
        block = reply.block
        await execution.hooks.tool_call(
            ToolCall(id=block.id, name=block.name, input=block.input, kind=reply.kind, server=reply.server)
        )


def kind_of(agent: AgentDefinition[Any, Any], toolbox: Toolbox, name: str) -> ToolKind:
    """What a tool call addresses (native and prompted modes offer no output tool: a call of its name is not one)."""
    if name == agent.output.name and agent.output.mode == "tool":
        return "output"
    if name == SUBMIT_TOOL_NAME and agent.reflection_enabled:
        return "submit"
    return "helper" if toolbox.helper(name) is not None else "unknown"


async def _run_helpers(execution: Execution, batch: list[Reply]) -> None:
    """Run the helper calls of the batch that are ready: not answered yet, not waiting for a decision."""
    replies = [r for r in batch if r.kind in ("helper", "unknown") and not r.done and r.hold is None]
    if not replies:
        return
    toolbox = execution.toolbox
    execution.tool_calls += sum(r.kind == "helper" for r in replies)
    limit = execution.agent.max_tool_result_chars
    run_helper = steps().helper_call

    def call(reply: Reply) -> Awaitable[None]:
        # Each call's own context: an agent made a tool (``as_tool``) runs its sub-run for this call through it.
        ctx = delegating(execution, reply.block.id)
        helper = toolbox.helper(reply.block.name)
        return call_tool(reply, partial(run_helper, execution, reply, helper, ctx, limit))

    if len(replies) == 1 or any(getattr(toolbox.helper(r.block.name), "sequential", False) for r in replies):
        for reply in replies:
            await call(reply)
    else:
        await asyncio.gather(*(call(reply) for reply in replies))


async def _handle_outputs(execution: Execution, replies: list[Reply]) -> AttemptEnd | None:
    """Preview, pick and validate the output candidate; fill in every output and submit reply.

    Only decides: the caller sends the replies, so an interruption here never leaves half a turn.
    """
    agent = execution.agent
    attempt = execution.attempt
    outputs = [r for r in replies if r.kind == "output"]
    if agent.reflection_enabled:
        kept: Reply | None = None
        for reply in outputs:
            raw = dict(reply.block.input)
            execution.last_output = raw
            parsed = await call_tool(reply, partial(preview_output, reply, agent.output, raw, execution.warn))
            if parsed.crash is not None:
                return _validator_crash(execution, replies, reply, parsed.crash)
            if not parsed.valid:
                attempt.schema_problems = parsed.problems
            else:
                attempt.candidate, attempt.schema_problems, kept = raw, (), reply
        submits = [r for r in replies if r.kind == "submit"]
        if not submits and kept is not None and attempt.candidate is not None and attempt.output_forced:
            # The attempt's last turn: an output handed over then is validated as if submitted.
            return await _judge(execution, replies, kept, attempt.candidate)
        if not submits:
            return None
        judged = submits[-1]
        for reply in submits[:-1]:
            reply.answer(feedback.SUBMIT_SUPERSEDED)
        if attempt.candidate is None:
            problem = feedback.nothing_to_submit(agent)
            judged.answer(f"Error: {problem}", is_error=True)
            return Rejected(AgentErrorCode.SUBMIT_BEFORE_OUTPUT, (problem, *attempt.schema_problems))
    else:
        if not outputs:
            return None
        judged = outputs[-1]
        for reply in outputs[:-1]:
            reply.answer(feedback.superseded_output(agent))
        attempt.candidate = execution.last_output = dict(judged.block.input)
    return await _judge(execution, replies, judged, attempt.candidate)


async def _judge(execution: Execution, replies: list[Reply], judged: Reply, candidate: dict[str, Any]) -> AttemptEnd:
    agent = execution.agent
    ctx = execution.context()
    verdict = await call_tool(
        judged, partial(judge, judged, agent.output, agent.validators, agent._validator_takes_ctx, candidate, ctx)
    )
    if verdict.crash is not None:
        return _validator_crash(execution, replies, judged, verdict.crash)
    if not verdict.valid:
        return Rejected(AgentErrorCode.VALIDATION_FAILED, verdict.problems)
    return Accepted(verdict.output)


def _validator_crash(execution: Execution, replies: list[Reply], judged: Reply, crash: ValidatorCrash) -> Failed:
    """A validator (or the output model's own validation code) raised: fail at once, answering every call."""
    judged.answer(feedback.VALIDATOR_CRASHED, is_error=True)
    for reply in replies:
        if not reply.done:
            reply.answer(f"Error: {feedback.NOT_VALIDATED}", is_error=True)
    return Failed(failures.validator_crash(execution.where(), crash))


async def _answer_rest(execution: Execution, replies: list[Reply], content: str, *, started: str | None = None) -> None:
    """Answer every call not answered yet with an error result (``started`` for calls whose work began), then send.

    A call interrupted while it ran was abandoned, not skipped: the model is told so, since the tool may
    have had effects and may still finish in the background.
    """
    for reply in replies:
        if not reply.done:
            reply.answer(f"Error: {started if started and reply.started else content}", is_error=True)
    _send(execution, replies)
    if execution.hooks.listening:
        await _report(execution, replies)


def _send(execution: Execution, replies: list[Reply]) -> None:
    """Answer every tool_use of the response in one user message, in block order.

    Every result is capped here, in one place: results, previews and error texts (which carry exception
    messages from user code) alike.
    """
    limit = execution.agent.max_tool_result_chars
    results: list[dict[str, Any]] = []
    for reply in replies:
        reply.cap(limit)
        results.append(reply.param())
    execution.conversation.add_tool_results(results)


async def _report(execution: Execution, replies: list[Reply]) -> None:
    """``on_tool_result`` for every result sent (only when something listens: the caller checks)."""
    for reply in replies:
        await execution.hooks.tool_result(reply.event())

"""The loop: attempts → iterations → stop reason → tool batch → validation, as it is specified.

Each level is one function that reads top to bottom; the work below it lives in its own module: the model
call (``_api.model_call``), the stop-reason table (``stop_reasons``), the tool batch (``tool_batch``), the
answer of a native or prompted agent (``text_answer``), the execution's state (``execution``), pausing and
resuming (``pause``, ``resume``), the failures (``failures``) and the request (``request``). ``execute_agent()``
(``execute``) builds the execution and runs it here.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, cast

from .._api.api_errors import ApiFailure
from .._api.container import carry_container
from .._shared.errors import AgentError, AgentErrorCode
from .._shared.events import AttemptStart, ModelResponse, ValidationFailure
from .._shared.limits import Interrupted
from .._shared.results import TokenUsage
from . import failures, feedback
from .accounting import add_response_usage
from .attempt import Accepted, AttemptEnd, Failed, Paused, Rejected
from .caching import cached_request, placed
from .fallback import call_through_chain
from .history import process_history
from .observe import observers
from .pause import pause
from .request import build_system_prompt, last_iteration_params, refuses_forcing, request_params
from .server_calls import report_server_calls
from .stop_reasons import step_for
from .text_answer import take_answer
from .tool_batch import answer_unrun, resume_tool_batch, run_tool_batch
from .toolbox import ToolsetProblem, connect_toolsets

if TYPE_CHECKING:
    from anthropic.types import Message

    from .._shared.pausing import PausableResult
    from .execution import Execution
    from .resume import Resumed

__all__ = ["run"]


async def run(execution: Execution, resumed: Resumed | None = None) -> PausableResult[Any]:
    """The execution: its toolsets connected (when it has any) for the whole run (segment), then its attempts."""
    if not execution.agent.toolsets:
        return await _attempts(execution, resumed)
    async with AsyncExitStack() as stack:
        try:
            execution.toolbox = await execution.guard.run(connect_toolsets(execution.agent, execution.client, stack))
        except ToolsetProblem as problem:
            return execution.failure(_toolset_failure(execution, problem))
        except Interrupted as interruption:
            return execution.failure(execution.interrupted(interruption, "attempt").error)
        return await _attempts(execution, resumed)


async def _update_toolbox(execution: Execution, params: dict[str, Any]) -> Failed | None:
    """Before a model call (or a resumed batch): offer the connected toolsets' tools as they are now in ``params``."""
    if not execution.toolbox.connected:
        return None
    try:
        await execution.toolbox.update(params)
    except ToolsetProblem as problem:
        return Failed(_toolset_failure(execution, problem))
    cached_request(params, execution.agent.prompt_caching)  # the toolsets' tools count toward the cached prefix
    return None


def _toolset_failure(execution: Execution, problem: ToolsetProblem) -> AgentError:
    return failures.toolset_error(execution.where(), problem.toolset, problem.message, problem.__cause__)


async def _attempts(execution: Execution, resumed: Resumed | None) -> PausableResult[Any]:
    """Attempts: each ends accepted (success), failed (failure), or rejected (feedback, then the next one).

    A resumed execution goes on inside the attempt it paused in; any attempt may pause again.
    """
    agent = execution.agent
    max_attempts = agent.validation.max_attempts
    if not execution.params:
        execution.system = build_system_prompt(agent, execution.context())
        execution.params = request_params(agent, execution.system, execution.conversation.messages)
    first = 1
    if resumed is not None:
        await execution.hooks.resume(resumed.state)
        first = execution.attempt.number  # the paused attempt goes on, even past a max_attempts lowered since
    for number in range(first, max(first, max_attempts) + 1):
        if resumed is None:
            execution.start_attempt(number)
            if execution.guard.aborted():
                return execution.failure(failures.cancelled(execution.where(), "attempt"))
            if execution.hooks.listening:
                await execution.hooks.attempt_start(AttemptStart(attempt=number, max_attempts=max_attempts))
        end = await _run_attempt(execution, resumed)
        resumed = None
        if isinstance(end, Paused):
            return await pause(execution, end.replies)
        execution.end_attempt(end)
        observers.attempt_ended(execution.records[-1])
        match end:
            case Accepted(output=output):
                return execution.success(output)
            case Failed(error=error):
                return execution.failure(error)
            case Rejected(outcome=outcome, problems=problems):
                candidate = execution.attempt.candidate
                await execution.hooks.validation_failure(
                    ValidationFailure(attempt=number, outcome=outcome, errors=problems, candidate=candidate)
                )
    last = execution.records[-1]
    attempt_errors = [record.validation_errors for record in execution.records]
    return execution.failure(
        failures.no_valid_output(execution.where(), last.outcome, last.validation_errors, attempt_errors)
    )


async def _run_attempt(execution: Execution, resumed: Resumed | None) -> AttemptEnd | Paused:
    """Iterations: one model call each, until the attempt ends, pauses, or runs out of iterations.

    A resumed attempt first finishes the tool batch it paused in, with the decisions made meanwhile.
    """
    params = execution.params
    limit = execution.agent.validation.max_iterations_per_attempt
    if resumed is not None:
        problem = await _update_toolbox(execution, params)  # the paused batch may call a toolset's tools
        for reply in resumed.replies:
            reply.server = execution.toolbox.server_of(reply.block.name)
        finished = problem or await resume_tool_batch(execution, resumed.replies, resumed.decisions)
        if finished is not None:
            return finished
    while True:
        if execution.attempt.iteration >= limit:
            return Failed(failures.max_iterations(execution.where(), limit, execution.agent.output.name))
        stop = execution.limit_reached("iteration")
        if stop is None and execution.toolbox.connected:
            stop = await _update_toolbox(execution, params)
        if stop is not None:
            return stop
        execution.start_iteration()
        sent = _params_now(execution, params, limit)
        if execution.agent.history_processors:
            processed = await process_history(execution, sent)
            if isinstance(processed, Failed):
                return processed
            sent = processed
        sent = placed(sent, params, execution.markers)
        response = await call_through_chain(execution, sent)
        if isinstance(response, Failed):
            return response  # a limit reached between two models of the fallback chain
        if isinstance(response, Interrupted):
            return execution.interrupted(response, "iteration")
        if isinstance(response, ApiFailure):
            if execution.can_force and refuses_forcing(response, sent):
                _stop_forcing(execution, params)
                continue
            return Failed(failures.api_error(execution.where(), response, tuple(execution.fallback.tried)))
        carry_container(params, response)
        end = await _handle_response(execution, response)
        if end is not None:
            return end


def _stop_forcing(execution: Execution, params: dict[str, Any]) -> None:
    """The API refused a forced ``tool_choice`` for this model: let the model choose from now on, and say so.

    The refused call does not use up the attempt's iterations (it still counts in ``metadata.iterations``).
    """
    execution.can_force = False
    execution.attempt.iteration -= 1
    params["tool_choice"] = {"type": "auto"}
    execution.warn(
        f"the API refused a forced tool_choice for model {execution.agent.model!r} (some models always think, "
        "and thinking forbids forcing a tool); this execution sends tool_choice auto from now on, and the "
        "protocol note still asks for the output tool. Set model_settings thinking to avoid the refused call."
    )


def _params_now(execution: Execution, params: dict[str, Any], limit: int) -> dict[str, Any]:
    """This iteration's request: the execution's, or on the attempt's last iteration one that forces the output."""
    attempt = execution.attempt
    if attempt.iteration < limit or not execution.agent.validation.force_output_on_last_iteration:
        return params
    forced = last_iteration_params(
        execution.agent, params, execution.conversation, attempt.candidate is not None, can_force=execution.can_force
    )
    attempt.output_forced = forced is not None
    return params if forced is None else forced


async def _handle_response(execution: Execution, response: Message) -> AttemptEnd | Paused | None:
    """Keep the response, then do what its stop reason says; None when the attempt goes on."""
    usage = add_response_usage(execution, response.usage, execution.fallback.answered)
    execution.conversation.add_response(response)
    if execution.hooks.listening:
        event = ModelResponse(message=response, stop_reason=response.stop_reason, usage=usage)
        await execution.hooks.model_response(event)
        await report_server_calls(execution, response)
    tool_uses = [block for block in response.content if block.type == "tool_use"]
    step = step_for(response.stop_reason, bool(tool_uses), answers_in_text=execution.agent.output.mode != "tool")
    match step.kind:
        case "run_tools":
            return await run_tool_batch(execution, tool_uses)
        case "take_answer":
            return await take_answer(execution, response)
        case "resume":
            return None  # the assistant turn stays last; the next response continues it
        case "end_attempt":
            code = cast("AgentErrorCode", step.code)
            await answer_unrun(execution, tool_uses, code)
            problem = feedback.attempt_feedback(code, execution.agent)
            execution.conversation.add_user_text(problem)
            return Rejected(code, (problem,))
        case "fail":
            code = cast("AgentErrorCode", step.code)
            await answer_unrun(execution, tool_uses, code)
            return Failed(_stop_failure(execution, code, response, usage))


def _stop_failure(execution: Execution, code: AgentErrorCode, response: Message, usage: TokenUsage) -> AgentError:
    where = execution.where()
    if code is AgentErrorCode.REFUSAL:
        text = "".join(getattr(b, "text", "") for b in response.content if b.type == "text")
        return failures.refusal(where, text, tuple(execution.fallback.tried))
    if code is AgentErrorCode.CONTEXT_WINDOW_EXCEEDED:
        return failures.context_window(where, usage.input_tokens)
    return failures.unknown_stop_reason(where, response.stop_reason)

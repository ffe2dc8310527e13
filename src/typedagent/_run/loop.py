"""``execute_agent()``: attempts → iterations → stop reason → tool batch → validation, as the loop is specified.

Each level is one function that reads top to bottom; the work below it lives in its own module: the model
call (``_api.model_call``), the stop-reason table (``stop_reasons``), the tool batch (``tool_batch``), the
execution's state (``execution``), the failures (``failures``) and the request (``request``).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, cast, overload

from typing_extensions import TypeVar

from .._agent.definition import AgentDefinition
from .._api.api_errors import ApiFailure
from .._api.client import CLIENT_IN_CONTEXT, MessagesClient, close_client, default_client
from .._api.container import carry_container
from .._api.model_call import call_model
from .._shared.errors import AgentError, AgentErrorCode
from .._shared.events import AttemptStart, ExecuteCallbacks, ModelResponse, ValidationFailure
from .._shared.limits import AbortEvent, ExecutionLimits, Guard, Interrupted
from .._shared.results import ExecuteResult, TokenUsage
from . import failures, feedback
from .arguments import MISSING, check_arguments
from .attempt import Accepted, AttemptEnd, Failed, Rejected
from .caching import cached_request, placed
from .conversation import Conversation
from .execution import Execution
from .observe import observers
from .request import build_messages, build_system_prompt, last_iteration_params, refuses_forcing, request_params
from .server_calls import report_server_calls
from .stop_reasons import step_for
from .tool_batch import answer_unrun, run_tool_batch
from .toolbox import ToolsetProblem, connect_toolsets

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, Message, MessageParam

__all__ = ["execute_agent"]

OutputT = TypeVar("OutputT")
DepsT = TypeVar("DepsT")


async def _run(execution: Execution) -> ExecuteResult[Any]:
    """The execution: its toolsets connected (when it has any) for the whole run, then its attempts."""
    if not execution.agent.toolsets:
        return await _attempts(execution)
    async with AsyncExitStack() as stack:
        try:
            execution.toolbox = await execution.guard.run(connect_toolsets(execution.agent, execution.client, stack))
        except ToolsetProblem as problem:
            return execution.failure(_toolset_failure(execution, problem))
        except Interrupted as interruption:
            return execution.failure(execution.interrupted(interruption, "attempt").error)
        return await _attempts(execution)


def _toolset_failure(execution: Execution, problem: ToolsetProblem) -> AgentError:
    return failures.toolset_error(execution.where(), problem.toolset, problem.message, problem.__cause__)


async def _attempts(execution: Execution) -> ExecuteResult[Any]:
    """Attempts: each ends accepted (success), failed (failure), or rejected (feedback, then the next one)."""
    agent = execution.agent
    max_attempts = agent.validation.max_attempts
    params = request_params(agent, build_system_prompt(agent, execution.context()), execution.conversation.messages)
    attempt_errors: list[tuple[str, ...]] = []
    for number in range(1, max_attempts + 1):
        attempt = execution.start_attempt(number)
        if execution.guard.aborted():
            return execution.failure(failures.cancelled(execution.where(), "attempt"))
        await execution.hooks.attempt_start(AttemptStart(attempt=number, max_attempts=max_attempts))
        end = await _run_attempt(execution, params)
        execution.end_attempt(end)
        observers.attempt_ended(execution.records[-1])
        match end:
            case Accepted(output=output):
                return execution.success(output)
            case Failed(error=error):
                return execution.failure(error)
            case Rejected(outcome=outcome, problems=problems):
                attempt_errors.append(problems)
                await execution.hooks.validation_failure(
                    ValidationFailure(attempt=number, outcome=outcome, errors=problems, candidate=attempt.candidate)
                )
    last = execution.records[-1]
    return execution.failure(
        failures.no_valid_output(execution.where(), last.outcome, last.validation_errors, attempt_errors)
    )


async def _run_attempt(execution: Execution, params: dict[str, Any]) -> AttemptEnd:
    """Iterations: one model call each, until the attempt ends or runs out of iterations."""
    limit = execution.agent.validation.max_iterations_per_attempt
    while True:
        if execution.attempt.iteration >= limit:
            return Failed(failures.max_iterations(execution.where(), limit, execution.agent.output.name))
        stop = execution.limit_reached("iteration")
        if stop is not None:
            return stop
        if execution.toolbox.connected:
            try:
                await execution.toolbox.update(params)
            except ToolsetProblem as problem:
                return Failed(_toolset_failure(execution, problem))
            cached_request(params, execution.agent.prompt_caching)  # the toolsets' tools count toward the prefix
        execution.start_iteration()
        sent = placed(_params_now(execution, params, limit), params)
        response = await observers.model_call(
            execution, sent, call_model(execution.client, sent, execution.guard, execution.observer)
        )
        if isinstance(response, Interrupted):
            return execution.interrupted(response, "iteration")
        if isinstance(response, ApiFailure):
            execution.account_failed_call(response)
            if execution.can_force and refuses_forcing(response, sent):
                _stop_forcing(execution, params)
                continue
            return Failed(failures.api_error(execution.where(), response))
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


async def _handle_response(execution: Execution, response: Message) -> AttemptEnd | None:
    """Keep the response, then do what its stop reason says; None when the attempt goes on."""
    usage = execution.add_response_usage(response.usage)
    execution.answered_by(response.model)
    execution.conversation.add_response(response)
    await execution.hooks.model_response(ModelResponse(message=response, stop_reason=response.stop_reason, usage=usage))
    await report_server_calls(execution, response)
    tool_uses = [block for block in response.content if block.type == "tool_use"]
    step = step_for(response.stop_reason, bool(tool_uses))
    match step.kind:
        case "run_tools":
            return await run_tool_batch(execution, tool_uses)
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
        return failures.refusal(where, "".join(getattr(b, "text", "") for b in response.content if b.type == "text"))
    if code is AgentErrorCode.CONTEXT_WINDOW_EXCEEDED:
        return failures.context_window(where, usage.input_tokens)
    return failures.unknown_stop_reason(where, response.stop_reason)


@overload
async def execute_agent(
    agent: AgentDefinition[OutputT, None],
    prompt: str | Sequence[ContentBlockParam],
    *,
    deps: None = None,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    message_history: Sequence[MessageParam] | None = None,
) -> ExecuteResult[OutputT]: ...
@overload
async def execute_agent(
    agent: AgentDefinition[OutputT, DepsT],
    prompt: str | Sequence[ContentBlockParam],
    *,
    deps: DepsT,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    message_history: Sequence[MessageParam] | None = None,
) -> ExecuteResult[OutputT]: ...
async def execute_agent(
    agent: AgentDefinition[OutputT, Any],
    prompt: str | Sequence[ContentBlockParam],
    *,
    deps: Any = MISSING,
    client: MessagesClient | None = None,
    abort_event: AbortEvent | None = None,
    callbacks: ExecuteCallbacks | None = None,
    limits: ExecutionLimits | None = None,
    message_history: Sequence[MessageParam] | None = None,
) -> ExecuteResult[OutputT]:
    """Run an agent until it hands over a valid output or a limit is hit.

    It never raises for run-time failures: API errors, limits, cancellation by ``abort_event`` and
    validation failures come back as ``ExecuteFailure``. Task cancellation
    (``asyncio.CancelledError``) propagates.

    Args:
        agent: The agent, from ``define_agent()``.
        prompt: The user's input: a string or a list of content blocks (text, images, documents).
        deps: Run-time dependencies for tools, validators and instructions (required when the agent
            declares ``deps_type``).
        client: Anything with an async ``messages.create``; default: the client of an enclosing
            ``typedagent.testing.use_client(...)``, else ``AsyncAnthropic()``.
        abort_event: A ``threading.Event`` or ``asyncio.Event``; setting it cancels the execution,
            interrupting an API call or tool in flight within 100 ms.
        callbacks: Observability hooks.
        limits: Token budget and wall-clock timeout.
        message_history: Earlier Messages API turns to continue from (e.g. a previous
            ``metadata.messages``).

    Returns:
        ``ExecuteSuccess`` with the typed output, or ``ExecuteFailure`` with an ``AgentError``.

    Raises:
        TypeError: wrong argument types (a programming error), before anything is sent.
        ValueError: ``message_history`` ends with a ``tool_use`` that has no ``tool_result``, or
            ``limits.max_cost_usd`` is set for a model typedagent has no price for.
    """
    check_arguments(agent, prompt, deps, limits, callbacks, message_history, client, abort_event)
    limits = limits if limits is not None else ExecutionLimits()
    # Built (and the SDK imported) before the guard starts the deadline's clock: it measures the run.
    given = client if client is not None else CLIENT_IN_CONTEXT.get()
    chosen = given if given is not None else default_client()
    execution = Execution(
        agent=agent,
        client=chosen,
        deps=None if deps is MISSING else deps,
        limits=limits,
        guard=Guard(abort_event, limits.timeout_s),
        conversation=Conversation(cast("list[dict[str, Any]]", build_messages(prompt, message_history))),
        callbacks=callbacks,
    )
    if given is not None:
        return await observers.execution(execution, _run)
    try:
        return await observers.execution(execution, _run)
    finally:
        # The default client is this execution's own: close its connection pool rather than leak it.
        await close_client(execution.client)

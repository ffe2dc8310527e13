"""``execute_agent()``: attempts → iterations → tool batch → validation, as SPEC §5 reads."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, cast, overload

import pydantic
from typing_extensions import TypeVar

from ._callbacks import (
    EXECUTION_KEY,
    AttemptStart,
    ExecuteCallbacks,
    ExecutionState,
    ModelResponse,
    ToolCall,
    ToolKind,
    ToolResult,
    ValidationFailure,
    invoke_callback,
)
from ._client import MessagesClient, check_response, close_client, default_client, describe_api_error
from ._context import RunContext
from ._definition import AgentDefinition
from ._errors import (
    AgentError,
    AgentErrorCode,
    ApiErrorContext,
    AttemptErrorsContext,
    CancelledContext,
    ContextWindowContext,
    ErrorContext,
    MaxIterationsContext,
    Phase,
    RefusalContext,
    TimeoutContext,
    TokenBudgetContext,
    ValidatorErrorContext,
    safe_str,
)
from ._limits import AbortEvent, ExecutionLimits, Guard, Interrupted, Overran, within
from ._output import SUBMIT_TOOL_NAME
from ._prompt import build_messages, build_system_prompt
from ._results import (
    AttemptOutcome,
    AttemptRecord,
    CallbackError,
    ExecuteFailure,
    ExecuteResult,
    ExecuteSuccess,
    ExecutionMetadata,
    TokenUsage,
)
from ._tools import InvalidToolInput, call_maybe_async, render_result, truncate
from ._validation import ValidatorCrash, Verdict, parse_candidate, validate_candidate

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, Message, MessageParam

__all__ = ["execute_agent", "execute_agent_sync"]

OutputT = TypeVar("OutputT", bound=pydantic.BaseModel)
DepsT = TypeVar("DepsT")

ACCEPTED: Final = "Output accepted."


class _Missing:
    def __repr__(self) -> str:
        return "<not passed>"


MISSING: Final = _Missing()


@dataclass(slots=True)
class _AttemptEnd:
    """How ``_run_attempt`` ended: a success, a recoverable outcome, or a fatal failure."""

    outcome: AttemptOutcome
    problems: tuple[str, ...] = ()
    output: pydantic.BaseModel | None = None
    failure: AgentError | None = None


@dataclass(slots=True)
class _Reply:
    """One ``tool_result`` being built for one ``tool_use`` block."""

    block: Any
    kind: ToolKind
    content: str = ""
    is_error: bool = False
    duration_ms: float = 0.0
    done: bool = False

    def param(self) -> dict[str, Any]:
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": self.block.id, "content": self.content}
        if self.is_error:
            result["is_error"] = True
        return result


@dataclass(slots=True)
class _Run:
    """The mutable state of one execution. Private: results expose frozen snapshots only."""

    agent: AgentDefinition[Any, Any]
    client: MessagesClient
    deps: Any
    callbacks: ExecuteCallbacks | None
    limits: ExecutionLimits
    guard: Guard
    messages: list[dict[str, Any]]
    started: float = field(default_factory=time.perf_counter)
    params: dict[str, Any] = field(default_factory=dict)
    tokens: TokenUsage = field(default_factory=TokenUsage)
    iterations: int = 0
    attempt: int = 0
    iteration: int = 0
    attempt_tokens: TokenUsage = field(default_factory=TokenUsage)
    candidate: dict[str, Any] | None = None
    schema_problems: tuple[str, ...] = ()
    last_output: dict[str, Any] | None = None
    records: list[AttemptRecord] = field(default_factory=list)
    callback_errors: list[CallbackError] = field(default_factory=list)

    async def execute(self) -> ExecuteResult[Any]:
        self.params = self._request_params()
        attempt_errors: list[tuple[str, ...]] = []
        end = _AttemptEnd(AttemptOutcome.SUCCESS)
        for attempt in range(1, self.agent.validation.max_attempts + 1):
            self.attempt, self.iteration, self.attempt_tokens, self.candidate = attempt, 0, TokenUsage(), None
            self.schema_problems = ()
            if self.guard.aborted():
                return self._failure(self._cancelled("attempt"))
            await self._fire(
                "on_attempt_start", AttemptStart(attempt=attempt, max_attempts=self.agent.validation.max_attempts)
            )
            end = await self._run_attempt()
            self._record(end)
            if end.output is not None:
                return ExecuteSuccess(output=end.output, metadata=self._metadata())
            if end.failure is not None:
                return self._failure(end.failure)
            attempt_errors.append(end.problems)
            await self._fire(
                "on_validation_failure",
                ValidationFailure(attempt=attempt, outcome=end.outcome, errors=end.problems, candidate=self.candidate),
            )
        code = AgentErrorCode(end.outcome.value)
        return self._failure(
            self._error(
                code,
                f"No valid output after {len(attempt_errors)} attempt(s); the last ended with {code}: "
                f"{'; '.join(end.problems)}. {_ADVICE[code]}",
                AttemptErrorsContext(attempt_errors=tuple(attempt_errors)),
            )
        )

    async def _run_attempt(self) -> _AttemptEnd:
        max_iterations = self.agent.validation.max_iterations_per_attempt
        while True:
            if self.iteration >= max_iterations:
                return self._fatal(
                    AgentErrorCode.MAX_ITERATIONS,
                    f"Attempt {self.attempt} used all {max_iterations} iterations without handing over an output. "
                    "Raise ValidationConfig.max_iterations_per_attempt, or tell the model in the instructions to call "
                    f"{self.agent.output.name!r} sooner.",
                    MaxIterationsContext(
                        attempt=self.attempt, iteration_count=self.iteration, max_iterations=max_iterations
                    ),
                )
            stop = self._check_limits("iteration")
            if stop is not None:
                return stop
            self.iteration += 1
            self.iterations += 1
            try:
                response = check_response(await self.guard.run(self.client.messages.create(**self.params)))
            except Interrupted as interrupted:
                return _AttemptEnd(_outcome_of(interrupted), failure=self._interrupted(interrupted, "iteration"))
            except AssertionError:
                raise  # a test double's script disagrees with the run: a test bug, not a run-time failure
            except Exception as exc:
                return self._api_failure(exc)
            end = await self._handle_response(response)
            if end is not None:
                return end

    async def _handle_response(self, response: Message) -> _AttemptEnd | None:
        usage = TokenUsage.from_usage(response.usage)
        self.tokens += usage
        self.attempt_tokens += usage
        self._append_assistant(response)
        stop_reason = response.stop_reason
        await self._fire("on_model_response", ModelResponse(message=response, stop_reason=stop_reason, usage=usage))
        tool_uses = [block for block in response.content if block.type == "tool_use"]

        if stop_reason == "max_tokens":
            await self._answer_unrun(tool_uses, "not run: the response was cut off at max_tokens.")
            feedback = (
                f"Your response was cut off at max_tokens ({self.agent.max_tokens}). Respond more briefly and call "
                f"{self.agent.output.name!r} with the complete output."
            )
            self._add_user_text(feedback)
            return _AttemptEnd(AttemptOutcome.MAX_TOKENS, problems=(feedback,))
        if stop_reason == "refusal":
            await self._answer_unrun(tool_uses, "not run: the model refused.")
            text = _text_of(response)
            return self._fatal(
                AgentErrorCode.REFUSAL,
                "The model refused to answer. Rephrase the prompt or instructions; retrying the same input "
                f"is unlikely to help.{f' Model said: {text!r}' if text else ''}",
                RefusalContext(attempt=self.attempt, iteration=self.iteration, text=text),
            )
        if stop_reason == "model_context_window_exceeded":
            await self._answer_unrun(tool_uses, "not run: the context window was exceeded.")
            return self._fatal(
                AgentErrorCode.CONTEXT_WINDOW_EXCEEDED,
                "The conversation no longer fits the model's context window. Shorten the prompt or history, "
                "lower max_tool_result_chars, or use a model with a larger window.",
                ContextWindowContext(attempt=self.attempt, iteration=self.iteration, input_tokens=usage.input_tokens),
            )
        if tool_uses:
            return await self._run_tools(tool_uses)
        if stop_reason == "pause_turn":
            return None  # the assistant turn stays last; the next response continues it
        feedback = (
            f"You replied without calling a tool. Call {self.agent.output.name!r} with your output"
            f"{' and then submit' if self.agent.reflection_enabled else ''}; do not answer in plain text."
        )
        self._add_user_text(feedback)
        return _AttemptEnd(AttemptOutcome.INVALID_RESPONSE, problems=(feedback,))

    async def _run_tools(self, tool_uses: list[Any]) -> _AttemptEnd | None:
        replies = [_Reply(block, self._kind(block.name)) for block in tool_uses]
        for reply in replies:
            block = reply.block
            await self._fire("on_tool_call", ToolCall(id=block.id, name=block.name, input=block.input, kind=reply.kind))

        stop = self._check_limits("tool")
        if stop is not None:
            await self._answer(replies, "not run: the execution stopped before this tool ran.")
            return stop
        try:
            await self.guard.run(self._run_helpers([r for r in replies if r.kind in ("helper", "unknown")]))
        except Interrupted as interrupted:
            await self._answer(replies, "not run: the execution stopped while tools were running.")
            return _AttemptEnd(_outcome_of(interrupted), failure=self._interrupted(interrupted, "tool"))

        try:
            end = await self.guard.run(self._handle_outputs(replies))
        except Interrupted as interrupted:
            await self._answer(replies, "not run: the execution stopped while the output was being checked.")
            return _AttemptEnd(_outcome_of(interrupted), failure=self._interrupted(interrupted, "tool"))
        await self._send(replies)
        return end

    async def _run_helpers(self, replies: list[_Reply]) -> None:
        if not replies:
            return
        sequential = any(getattr(self.agent.helper(r.block.name), "sequential", False) for r in replies)
        if sequential or len(replies) == 1:
            for reply in replies:
                await self._run_helper(reply)
        else:
            await asyncio.gather(*(self._run_helper(reply) for reply in replies))

    async def _run_helper(self, reply: _Reply) -> None:
        block = reply.block
        helper = self.agent.helper(block.name)
        if helper is None:
            reply.content, reply.is_error, reply.done = f"Error: Unknown tool {block.name}", True, True
            return
        started = time.perf_counter()
        try:
            call = helper.invoke(block.input, self._context())
            value = await (call if helper.timeout_s is None else within(call, helper.timeout_s))
            reply.content = render_result(value)
        except InvalidToolInput as exc:
            reply.content, reply.is_error = f"Error: {exc}", True
        except Overran:
            reply.content = f"Error: tool {block.name!r} did not finish within {helper.timeout_s} s and was abandoned."
            reply.is_error = True
        except Exception as exc:
            reply.content, reply.is_error = f"Error: {_describe(exc)}", True
        reply.duration_ms = (time.perf_counter() - started) * 1000
        reply.done = True

    async def _handle_outputs(self, replies: list[_Reply]) -> _AttemptEnd | None:
        """Preview, pick and validate the output candidate; fill in every output/submit reply.

        Only decides: the caller sends the replies, so an interruption here never leaves half a turn.
        """
        agent = self.agent
        outputs = [r for r in replies if r.kind == "output"]
        submits = [r for r in replies if r.kind == "submit"]
        if agent.reflection_enabled:
            for reply in outputs:
                crash = await self._reflect(reply)
                if crash is not None:
                    return self._validator_crash(replies, reply, crash)
            if not submits:
                return None
            judged = submits[-1]
            for reply in submits[:-1]:
                reply.content, reply.done = (
                    "Submit received; the last submit call of this response is the one validated.",
                    True,
                )
            if self.candidate is None:
                problem = (
                    f"Nothing to submit: call {agent.output.name!r} with your output first "
                    "(it must pass the schema), then call submit."
                )
                judged.content, judged.is_error, judged.done = f"Error: {problem}", True, True
                return _AttemptEnd(AttemptOutcome.SUBMIT_BEFORE_OUTPUT, problems=(problem, *self.schema_problems))
        else:
            if not outputs:
                return None
            judged = outputs[-1]
            for reply in outputs[:-1]:
                reply.content = f"Superseded: only the last {agent.output.name!r} call of a response is validated."
                reply.done = True
            self.candidate = self.last_output = dict(judged.block.input)
        return await self._judge(replies, judged)

    async def _reflect(self, reply: _Reply) -> ValidatorCrash | None:
        """Reflection mode: parse the output call; a valid one becomes the candidate and is previewed."""
        started = time.perf_counter()
        raw = dict(reply.block.input)
        self.last_output = raw
        parsed = parse_candidate(self.agent.output.schema, raw)
        if parsed.crash is not None:
            return parsed.crash
        if parsed.output is None:
            self.schema_problems = parsed.problems
            reply.content = _rejection(self.agent, parsed.problems, early=True)
            reply.is_error = True
        else:
            self.candidate, self.schema_problems = raw, ()
            handler = self.agent.output.reflection_handler
            try:
                preview = await call_maybe_async(handler, parsed.output)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
                reply.content = str(preview)
            except Exception as exc:
                reply.content = (
                    f"Error: the reflection handler failed ({_describe(exc)}). Your output was kept as the "
                    "candidate; call submit to have it validated, or call the output tool again to change it."
                )
                reply.is_error = True
        reply.duration_ms = (time.perf_counter() - started) * 1000
        reply.done = True
        return None

    async def _judge(self, replies: list[_Reply], judged: _Reply) -> _AttemptEnd:
        """Validate the candidate; the call that handed it over carries the verdict."""
        assert self.candidate is not None
        agent = self.agent
        started = time.perf_counter()
        verdict: Verdict = await validate_candidate(
            agent.output.schema, agent.validators, agent._validator_takes_ctx, self.candidate, self._context()
        )
        judged.duration_ms += (time.perf_counter() - started) * 1000
        judged.done = True
        if verdict.crash is not None:
            return self._validator_crash(replies, judged, verdict.crash)
        if verdict.output is None:
            judged.content, judged.is_error = _rejection(agent, verdict.problems, early=False), True
            return _AttemptEnd(AttemptOutcome.VALIDATION_FAILED, problems=verdict.problems)
        judged.content = ACCEPTED
        return _AttemptEnd(AttemptOutcome.SUCCESS, output=verdict.output)

    def _validator_crash(self, replies: list[_Reply], judged: _Reply, crash: ValidatorCrash) -> _AttemptEnd:
        """A validator (or the output model's own validation code) raised: fail at once, answering every call."""
        judged.content, judged.is_error, judged.done = (
            "Error: the output could not be validated (a validator crashed).",
            True,
            True,
        )
        for reply in replies:
            if not reply.done:
                reply.content, reply.is_error = "Error: not run: the output could not be validated.", True
        return self._fatal(
            AgentErrorCode.VALIDATOR_ERROR,
            f"Validator {crash.validator!r} raised {type(crash.error).__name__}: {_describe(crash.error)}. "
            "Validators reject an output by raising OutputRejected (or, inside a pydantic model, ValueError); "
            "anything else is a bug in the validator. Fix it and run again.",
            ValidatorErrorContext(
                validator=crash.validator, error_type=type(crash.error).__name__, attempt=self.attempt
            ),
            cause=crash.error,
        )

    # -- conversation --------------------------------------------------------------------------

    def _append_assistant(self, response: Message) -> None:
        content = [_block_param(block) for block in response.content]
        if not content:
            # The API now and then answers with no blocks at all (end_turn), but rejects an empty
            # assistant turn sent back: there is nothing to keep, so keep nothing.
            return
        last = self.messages[-1] if self.messages else None
        if last is not None and last["role"] == "assistant":
            # A paused turn (or a prefilled history) is continued, not repeated: extend it. The old
            # dict is replaced, never mutated, since clients may still hold it.
            previous = last["content"]
            blocks = [{"type": "text", "text": previous}] if isinstance(previous, str) else list(previous)
            self.messages[-1] = {"role": "assistant", "content": [*blocks, *content]}
        else:
            self.messages.append({"role": "assistant", "content": content})

    async def _send(self, replies: list[_Reply]) -> None:
        """Answer every tool_use of the response in one user message, in block order.

        Every result is capped here, in one place: results, previews and error texts (which carry
        exception messages from user code) alike.
        """
        limit = self.agent.max_tool_result_chars
        for reply in replies:
            reply.content = truncate(reply.content, limit)
        self.messages.append({"role": "user", "content": [reply.param() for reply in replies]})
        for reply in replies:
            block = reply.block
            await self._fire(
                "on_tool_result",
                ToolResult(
                    id=block.id,
                    name=block.name,
                    content=reply.content,
                    is_error=reply.is_error,
                    duration_ms=reply.duration_ms,
                ),
            )

    async def _answer(self, replies: list[_Reply], content: str) -> None:
        """Answer every call not answered yet with an error result, then send them all."""
        for reply in replies:
            if not reply.done:
                reply.content, reply.is_error = f"Error: {content}", True
        await self._send(replies)

    async def _answer_unrun(self, tool_uses: list[Any], content: str) -> None:
        """Answer tool calls of a response that ends the attempt without running them (keeps the conversation valid)."""
        replies = [_Reply(block, self._kind(block.name)) for block in tool_uses]
        for reply in replies:
            block = reply.block
            await self._fire("on_tool_call", ToolCall(id=block.id, name=block.name, input=block.input, kind=reply.kind))
        if replies:
            await self._answer(replies, content)

    def _add_user_text(self, text: str) -> None:
        last = self.messages[-1]
        if last["role"] == "user":
            content = last["content"]
            # A plain-string prompt is still last when the model's turn was empty (nothing appended).
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            self.messages[-1] = {"role": "user", "content": [*blocks, {"type": "text", "text": text}]}
        else:
            self.messages.append({"role": "user", "content": [{"type": "text", "text": text}]})

    # -- bookkeeping ---------------------------------------------------------------------------

    def _kind(self, name: str) -> ToolKind:
        if name == self.agent.output.name:
            return "output"
        if name == SUBMIT_TOOL_NAME and self.agent.reflection_enabled:
            return "submit"
        return "helper" if self.agent.helper(name) is not None else "unknown"

    def _request_params(self) -> dict[str, Any]:
        agent = self.agent
        params: dict[str, Any] = {
            "model": agent.model,
            "max_tokens": agent.max_tokens,
            "system": build_system_prompt(agent, self._context()),
            "tools": list(agent._tool_params),  # frozen at definition time; clients do not mutate params
            "tool_choice": {"type": "auto" if _thinking_on(agent.model_settings) else "any"},
            "messages": self.messages,
            **agent.model_settings,
        }
        if agent.prompt_caching:
            params["cache_control"] = {"type": "ephemeral"}
        return params

    def _context(self) -> RunContext[Any]:
        return RunContext(
            deps=self.deps,
            agent_name=self.agent.name,
            model=self.agent.model,
            attempt=self.attempt,
            iteration=self.iteration,
            tokens=self.tokens,
        )

    def _check_limits(self, phase: Phase) -> _AttemptEnd | None:
        if self.guard.aborted():
            return _AttemptEnd(AttemptOutcome.EXECUTION_CANCELLED, failure=self._cancelled(phase))
        if self.guard.timed_out():
            return _AttemptEnd(AttemptOutcome.TIMEOUT, failure=self._timeout(phase))
        budget = self.limits.max_total_tokens
        if phase == "iteration" and budget is not None and self.tokens.total >= budget:
            return self._fatal(
                AgentErrorCode.TOKEN_BUDGET_EXCEEDED,
                f"The token budget of {budget} was reached ({self.tokens.total} tokens used). Raise "
                "ExecutionLimits.max_total_tokens or shorten the prompt, tool results or attempts.",
                TokenBudgetContext(
                    max_total_tokens=budget,
                    total_tokens=self.tokens.total,
                    attempt=self.attempt,
                    iteration=self.iteration,
                ),
            )
        return None

    def _interrupted(self, interrupted: Interrupted, phase: Phase) -> AgentError:
        return self._cancelled(phase) if interrupted.reason == "abort" else self._timeout(phase)

    def _cancelled(self, phase: Phase) -> AgentError:
        return self._error(
            AgentErrorCode.EXECUTION_CANCELLED,
            f"The execution was cancelled by its abort event (during phase {phase!r}).",
            CancelledContext(phase=phase, attempt=self.attempt, iteration=self.iteration),
        )

    def _timeout(self, phase: Phase) -> AgentError:
        timeout = self.limits.timeout_s
        assert timeout is not None
        return self._error(
            AgentErrorCode.TIMEOUT,
            f"The execution passed its {timeout} s deadline (during phase {phase!r}). Raise "
            "ExecutionLimits.timeout_s or lower max_iterations_per_attempt / max_attempts.",
            TimeoutContext(timeout_s=timeout, phase=phase, attempt=self.attempt, iteration=self.iteration),
        )

    def _api_failure(self, exc: Exception) -> _AttemptEnd:
        status, error_type, request_id, advice = describe_api_error(exc)
        return self._fatal(
            AgentErrorCode.API_ERROR,
            f"The Messages API call failed ({error_type}{f', HTTP {status}' if status else ''}): "
            f"{_describe(exc)} {advice}",
            ApiErrorContext(
                status_code=status,
                error_type=error_type,
                request_id=request_id,
                attempt=self.attempt,
                iteration=self.iteration,
            ),
            cause=exc,
        )

    def _fatal(
        self, code: AgentErrorCode, message: str, context: ErrorContext, cause: BaseException | None = None
    ) -> _AttemptEnd:
        return _AttemptEnd(AttemptOutcome(code.value), failure=self._error(code, message, context, cause))

    def _error(
        self, code: AgentErrorCode, message: str, context: ErrorContext, cause: BaseException | None = None
    ) -> AgentError:
        return AgentError(code=code, message=message, context=context, last_output=self.last_output, cause=cause)

    def _record(self, end: _AttemptEnd) -> None:
        self.records.append(
            AttemptRecord(
                number=self.attempt,
                iterations=self.iteration,
                tokens=self.attempt_tokens,
                outcome=end.outcome,
                candidate=self.candidate,
                validation_errors=end.problems,
            )
        )

    async def _fire(self, hook: str, event: object) -> None:
        callbacks = self.callbacks
        callback = None if callbacks is None else getattr(callbacks, hook)
        if callback is None:
            return
        state = ExecutionState(
            agent_name=self.agent.name,
            attempt=self.attempt,
            iteration=self.iteration,
            tokens=self.tokens,
            elapsed_ms=(time.perf_counter() - self.started) * 1000,
            key=EXECUTION_KEY.get(),
        )
        await invoke_callback(hook, callback, state, event, self.callback_errors)

    def _failure(self, error: AgentError) -> ExecuteFailure:
        return ExecuteFailure(error=error, metadata=self._metadata())

    def _metadata(self) -> ExecutionMetadata:
        return ExecutionMetadata(
            model=self.agent.model,
            tokens=self.tokens,
            attempts=tuple(self.records),
            iterations=self.iterations,
            latency_ms=(time.perf_counter() - self.started) * 1000,
            callback_errors=tuple(self.callback_errors),
            messages=cast("list[MessageParam]", self.messages),
        )


_ADVICE: Final = {
    AgentErrorCode.VALIDATION_FAILED: "Check the validators' messages; make the instructions state those rules, "
    "or raise ValidationConfig.max_attempts.",
    AgentErrorCode.INVALID_RESPONSE: "The model answered in text instead of calling the output tool; make the "
    "instructions ask for the tool call.",
    AgentErrorCode.SUBMIT_BEFORE_OUTPUT: "The model called submit before a schema-valid output call; describe the "
    "output tool and the submit flow in the instructions.",
    AgentErrorCode.MAX_TOKENS: "Raise define_agent(max_tokens=...) or ask for a shorter output.",
}


def _outcome_of(interrupted: Interrupted) -> AttemptOutcome:
    return AttemptOutcome.EXECUTION_CANCELLED if interrupted.reason == "abort" else AttemptOutcome.TIMEOUT


def _block_param(block: Any) -> dict[str, Any]:
    """A response content block as a request param, verbatim (only the fields the API sent)."""
    to_dict = getattr(block, "to_dict", None)
    if to_dict is not None:
        return to_dict(mode="json")  # type: ignore[no-any-return]
    return dict(block.model_dump(mode="json", exclude_unset=True))


def _text_of(response: Message) -> str:
    return "".join(getattr(block, "text", "") for block in response.content if block.type == "text")


def _thinking_on(settings: Any) -> bool:
    """The API forbids forcing tool use while extended thinking is on."""
    thinking = settings.get("thinking")
    return isinstance(thinking, dict) and cast("dict[str, object]", thinking).get("type") in ("enabled", "adaptive")


def _describe(exc: BaseException) -> str:
    return safe_str(exc) or type(exc).__name__


def _rejection(agent: AgentDefinition[Any, Any], problems: Sequence[str], *, early: bool) -> str:
    listing = "\n".join(f"- {problem}" for problem in problems)
    name = agent.output.name
    if early:
        return (
            f"Error: this {name!r} input does not match the output schema, so it was not kept:\n{listing}\n"
            f"Fix these and call {name!r} again."
        )
    then = (
        f"call {name!r} again with a corrected output, then call submit"
        if agent.reflection_enabled
        else (f"call {name!r} again with a corrected output")
    )
    return f"Error: output rejected. Fix every problem below and {then}:\n{listing}"


def _check_arguments(
    agent: AgentDefinition[Any, Any],
    prompt: str | Sequence[ContentBlockParam],
    deps: object,
    limits: ExecutionLimits | None,
    callbacks: ExecuteCallbacks | None,
    history: Sequence[MessageParam] | None,
) -> None:
    if not isinstance(agent, AgentDefinition):
        raise TypeError(f"execute_agent() needs an AgentDefinition from define_agent(), got {type(agent).__name__}.")
    if not isinstance(prompt, str) and not (isinstance(prompt, Sequence) and all(isinstance(b, dict) for b in prompt)):
        raise TypeError("prompt must be a str or a list of Messages API content blocks (dicts).")
    empty = not prompt.strip() if isinstance(prompt, str) else not prompt
    if empty and not history:
        raise TypeError("prompt is empty: give the model something to work on (or pass message_history).")
    if agent.deps_type is not None and deps is MISSING:
        raise TypeError(
            f"Agent {agent.name!r} declares deps_type={agent.deps_type.__name__}: pass execute_agent(..., deps=...)."
        )
    if limits is not None and not isinstance(limits, ExecutionLimits):
        raise TypeError(f"limits must be an ExecutionLimits, got {type(limits).__name__}.")
    if callbacks is not None and not isinstance(callbacks, ExecuteCallbacks):
        raise TypeError(f"callbacks must be an ExecuteCallbacks, got {type(callbacks).__name__}.")
    if history is not None and not (
        isinstance(history, Sequence)
        and all(isinstance(m, dict) and m.get("role") in ("user", "assistant") for m in history)
    ):
        raise TypeError("message_history must be a list of Messages API messages ({'role': ..., 'content': ...}).")


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
        client: Anything with an async ``messages.create``; default ``AsyncAnthropic()``.
        abort_event: A ``threading.Event`` or ``asyncio.Event``; setting it cancels the execution,
            interrupting an API call or tool in flight within 100 ms.
        callbacks: Observability hooks.
        limits: Token budget and wall-clock timeout.
        message_history: Earlier Messages API turns to continue from (e.g. a previous
            ``metadata.messages``).

    Returns:
        ``ExecuteSuccess`` with the typed output, or ``ExecuteFailure`` with an ``AgentError``.

    Raises:
        TypeError: wrong argument types (a programming error).
    """
    _check_arguments(agent, prompt, deps, limits, callbacks, message_history)
    limits = limits if limits is not None else ExecutionLimits()
    run = _Run(
        agent=agent,
        client=client if client is not None else default_client(),
        deps=None if deps is MISSING else deps,
        callbacks=callbacks,
        limits=limits,
        guard=Guard(abort_event, limits.timeout_s),
        messages=cast("list[dict[str, Any]]", build_messages(prompt, message_history)),
    )
    if client is not None:
        return await run.execute()
    try:
        return await run.execute()
    finally:
        # The default client is this execution's own: close its connection pool rather than leak it.
        await close_client(run.client)


@overload
def execute_agent_sync(
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
def execute_agent_sync(
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
def execute_agent_sync(
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
    """Blocking ``execute_agent``: same arguments, same result. Use it where no event loop runs.

    Raises:
        RuntimeError: called inside a running event loop (``await execute_agent(...)`` there).
        TypeError: wrong argument types.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            "execute_agent_sync() cannot run inside a running event loop: use `await execute_agent(...)` instead."
        )
    return asyncio.run(
        execute_agent(
            agent,
            prompt,
            deps=deps,
            client=client,
            abort_event=abort_event,
            callbacks=callbacks,
            limits=limits,
            message_history=message_history,
        )
    )

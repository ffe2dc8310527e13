"""OpenTelemetry spans of an execution: ``invoke_agent``, each model call's ``chat`` and each ``execute_tool``.

Spans go to the tracer provider passed to ``instrument()``, else to the one registered with OpenTelemetry. With
neither (the default) nothing here imports OpenTelemetry or builds an attribute: each hook is a context-variable
read. The SDK client emits its own span per API call (``anthropic.messages.create``); typedagent then emits no
``chat`` span of its own, so a call is never traced twice, and the SDK's span nests under the execution's because
it starts in the execution's context.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from .._api.api_errors import ApiFailure
from .._api.secrets import credentials
from .._shared.events import EXECUTION_KEY
from .._shared.limits import Interrupted
from .._shared.results import ExecuteFailure, TokenUsage
from . import span_attributes as attrs
from .logs import log_execution, log_iteration, log_tool_call, logger
from .sdk_spans import sdk_spans_of
from .settings import current, tracer_for

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

    from .._agent.definition import AgentDefinition
    from .._run.execution import Execution
    from .._run.reply import Reply
    from .._shared.events import FallbackSwitch
    from .._shared.pausing import ExecutePaused, PausableResult
    from .._shared.results import AttemptRecord

__all__ = [
    "TracingObserver",
    "attempt_ended",
    "fell_back",
    "paused",
    "traced_execution",
    "traced_model_call",
    "traced_tool_call",
]

T = TypeVar("T")


@dataclass(slots=True)
class _Traced:
    """The execution being traced in this context."""

    tracer: Tracer
    span: Span
    agent: AgentDefinition[Any, Any]
    conversation_id: str
    content: bool
    sdk_spans: bool
    """The client emits a span per model call itself, into the same provider."""
    secrets: tuple[str, ...]
    instructions_recorded: bool = False
    switch: FallbackSwitch | None = None
    """The switch to another model of the fallback chain that the next model call makes, if any."""


_CURRENT: ContextVar[_Traced | None] = ContextVar("typedagent_trace", default=None)
_AGENT: ContextVar[str] = ContextVar("typedagent_agent_name", default="?")
"""The running agent's name for the DEBUG lines of an untraced execution (set only while DEBUG is on)."""


async def traced_execution(
    execution: Execution, run: Callable[[Execution], Awaitable[PausableResult[Any]]]
) -> PausableResult[Any]:
    """Run the execution inside its ``invoke_agent`` span (when there is a provider), and log its end.

    Each segment of a paused and resumed execution has a span of its own, started where the segment runs (in the
    trace of the code that resumes it, or a new trace when no span is current): the first segment's span has long
    ended, maybe in another process. Every later segment's span links to the first's.
    """
    settings = current()
    tracer = tracer_for(settings)
    agent = execution.agent
    if tracer is None:
        named = _AGENT.set(agent.name) if logger.isEnabledFor(logging.DEBUG) else None
        try:
            result = await run(execution)
        finally:
            if named is not None:
                _AGENT.reset(named)
        log_execution(agent.name, result)
        return result
    from opentelemetry.trace import Status, StatusCode, use_span

    conversation_id = execution.id
    span = _execution_span(tracer, execution, conversation_id)
    sdk_spans = sdk_spans_of(execution, settings, conversation_id)
    traced = _Traced(
        tracer, span, agent, conversation_id, settings.include_content, sdk_spans, tuple(credentials(execution.client))
    )
    key = EXECUTION_KEY.get()
    if key is not None:
        span.set_attribute("typedagent.input.key", key)
    if traced.content:
        messages = attrs.messages_content(execution.conversation.messages)
        span.set_attribute("gen_ai.input.messages", attrs.content_json(messages, traced.secrets))
    token = _CURRENT.set(traced)
    try:
        with use_span(span, end_on_exit=True):
            result = await run(execution)
            span.set_attributes(attrs.execution_end_attributes(result))
            if isinstance(result, ExecuteFailure):
                span.set_status(Status(StatusCode.ERROR, result.error.code.value))
            elif traced.content and result.status == "success":
                output = attrs.content_json(execution.last_output, traced.secrets)
                span.set_attribute("gen_ai.output.messages", output)
    finally:
        _CURRENT.reset(token)
    log_execution(agent.name, result, span)
    return result


def _execution_span(tracer: Tracer, execution: Execution, conversation_id: str) -> Span:
    """The ``invoke_agent`` span of this segment: the first names itself in ``execution.trace``, a later one links."""
    from opentelemetry.trace import Link, SpanKind

    attributes = attrs.agent_attributes(execution.agent, conversation_id)
    first = _span_context(execution.trace)
    links = [] if first is None else [Link(first, {"typedagent.link": "first_segment"})]
    if execution.pauses:
        attributes["typedagent.resumed"] = True
    span = tracer.start_span(
        f"invoke_agent {execution.agent.name}", kind=SpanKind.INTERNAL, attributes=attributes, links=links
    )
    if execution.trace is None:
        context = span.get_span_context()
        if context.is_valid:
            execution.trace = f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"
    elif execution.pauses:
        span.add_event("typedagent.resume", {"typedagent.pauses": execution.pauses})
    return span


def _span_context(traceparent: str | None) -> Any:
    """The span context a W3C ``traceparent`` names (None when there is none, or it is malformed)."""
    if traceparent is None:
        return None
    from opentelemetry.trace import SpanContext, TraceFlags

    parts = traceparent.split("-")
    try:
        version, trace_id, span_id, flags = parts
        context = SpanContext(
            int(trace_id, 16), int(span_id, 16), is_remote=True, trace_flags=TraceFlags(int(flags, 16))
        )
    except ValueError:
        return None
    return context if version == "00" and context.is_valid else None


def traced_model_call(execution: Execution, params: dict[str, Any], call: Awaitable[T]) -> Awaitable[T]:
    """Await one model call inside typedagent's ``chat`` span, unless the SDK makes one; log it at DEBUG.

    Untraced and not logging, the call itself is returned: the loop awaits it as if there were no hook.
    """
    traced = _CURRENT.get()
    if traced is None and not logger.isEnabledFor(logging.DEBUG):
        return call
    return _observe_model_call(execution, params, call, traced)


async def _observe_model_call(
    execution: Execution, params: dict[str, Any], call: Awaitable[T], traced: _Traced | None
) -> T:
    started = time.perf_counter()
    span: Any = None
    if traced is None or traced.sdk_spans:
        if traced is not None:
            traced.switch = None
        response = await call
    else:
        from opentelemetry.trace import SpanKind, use_span

        model = params.get("model", "")
        attributes = attrs.chat_request_attributes(params, traced.conversation_id)
        if traced.switch is not None:
            attributes.update(attrs.fallback_attributes(traced.switch))
        traced.switch = None
        span = traced.tracer.start_span(f"chat {model}", kind=SpanKind.CLIENT, attributes=attributes)
        with use_span(span, end_on_exit=True):
            response = await call
            _safely(_record_chat, traced, span, params, response)
    if traced is not None:
        _safely(_record_on_execution, traced, params, response)
    if logger.isEnabledFor(logging.DEBUG):
        attempt = execution.attempt
        outcome = _outcome(response)
        elapsed_ms = (time.perf_counter() - started) * 1000
        # The SDK's own span of the call is not ours to read: the line carries the execution's (same trace).
        where = span if span is not None or traced is None else traced.span
        log_iteration(execution.agent.name, attempt.number, attempt.iteration, outcome, elapsed_ms, where)
    return response


def _outcome(response: object) -> str:
    if isinstance(response, Interrupted):
        return f"interrupted ({response.reason})"
    if isinstance(response, ApiFailure):
        return f"failed ({response.error_type})"
    return f"stop_reason {getattr(response, 'stop_reason', None)}"


def _safely(record: Callable[..., None], *args: Any) -> None:
    """Record on a span; a response or request of an unexpected shape costs its attributes, never the call."""
    try:
        record(*args)
    except Exception:
        logger.debug("could not record a model call on its span", exc_info=True)


def _record_chat(traced: _Traced, span: Span, params: dict[str, Any], response: object) -> None:
    """What a model call's request and response add to typedagent's own ``chat`` span."""
    from opentelemetry.trace import Status, StatusCode

    if traced.content:
        span.set_attribute(
            "gen_ai.input.messages", attrs.content_json(attrs.messages_content(params["messages"]), traced.secrets)
        )
    if isinstance(response, Interrupted | ApiFailure):
        kind = f"interrupted_{response.reason}" if isinstance(response, Interrupted) else response.error_type
        span.set_attribute("error.type", kind)
        span.set_status(Status(StatusCode.ERROR, kind))
        return
    usage = TokenUsage.from_usage(getattr(response, "usage", None))
    span.set_attributes(attrs.chat_response_attributes(response, usage))
    if traced.content:
        output = [{"role": "assistant", "content": list(getattr(response, "content", []))}]
        span.set_attribute("gen_ai.output.messages", attrs.content_json(attrs.messages_content(output), traced.secrets))


def _record_on_execution(traced: _Traced, params: dict[str, Any], response: object) -> None:
    """The execution span's share of a model call: instructions and tools once, server tool calls as events."""
    span = traced.span
    if not traced.instructions_recorded:
        traced.instructions_recorded = True
        tools = [
            {key: tool[key] for key in ("type", "name", "description") if key in tool}
            for tool in params.get("tools", ())
        ]
        span.set_attribute("gen_ai.tool.definitions", attrs.content_json(tools, traced.secrets))
        if traced.content and "system" in params:
            span.set_attribute("gen_ai.system_instructions", attrs.content_json(params["system"], traced.secrets))
    for name, attributes in attrs.server_call_events(response):
        span.add_event(name, attributes)


def traced_tool_call(reply: Reply, work: Callable[[], Awaitable[T]]) -> Awaitable[T]:
    """Run one tool call inside its ``execute_tool`` span; log it at DEBUG.

    Untraced and not logging, the work itself is returned: the caller awaits it as if there were no hook.
    """
    traced = _CURRENT.get()
    if traced is None and not logger.isEnabledFor(logging.DEBUG):
        return work()
    return _observe_tool_call(reply, work, traced)


async def _observe_tool_call(reply: Reply, work: Callable[[], Awaitable[T]], traced: _Traced | None) -> T:
    started = time.perf_counter()
    block = reply.block
    span: Any = None
    if traced is None:
        result = await work()
    else:
        from opentelemetry.trace import SpanKind, Status, StatusCode, use_span

        span = traced.tracer.start_span(
            f"execute_tool {block.name}", kind=SpanKind.INTERNAL, attributes=_tool_attributes(traced, reply)
        )
        with use_span(span, end_on_exit=True):
            result = await work()
            span.set_attribute("typedagent.tool.is_error", reply.is_error)
            if reply.is_error:
                span.set_attribute("error.type", "tool_error")
                span.set_status(Status(StatusCode.ERROR, "tool_error"))
            if traced.content:
                span.set_attribute("gen_ai.tool.call.result", attrs.content_json(reply.content, traced.secrets))
    if logger.isEnabledFor(logging.DEBUG):
        elapsed_ms = (time.perf_counter() - started) * 1000
        log_tool_call(_agent_name(traced), block.name, reply.kind, reply.is_error, elapsed_ms, span)
    return result


def _agent_name(traced: _Traced | None) -> str:
    return _AGENT.get() if traced is None else traced.agent.name


def _tool_attributes(traced: _Traced, reply: Reply) -> dict[str, Any]:
    block = reply.block
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": block.name,
        "gen_ai.tool.call.id": block.id,
        "gen_ai.tool.type": "function",
        "typedagent.tool.kind": reply.kind,
        "gen_ai.conversation.id": traced.conversation_id,
    }
    if reply.server is not None:
        attributes["typedagent.tool.server"] = reply.server  # a toolset's tool: the MCP server that ran it
        attributes["gen_ai.tool.type"] = "extension"
    helper = traced.agent.helper(block.name) if reply.kind == "helper" else None
    definition = getattr(helper, "definition", None)
    if isinstance(definition, Mapping):
        kind = definition.get("type")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if isinstance(kind, str) and kind != "custom":
            attributes["typedagent.tool.anthropic_type"] = kind  # an Anthropic-defined client tool: bash, memory, …
    if traced.content:
        attributes["gen_ai.tool.call.arguments"] = attrs.content_json(block.input, traced.secrets)
    return attributes


def attempt_ended(record: AttemptRecord) -> None:
    """An event on the execution span per attempt: how it ended, and with content, the validation problems."""
    traced = _CURRENT.get()
    if traced is None:
        return
    attributes: dict[str, Any] = {
        "typedagent.attempt": record.number,
        "typedagent.attempt.outcome": record.outcome.value,
        "typedagent.attempt.iterations": record.iterations,
        "typedagent.attempt.problem_count": len(record.validation_errors),
    }
    if traced.content and record.validation_errors:
        attributes["typedagent.attempt.problems"] = tuple(
            attrs.content_json(problem, traced.secrets) for problem in record.validation_errors
        )
    traced.span.add_event("typedagent.attempt", attributes)


def paused(execution: Execution, result: ExecutePaused) -> None:
    """An event on the execution span as it pauses: the calls it waits on."""
    traced = _CURRENT.get()
    if traced is None:
        return
    pending = result.pending
    traced.span.add_event(
        "typedagent.pause",
        {
            "typedagent.pauses": execution.pauses,
            "typedagent.pending.ids": tuple(call.id for call in pending),
            "typedagent.pending.names": tuple(call.name for call in pending),
            "typedagent.pending.kinds": tuple(call.kind for call in pending),
        },
    )


def fell_back(execution: Execution, event: FallbackSwitch) -> None:
    """An event on the execution span per switch to another model; the next ``chat`` span carries it too."""
    traced = _CURRENT.get()
    if traced is None:
        return
    traced.switch = event
    traced.span.add_event("typedagent.fallback", attrs.fallback_attributes(event))


class TracingObserver:
    """The loop's observer for spans and log lines (``RunObserver``): registered once by ``typedagent/__init__``."""

    __slots__ = ()

    execution = staticmethod(traced_execution)
    model_call = staticmethod(traced_model_call)
    tool_call = staticmethod(traced_tool_call)
    attempt_ended = staticmethod(attempt_ended)
    paused = staticmethod(paused)
    fell_back = staticmethod(fell_back)

"""A tracer provider that cuts credentials out of every attribute recorded through it (the SDK client's spans).

typedagent turns the SDK client's content mode on when ``instrument(include_content=True)``: the SDK then records
the prompts, tool results and outputs of its ``anthropic.messages.create`` spans itself, as they are. The client
gets this wrapper of the provider its spans go to, so a key that a prompt or a tool result holds reaches the
exporter as ``[redacted]``, as it does on typedagent's own spans. Spans still go to the provider wrapped.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, SpanContext, SpanKind, Status, StatusCode, Tracer, TracerProvider
from opentelemetry.util._decorator import _agnosticcontextmanager  # the decorator the base class uses
from opentelemetry.util.types import Attributes, AttributeValue

from .._api.secrets import REDACTED

__all__ = ["RedactingTracerProvider", "wrapped_provider"]


def wrapped_provider(provider: object) -> object:
    """The provider a ``RedactingTracerProvider`` forwards to (``provider`` itself when it is not one)."""
    return provider.wrapped if isinstance(provider, RedactingTracerProvider) else provider


class RedactingTracerProvider(TracerProvider):
    """Forwards to ``wrapped``; every string attribute of the spans it makes has ``secrets`` replaced."""

    def __init__(self, wrapped: TracerProvider, secrets: Sequence[str]) -> None:
        self.wrapped = wrapped
        self.secrets = tuple(sorted({secret for secret in secrets if secret}, key=len, reverse=True))

    def get_tracer(
        self,
        instrumenting_module_name: str,
        instrumenting_library_version: str | None = None,
        schema_url: str | None = None,
        attributes: Attributes = None,
    ) -> Tracer:
        """The wrapped provider's tracer, wrapped."""
        tracer = self.wrapped.get_tracer(
            instrumenting_module_name, instrumenting_library_version, schema_url, attributes
        )
        return _RedactingTracer(tracer, self.secrets)


def _clean(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, list | tuple):
        return type(value)(_clean(item, secrets) for item in value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return value


def _clean_all(attributes: Attributes, secrets: tuple[str, ...]) -> Attributes:
    if not attributes:
        return attributes
    return {key: _clean(value, secrets) for key, value in attributes.items()}


class _RedactingTracer(Tracer):
    def __init__(self, tracer: Tracer, secrets: tuple[str, ...]) -> None:
        self._tracer = tracer
        self._secrets = secrets

    def start_span(
        self,
        name: str,
        context: Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> Span:
        span = self._tracer.start_span(
            name,
            context,
            kind,
            _clean_all(attributes, self._secrets),
            links,
            start_time,
            record_exception,
            set_status_on_exception,
        )
        return _RedactingSpan(span, self._secrets)

    @_agnosticcontextmanager
    def start_as_current_span(
        self,
        name: str,
        context: Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
        end_on_exit: bool = True,
    ) -> Iterator[Span]:
        from opentelemetry.trace import use_span

        span = self.start_span(
            name, context, kind, attributes, links, start_time, record_exception, set_status_on_exception
        )
        with use_span(span, end_on_exit=end_on_exit, record_exception=record_exception) as current:
            yield current


class _RedactingSpan(Span):
    def __init__(self, span: Span, secrets: tuple[str, ...]) -> None:
        self._span = span
        self._secrets = secrets

    def end(self, end_time: int | None = None) -> None:
        self._span.end(end_time)

    def get_span_context(self) -> SpanContext:
        return self._span.get_span_context()

    def set_attributes(self, attributes: Mapping[str, AttributeValue]) -> None:
        self._span.set_attributes(_clean_all(attributes, self._secrets) or {})

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        self._span.set_attribute(key, _clean(value, self._secrets))

    def add_event(self, name: str, attributes: Attributes = None, timestamp: int | None = None) -> None:
        self._span.add_event(name, _clean_all(attributes, self._secrets), timestamp)

    def add_link(self, context: SpanContext, attributes: Attributes = None) -> None:
        self._span.add_link(context, _clean_all(attributes, self._secrets))

    def update_name(self, name: str) -> None:
        self._span.update_name(name)

    def is_recording(self) -> bool:
        return self._span.is_recording()

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        if isinstance(status, Status) and status.description:
            status = Status(status.status_code, _clean(status.description, self._secrets))
        self._span.set_status(status, _clean(description, self._secrets))

    def record_exception(
        self,
        exception: BaseException,
        attributes: Attributes = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        # The exception's message and traceback are attributes too: recorded here, cleaned, as the SDK records them.
        stacktrace = "".join(traceback.format_exception(type(exception), exception, exception.__traceback__))
        recorded: dict[str, AttributeValue] = {
            "exception.type": type(exception).__name__,
            "exception.message": str(exception),
            "exception.stacktrace": stacktrace,
            "exception.escaped": str(escaped),
        }
        recorded.update(attributes or {})
        self._span.add_event("exception", _clean_all(recorded, self._secrets), timestamp)

"""What ``instrument()`` configured, and the tracer of the provider it names (none when there is no provider)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._shared.version import __version__

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer, TracerProvider


__all__ = ["Settings", "current", "instrument", "swap_settings", "tracer_for"]


@dataclass(frozen=True, slots=True)
class Settings:
    """What ``instrument()`` configured."""

    enabled: bool = True
    tracer_provider: TracerProvider | None = None
    include_content: bool = False


_settings = Settings()


_tracers: dict[int, tuple[object, Tracer]] = {}


def instrument(
    *, tracer_provider: TracerProvider | None = None, include_content: bool = False, enabled: bool = True
) -> None:
    """Configure typedagent's OpenTelemetry spans for every execution that starts from now on.

    Without a call, executions send spans to the tracer provider registered with OpenTelemetry
    (``opentelemetry.trace.set_tracer_provider``) and record no content; with no provider registered they
    cost nothing.

    Args:
        tracer_provider: The provider of typedagent's spans, in place of the registered one. The SDK clients
            typedagent calls send their ``anthropic.messages.create`` spans to it too.
        include_content: Record prompts, system instructions, tool arguments and results, outputs and
            validation problems on the spans, and turn on the SDK client's content mode. Off by default: they
            may hold personal data. API keys and auth tokens are cut out of whatever is recorded.
        enabled: ``False`` turns typedagent's spans off (the SDK client's own spans follow its own options).
    """
    global _settings
    _settings = Settings(enabled=enabled, tracer_provider=tracer_provider, include_content=include_content)


def current() -> Settings:
    """The settings in force now."""
    return _settings


def swap_settings(settings: Settings) -> Settings:
    """Put ``settings`` in force and return the ones they replace (the testing fixture restores them)."""
    global _settings
    previous, _settings = _settings, settings
    return previous


def tracer_for(settings: Settings) -> Tracer | None:
    """The tracer of the configured provider, or None when there is none: then no span is made."""
    if not settings.enabled:
        return None
    provider: Any = settings.tracer_provider
    if provider is None:
        # Nobody registered a provider without importing OpenTelemetry, unless the environment names one.
        otel: Any = sys.modules.get("opentelemetry.trace")
        if otel is None:
            if "OTEL_PYTHON_TRACER_PROVIDER" not in os.environ:
                return None
            import opentelemetry.trace as otel
        provider = otel.get_tracer_provider()
        if isinstance(provider, (otel.ProxyTracerProvider, otel.NoOpTracerProvider)):
            return None
    cached = _tracers.get(id(provider))
    if cached is not None and cached[0] is provider:
        return cached[1]
    tracer: Tracer = provider.get_tracer("typedagent", __version__)
    _tracers[id(provider)] = (provider, tracer)
    return tracer

"""The SDK client's own spans: whether it traces the model calls into typedagent's provider (then swapped for a copy).

The SDK client emits its own span per API call (``anthropic.messages.create``); when it does so into the provider
typedagent traces to, typedagent emits no ``chat`` span of its own, so a call is never traced twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from .._api.secrets import credentials
from .logs import logger
from .redacting import RedactingTracerProvider, wrapped_provider
from .settings import Settings

if TYPE_CHECKING:
    from .._run.execution import Execution

__all__ = ["sdk_spans_of"]


def sdk_spans_of(execution: Execution, settings: Settings, conversation_id: str) -> bool:
    """Whether the client's SDK emits the model calls' spans into typedagent's provider.

    A plain SDK client is swapped for a copy (sharing its connection pool) whose spans carry the execution's
    conversation id, go to ``instrument()``'s provider (unless the client was given one) and record content
    when asked. A copy that records content sends its spans through a ``RedactingTracerProvider``, which cuts
    the client's credentials out of them.
    """
    client: Any = execution.client
    if not hasattr(client, "open_telemetry") and hasattr(client, "limiter"):
        client = client.client  # typedagent's rate-limited wrapper around an SDK client
    found: object = getattr(client, "open_telemetry", None)
    if not isinstance(found, Mapping):
        return False
    options = cast("Mapping[str, Any]", found)
    traces: Mapping[str, Any] = options.get("traces", {})
    if not traces.get("enabled"):
        return False
    provider: Any = wrapped_provider(options.get("tracer_provider"))
    if not (client is execution.client and hasattr(client, "with_options")):
        return _same_provider(provider, settings)
    if provider is None:
        provider = settings.tracer_provider  # a provider the client was given stays its own
    wanted: dict[str, Any] = {**options, "conversation_id": conversation_id}
    if settings.include_content:
        wanted["traces"] = {**traces, "content_mode": "content"}
    if wanted["traces"].get("content_mode") == "content":
        from opentelemetry import trace

        wanted["tracer_provider"] = RedactingTracerProvider(
            provider or trace.get_tracer_provider(), credentials(client)
        )
    elif provider is not None:
        wanted["tracer_provider"] = provider
    try:
        execution.client = client.with_options(open_telemetry=wanted)
    except Exception:  # a client that looks like the SDK's but copies differently: trace it as it is
        logger.debug("could not copy the client to link its spans to the execution", exc_info=True)
        return _same_provider(wrapped_provider(options.get("tracer_provider")), settings)
    return _same_provider(provider, settings)


def _same_provider(clients: object, settings: Settings) -> bool:
    """Whether a client with the tracer provider ``clients`` (None: the registered one) sends spans where we do."""
    ours: object = settings.tracer_provider
    if clients is ours:
        return True
    from opentelemetry import trace

    registered = trace.get_tracer_provider()
    return (clients or registered) is (ours or registered)

"""The client protocol (anything with an async ``messages.create``), the default client, and its configuration check."""

from __future__ import annotations

import contextlib
import sys
import weakref
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from .._shared.clients import MessagesClient, MessagesResource
from .._shared.errors import safe_str
from .api_errors import ApiFailure, not_sent
from .secrets import attribute, credential_problem

if TYPE_CHECKING:
    from anthropic.types import Message

__all__ = [
    "CLIENT_IN_CONTEXT",
    "MessagesClient",
    "MessagesResource",
    "UnbuiltClient",
    "close_client",
    "configuration_failure",
    "default_client",
    "sends_through_the_sdk",
]


_BASE_URL = "The base URL (ANTHROPIC_BASE_URL, or the client's base_url)"


class UnbuiltClient:
    """The default client when ``AsyncAnthropic()`` could not be built: every call fails with why, sending nothing."""

    def __init__(self, failure: ApiFailure) -> None:
        self.failure = failure
        self.messages = self

    async def create(self, *args: Any, **kwargs: Any) -> Message:
        """Raise the construction error (the model call reports ``failure`` before it gets here)."""
        raise self.failure.cause


CLIENT_IN_CONTEXT: ContextVar[MessagesClient | None] = ContextVar("typedagent_client", default=None)
"""The client ``typedagent.testing.use_client`` set for this context: used by every execution without ``client=``."""


def default_client() -> MessagesClient:
    """``AsyncAnthropic()``, configured from the environment; the SDK is imported only now.

    A configuration the SDK rejects outright (a malformed ``ANTHROPIC_BASE_URL``) is reported by the first
    model call, like a missing key, instead of raised here.
    """
    from anthropic import AsyncAnthropic

    try:
        return AsyncAnthropic()
    except Exception as exc:
        if type(exc).__name__ == "InvalidURL":
            problem = ValueError(f"{_BASE_URL} is not a valid URL ({safe_str(exc)})")
            problem.__cause__ = exc
            return UnbuiltClient(not_sent(problem, "invalid_base_url"))
        return UnbuiltClient(not_sent(exc, "invalid_client_configuration"))


def configuration_failure(client: object) -> ApiFailure | None:
    """Why ``client`` cannot send a request as it is configured, found without sending one; None when it can.

    Covers a default client that could not be built, an API key or auth token that cannot go into an HTTP
    header (a key read with its trailing newline), and a base URL with no ``http(s)://`` scheme or no host.
    """
    if isinstance(client, UnbuiltClient):
        return client.failure
    try:
        settings = (
            getattr(client, "api_key", None),
            getattr(client, "auth_token", None),
            getattr(client, "base_url", None),
        )
    except Exception:  # a property that raises: each read on its own, None for the one that fails
        settings = (attribute(client, "api_key"), attribute(client, "auth_token"), attribute(client, "base_url"))
    try:
        verified = _VERIFIED.get(client)
    except TypeError:  # a client that cannot be weakly referenced is checked every time
        verified = None
    # Usable with the settings it was found usable with (compared by identity: a changed key is a new object).
    key, token, url = settings
    if verified is not None and verified[0] is key and verified[1] is token and verified[2] is url:
        return None
    failure = _configuration_failure(client)
    if failure is None:
        with contextlib.suppress(TypeError):
            _VERIFIED[client] = settings
    return failure


_VERIFIED: weakref.WeakKeyDictionary[object, tuple[object, object, object]] = weakref.WeakKeyDictionary()
"""The key, token and base URL each client was last found usable with: checked again only when one changes."""


def _configuration_failure(client: object) -> ApiFailure | None:
    key_problem = credential_problem(client)
    if key_problem is not None:
        return not_sent(ValueError(key_problem), "invalid_api_key_format")
    url = attribute(client, "base_url")
    scheme, host = attribute(url, "scheme"), attribute(url, "host")
    if isinstance(scheme, str) and (scheme not in ("http", "https") or not host):
        problem = ValueError(f"{_BASE_URL} is not a valid URL: it needs an http:// or https:// scheme and a host")
        return not_sent(problem, "invalid_base_url")
    return None


def sends_through_the_sdk(client: object, *, beta: bool = False) -> bool:
    """Whether the Messages resource used is the SDK's own (``AsyncAnthropic``, Bedrock, Vertex).

    ``beta``: the request went through ``client.beta.messages``, which Bedrock and Vertex implement themselves.
    """
    if beta:
        resource = getattr(getattr(client, "beta", None), "messages", None)
        return type(resource).__module__.startswith("anthropic.") and type(resource).__name__ == "AsyncMessages"
    resources = sys.modules.get("anthropic.resources.messages")
    return resources is not None and isinstance(getattr(client, "messages", None), resources.AsyncMessages)


async def close_client(client: object) -> None:
    """Close a client typedagent created (``AsyncAnthropic.close()``); a failure to close is ignored."""
    close = getattr(client, "close", None)
    if close is None:
        return
    # The execution's result matters more than a connection that would not close cleanly.
    with contextlib.suppress(Exception):
        await close()

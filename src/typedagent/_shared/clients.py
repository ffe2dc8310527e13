"""The client protocol: anything with an async ``messages.create`` returning an ``anthropic.types.Message``."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from anthropic.types import Message

__all__ = ["MessagesClient", "MessagesResource"]


class MessagesResource(Protocol):
    """The ``client.messages`` part of a client."""

    def create(self, *args: Any, **kwargs: Any) -> Awaitable[Message]:
        """Create a message (the Messages API call): an ``async def``, or anything returning an awaitable."""
        ...


class MessagesClient(Protocol):
    """Any object with an async ``messages.create(**params)`` returning an ``anthropic.types.Message``.

    ``AsyncAnthropic``, ``AsyncAnthropicBedrock``, ``AsyncAnthropicVertex``, ``AsyncAnthropicFoundry`` and the
    clients of ``typedagent.testing`` all qualify. What the call raises while it is awaited comes back as an
    ``API_ERROR`` result; what calling ``create`` raises, before it returns anything to await (a keyword it
    does not take), is a programming error and propagates.
    """

    @property
    def messages(self) -> MessagesResource:
        """The Messages resource."""
        ...

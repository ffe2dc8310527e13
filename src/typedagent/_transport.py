"""How ``execute_many`` sends its executions' model calls: online (one request each) or in Message Batches."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from ._batch_client import BatchingClient
from ._batch_ledger import BatchLedger, ledger_path
from ._client import MessagesClient
from ._errors import AgentDefinitionError
from ._numbers import is_finite_number

__all__ = [
    "BATCH_CONCURRENCY",
    "ONLINE_CONCURRENCY",
    "MessageBatches",
    "Transport",
    "batching_client",
    "default_concurrency",
]

ONLINE_CONCURRENCY: Final = 64
"""Executions in flight by default when each model call is its own request."""
BATCH_CONCURRENCY: Final = 10_000
"""Executions in flight by default with Message Batches: each round's batch holds one request of each."""


@dataclass(frozen=True, kw_only=True, slots=True)
class MessageBatches:
    """Send every model call through the Message Batches API: half the token price, results within 24 hours.

    ``execute_many(..., transport="message_batches")`` uses these defaults; pass a ``MessageBatches`` to change
    them.

    Example:
        ``execute_many(agent, inputs, transport=MessageBatches(poll_s=30), concurrency=10_000)``
    """

    gather_s: float = 2.0
    """Most seconds a request waits for the other executions' requests before its batch is submitted anyway
    (it is submitted at once when every execution waits on the model)."""
    poll_s: float = 1.0
    """Seconds before a batch's first status check; each later check waits 1.5 times longer."""
    max_poll_s: float = 60.0
    """The longest wait between two status checks of a batch."""
    max_submissions: int = 3
    """Batches a request may be submitted in: one that expired, was canceled or met a transient API error is
    submitted again in the next batch until then, and fails its execution after."""

    def __post_init__(self) -> None:
        for name in ("gather_s", "poll_s", "max_poll_s"):
            value = getattr(self, name)
            if not (is_finite_number(value) and value >= 0):
                raise AgentDefinitionError(f"MessageBatches.{name} must be a finite number >= 0, got {value!r}.")
        if (
            isinstance(self.max_submissions, bool)
            or not isinstance(self.max_submissions, int)
            or self.max_submissions < 1
        ):
            raise AgentDefinitionError(
                f"MessageBatches.max_submissions must be an int >= 1, got {self.max_submissions!r}."
            )


Transport: TypeAlias = Literal["online", "message_batches"] | MessageBatches
"""``"online"`` (each model call is its own request), ``"message_batches"`` or a ``MessageBatches``."""


def default_concurrency(transport: object) -> int:
    """Executions in flight when the caller gives no ``concurrency``: many more with Message Batches.

    A batch holds one request of each execution waiting on the model, and a round takes minutes, not seconds.
    """
    return ONLINE_CONCURRENCY if transport == "online" else BATCH_CONCURRENCY


def check_transport(transport: object) -> MessageBatches | None:
    """The batch settings of ``transport``, None for online.

    Raises:
        TypeError: not a transport.
    """
    if transport == "online":
        return None
    if transport == "message_batches":
        return MessageBatches()
    if isinstance(transport, MessageBatches):
        return transport
    raise TypeError(f'transport must be "online", "message_batches" or a MessageBatches, got {transport!r}.')


async def batching_client(
    client: MessagesClient,
    settings: MessageBatches,
    journal: str | os.PathLike[str] | None,
    active: Callable[[], int],
) -> BatchingClient:
    """A ``BatchingClient`` over ``client``, with the ledger next to ``journal`` when there is one.

    Raises:
        TypeError: the client has no Message Batches resource (``client.messages.batches``).
        JournalError: the ledger is damaged.
    """
    if getattr(getattr(client, "messages", None), "batches", None) is None:
        raise TypeError(
            f"the Message Batches transport needs a client with messages.batches (anthropic.AsyncAnthropic), got "
            f"{type(client).__name__}; in tests, use FakeAnthropicServer's client."
        )
    ledger = None if journal is None else await asyncio.to_thread(BatchLedger.open, ledger_path(journal))
    return BatchingClient(client, settings, ledger, active)

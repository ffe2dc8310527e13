"""How ``execute_many`` sends its executions' model calls: online (one request each) or in Message Batches."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Final, Literal, TypeAlias

from .batch_client import BatchingClient
from .batch_ledger import BatchLedger, ledger_path
from .client import MessagesClient
from .message_batches import MessageBatches

__all__ = [
    "BATCH_CONCURRENCY",
    "ONLINE_CONCURRENCY",
    "Transport",
    "batching_client",
    "default_concurrency",
]

ONLINE_CONCURRENCY: Final = 64
"""Executions in flight by default when each model call is its own request."""
BATCH_CONCURRENCY: Final = 10_000
"""Executions in flight by default with Message Batches: each round's batch holds one request of each."""


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

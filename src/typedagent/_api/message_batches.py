"""``MessageBatches``: the settings of the Message Batches transport (gathering, polling, resubmission)."""

from __future__ import annotations

from dataclasses import dataclass

from .._shared.errors import AgentDefinitionError
from .._shared.numbers import is_finite_number

__all__ = ["MessageBatches"]


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

"""``AlternativeFailure``: why one model of a fallback chain did not answer a call, for the failure's context."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AlternativeFailure"]


@dataclass(frozen=True, kw_only=True, slots=True)
class AlternativeFailure:
    """Why one model of a fallback chain (``define_agent(fallback=[...])``) did not answer a call."""

    model: str
    """The model id sent: the agent's own, or an alternative's."""
    error_type: str
    """The API's ``error.type`` or the exception's class; ``refusal``; ``circuit_open`` (skipped: its breaker was
    open); ``cannot_move`` (skipped: another client cannot take the conversation's container or MCP calls)."""
    status_code: int | None
    """HTTP status, or None."""
    message: str
    """What happened, in words."""
    request_id: str | None = None
    """The ``request-id`` of the failed call."""

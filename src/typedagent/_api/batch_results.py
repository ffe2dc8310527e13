"""What a Message Batches result line means for the execution waiting on it: its message, an error, or a retry."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

from .api_errors import ERROR_TYPE_STATUSES

if TYPE_CHECKING:
    from anthropic.types import Message

__all__ = [
    "MAX_BATCH_BYTES",
    "MAX_BATCH_REQUESTS",
    "BatchRequestNotRun",
    "BatchResultUnreadable",
    "Resubmit",
    "custom_id",
    "missing",
    "outcome",
]

MAX_BATCH_REQUESTS: Final = 100_000
"""The most requests the API takes in one Message Batch."""
MAX_BATCH_BYTES: Final = 256 * 1024 * 1024 - 64 * 1024
"""The API's 256 MB per Message Batch, less room for the envelope around the requests."""

RETRYABLE: Final = frozenset({"api_error", "overloaded_error", "rate_limit_error", "timeout_error"})
"""Error types of an errored request worth sending again: the API's transient failures."""

Resubmit: TypeAlias = Literal["resubmit"]


_NOT_RUN: Final = {
    "expired": "the API did not get to it within 24 hours; run again later, or use the online transport.",
    "canceled": "its batch was canceled (in the Console or by another program); run again to resume.",
    "missing": "the API lost it; run again later, or use the online transport.",
}


class BatchRequestNotRun(Exception):
    """A batch request that expired, was canceled, or was missing from the results of every batch it was in."""

    def __init__(self, error_type: Literal["expired", "canceled", "missing"], submissions: int) -> None:
        what = "returned no result for" if error_type == "missing" else error_type
        super().__init__(
            f"the Message Batches API {what} this request in {submissions} batch(es) in a row: {_NOT_RUN[error_type]}"
        )
        self.error_type = error_type


class BatchResultUnreadable(Exception):
    """A batch result line for the request that cannot be read (an ``errored`` line without its error, say)."""

    def __init__(self, problem: Exception) -> None:
        super().__init__(
            f"the Message Batches API returned a result for this request that cannot be read "
            f"({type(problem).__name__}: {problem}); run again to submit it again, or use the online transport."
        )


def custom_id(key: str, call: int, request: bytes) -> str:
    """The ``custom_id`` of an execution's ``call``-th request: the same key, call and request give the same id.

    So a resumed run, replaying an execution, finds each request it already submitted under the same id
    (a request that differs, because a tool answered differently, gets a new one).
    """
    who = hashlib.sha256(key.encode()).hexdigest()[:20]
    what = hashlib.sha256(request).hexdigest()[:16]
    return f"{who}-{call}-{what}"


@dataclass(frozen=True, slots=True)
class Outcome:
    """A result line read: the message, the exception to raise in the execution, or a resubmission."""

    value: Message | Exception | Resubmit


def outcome(result: Any, submissions: int, max_submissions: int) -> Outcome:
    """What the execution gets for one result (``MessageBatchResult``) of its request's ``submissions``-th batch.

    A succeeded request gives its message, exactly as ``messages.create`` would. An errored one raises the
    SDK's exception for that API error in the execution, so it fails (or not) as that error would online; a
    transient error, an expiry or a cancellation is submitted again, up to ``max_submissions`` batches. A
    result that cannot be read fails the execution with ``BatchResultUnreadable``.
    """
    try:
        return _outcome(result, submissions, max_submissions)
    except Exception as exc:
        return Outcome(BatchResultUnreadable(exc))


def missing(submissions: int, max_submissions: int) -> Outcome:
    """What the execution gets when its request's ``submissions``-th batch ended without a result for it."""
    if submissions < max_submissions:
        return Outcome("resubmit")
    return Outcome(BatchRequestNotRun("missing", submissions))


def _outcome(result: Any, submissions: int, max_submissions: int) -> Outcome:
    kind = getattr(result, "type", None)
    if kind == "succeeded":
        message: Message = result.message
        return Outcome(message)
    if kind == "errored":
        body = result.error
        error_type = str(getattr(body.error, "type", "api_error"))
        if error_type in RETRYABLE and submissions < max_submissions:
            return Outcome("resubmit")
        # warnings=False: the SDK's models of an error body lag the API's error types (conflict_error, …), and
        # pydantic warns when dumping one it has no model for; the body is relayed as the API sent it.
        data = body.model_dump(mode="json", warnings=False)
        return Outcome(_status_error(data, error_type, str(getattr(body.error, "message", ""))))
    ended: Literal["expired", "canceled"] = "canceled" if kind == "canceled" else "expired"
    if submissions < max_submissions:
        return Outcome("resubmit")
    return Outcome(BatchRequestNotRun(ended, submissions))


def _status_error(body: dict[str, Any], error_type: str, message: str) -> Exception:
    """The SDK's exception for an API error body, as ``messages.create`` would have raised it."""
    import anthropic
    import httpx2

    status = ERROR_TYPE_STATUSES.get(error_type, 500)
    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages/batches")
    headers = {"request-id": body["request_id"]} if body.get("request_id") else {}
    response = httpx2.Response(status, request=request, json=body, headers=headers)
    classes: dict[int, type[anthropic.APIStatusError]] = {
        400: anthropic.BadRequestError,
        401: anthropic.AuthenticationError,
        403: anthropic.PermissionDeniedError,
        404: anthropic.NotFoundError,
        413: anthropic.RequestTooLargeError,
        429: anthropic.RateLimitError,
        529: anthropic.OverloadedError,
    }
    kind = classes.get(status, anthropic.InternalServerError if status >= 500 else anthropic.APIStatusError)
    return kind(message or error_type, response=response, body=body)

"""The Message Batches endpoints of ``FakeAnthropicServer``: create, retrieve, list, results, cancel, delete.

A batch's requests are answered from the server's script, like ``POST /v1/messages`` requests, once its
processing time has passed; the results are served as JSON Lines, each a ``succeeded`` message (usage
``service_tier: "batch"``), an ``errored`` API error (a scripted ``api_error``), or ``expired``/``canceled``.
"""

from __future__ import annotations

import itertools
import json
import time
import urllib.parse
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from ._http import HttpReply, json_reply
from ._items import ScriptError, error_body

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ._items import ScriptItem

__all__ = ["FakeBatches"]

_PREFIX = "/v1/messages/batches"
_EXPIRY = timedelta(hours=24)
_MAX_REQUESTS = 100_000

ResultType = Literal["succeeded", "errored", "canceled", "expired"]


class _Host(Protocol):
    """What the batches need of the ``FakeAnthropicServer`` they belong to: its script, its records, its address."""

    record_requests: bool
    requests: list[dict[str, Any]]
    request_headers: list[dict[str, str]]
    requests_served: int
    problems: list[str]

    @property
    def base_url(self) -> str: ...

    def _pick(self, params: Mapping[str, Any], headers: Mapping[str, str], call: int) -> ScriptItem: ...

    async def _render(self, item: ScriptItem, params: Mapping[str, Any], call: int) -> HttpReply: ...


@dataclass(slots=True)
class _FakeBatch:
    id: str
    requests: list[dict[str, Any]]
    created: float
    created_at: datetime
    results: list[dict[str, Any]] | None = None
    cancel_initiated_at: datetime | None = None
    ended_at: datetime | None = None
    counts: dict[str, int] = field(default_factory=dict[str, int])


def _stamp(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")


class FakeBatches:
    """The server's Message Batches: ``server.batches``.

    Attributes set before (or while) serving shape how batches behave:

    - ``processing_s``: seconds from a batch's creation until it has ended (its requests are answered then);
    - ``expire_requests``: how many of the next requests processed expire instead of being answered;
    - ``drop_requests``: how many of the next requests processed are missing from their batch's results;
    - ``malformed_results``: how many of the next requests processed get a result line that is not one
      (``errored`` with no error body);
    - ``unreadable_results``: serve every batch's results as a body that is not JSON Lines.

    ``created`` counts the batches created and ``submitted`` the requests in them, for assertions.
    """

    def __init__(self, server: _Host) -> None:
        self.server = server
        self.processing_s = 0.0
        """Seconds a batch stays ``in_progress`` after its creation."""
        self.expire_requests = 0
        """The next this many requests processed end ``expired`` instead of being answered."""
        self.drop_requests = 0
        """The next this many requests processed are left out of their batch's results (the API lost them)."""
        self.malformed_results = 0
        """The next this many requests processed get an ``errored`` result line without its error body."""
        self.unreadable_results = False
        """Serve every batch's results as a body that is not JSON Lines."""
        self.created = 0
        """Batches created."""
        self.submitted = 0
        """Requests received in batches."""
        self.batches: dict[str, _FakeBatch] = {}
        self._ids = itertools.count(1)

    async def answer(self, method: str, target: str, body: bytes) -> HttpReply:
        """Answer a request under ``/v1/messages/batches``."""
        path, _, query = target.partition("?")
        parts = path[len(_PREFIX) :].strip("/").split("/") if path != _PREFIX else []
        if method == "POST" and not parts:
            return self._create(body)
        if method == "GET" and not parts:
            return json_reply(200, self._list(query))
        batch = self.batches.get(parts[0]) if parts else None
        if batch is None:
            message = f"FakeAnthropicServer has no message batch {parts[0] if parts else ''!r} ({method} {path})."
            return json_reply(404, error_body("not_found_error", message))
        if method == "DELETE" and len(parts) == 1:
            await self._process(batch)
            if batch.ended_at is None:
                message = f"Message batch {batch.id!r} is still processing: cancel it before deleting it."
                return json_reply(400, error_body("invalid_request_error", message))
            del self.batches[batch.id]
            return json_reply(200, {"id": batch.id, "type": "message_batch_deleted"})
        if method == "POST" and parts[1:] == ["cancel"]:
            if batch.ended_at is None and batch.cancel_initiated_at is None:
                batch.cancel_initiated_at = datetime.now(UTC)
            return json_reply(200, self._object(batch))
        if method == "GET" and len(parts) == 1:
            await self._process(batch)
            return json_reply(200, self._object(batch))
        if method == "GET" and parts[1:] == ["results"]:
            await self._process(batch)
            if batch.results is None:
                message = f"Message batch {batch.id!r} has not ended: its results are not ready yet."
                return json_reply(400, error_body("invalid_request_error", message))
            reply = json_reply(200, None)
            reply.body = b"".join(json.dumps(line).encode() + b"\n" for line in batch.results)
            if self.unreadable_results:
                reply.body = b'{"custom_id": "not json lines\n'
            reply.headers["content-type"] = "application/binary"
            return reply
        message = f"FakeAnthropicServer does not serve {method} {path}."
        return json_reply(404, error_body("not_found_error", message))

    def _create(self, body: bytes) -> HttpReply:
        try:
            parsed: Any = json.loads(body)
            requests = cast("list[dict[str, Any]]", parsed["requests"])
            ids = [request["custom_id"] for request in requests]
            for request in requests:
                if not isinstance(request["params"], dict):
                    raise TypeError("params must be an object")
        except (ValueError, KeyError, TypeError) as exc:
            message = f"requests: every request needs a custom_id and a params object ({exc!r})."
            return json_reply(400, error_body("invalid_request_error", message))
        if not 0 < len(requests) <= _MAX_REQUESTS or len(set(ids)) != len(ids):
            message = f"requests: 1 to {_MAX_REQUESTS} requests with unique custom_ids, got {len(requests)}."
            return json_reply(400, error_body("invalid_request_error", message))
        number = next(self._ids)
        batch = _FakeBatch(
            id=f"msgbatch_fake{number:015d}", requests=requests, created=time.monotonic(), created_at=datetime.now(UTC)
        )
        self.batches[batch.id] = batch
        self.created += 1
        self.submitted += len(requests)
        return json_reply(200, self._object(batch))

    def _list(self, query: str) -> dict[str, Any]:
        fields = dict(urllib.parse.parse_qsl(query))
        newest_first = list(reversed(self.batches.values()))
        if "after_id" in fields:
            ids = [batch.id for batch in newest_first]
            start = ids.index(fields["after_id"]) + 1 if fields["after_id"] in ids else len(ids)
            newest_first = newest_first[start:]
        limit = int(fields.get("limit") or 20)
        page = [self._object(batch) for batch in newest_first[:limit]]
        return {
            "data": page,
            "has_more": len(newest_first) > limit,
            "first_id": page[0]["id"] if page else None,
            "last_id": page[-1]["id"] if page else None,
        }

    async def _process(self, batch: _FakeBatch) -> None:
        """End the batch once its processing time has passed (or it was canceled): answer its requests."""
        if batch.results is not None:
            return
        canceled = batch.cancel_initiated_at is not None
        if not canceled and time.monotonic() - batch.created < self.processing_s:
            return
        results: list[dict[str, Any]] = []
        for request in batch.requests:
            if not canceled and self.drop_requests > 0:
                self.drop_requests -= 1
                continue
            if not canceled and self.malformed_results > 0:
                self.malformed_results -= 1
                results.append({"custom_id": request["custom_id"], "result": {"type": "errored"}})
                continue
            results.append(
                {"custom_id": request["custom_id"], "result": await self._result(request["params"], canceled)}
            )
        batch.results = results
        batch.ended_at = datetime.now(UTC)
        for line in results:
            kind = line["result"]["type"]
            batch.counts[kind] = batch.counts.get(kind, 0) + 1

    async def _result(self, params: dict[str, Any], canceled: bool) -> dict[str, Any]:
        if canceled:
            return {"type": "canceled"}
        if self.expire_requests > 0:
            self.expire_requests -= 1
            return {"type": "expired"}
        server = self.server
        if server.record_requests:
            server.requests.append(params)
            server.request_headers.append({})
        server.requests_served += 1
        call = server.requests_served
        try:
            reply = await server._render(server._pick(params, {}, call), params, call)
        except ScriptError as exc:
            server.problems.append(str(exc))
            return {"type": "errored", "error": {**error_body("invalid_request_error", str(exc)), "request_id": None}}
        if reply.status == 200:
            message = json.loads(reply.body)
            message["usage"]["service_tier"] = "batch"
            return {"type": "succeeded", "message": message}
        if reply.action != "send":
            return {
                "type": "errored",
                "error": {**error_body("api_error", "Internal server error"), "request_id": None},
            }
        error = json.loads(reply.body) if reply.body.startswith(b"{") else error_body("api_error", "malformed")
        return {"type": "errored", "error": {**error, "request_id": reply.headers.get("request-id")}}

    def _object(self, batch: _FakeBatch) -> dict[str, Any]:
        """The Message Batch object the API returns for ``batch``."""
        ended = batch.results is not None
        total = len(batch.requests)
        kinds: tuple[ResultType, ...] = ("succeeded", "errored", "canceled", "expired")
        counts = {kind: batch.counts.get(kind, 0) for kind in kinds}
        status = "ended" if ended else ("canceling" if batch.cancel_initiated_at is not None else "in_progress")
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": status,
            "request_counts": {"processing": 0 if ended else total, **counts},
            "ended_at": _stamp(batch.ended_at),
            "created_at": _stamp(batch.created_at),
            "expires_at": _stamp(batch.created_at + _EXPIRY),
            "archived_at": None,
            "cancel_initiated_at": _stamp(batch.cancel_initiated_at),
            "results_url": f"{self.server.base_url}{_PREFIX}/{batch.id}/results" if ended else None,
        }

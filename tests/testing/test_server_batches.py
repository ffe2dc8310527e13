"""``FakeAnthropicServer``'s Message Batches endpoints, through the ``anthropic`` SDK's own ``messages.batches``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import pytest

from typedagent.testing import FakeAnthropicServer, api_error, text

PARAMS: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "hi"}],
}


def _requests(*ids: str) -> list[Any]:
    return [{"custom_id": custom_id, "params": PARAMS} for custom_id in ids]


async def test_server_batches_create_retrieve_results_through_the_sdk() -> None:
    """A batch is in progress until its processing time passed, then ends with one result line per request."""
    async with FakeAnthropicServer([text("one"), api_error(529), text("three")]) as server:
        server.batches.processing_s = 0.2
        async with server.client() as client:
            created = await client.messages.batches.create(requests=_requests("a", "b", "c"))
            assert created.type == "message_batch"
            assert created.processing_status == "in_progress"
            assert created.request_counts.processing == 3
            assert created.results_url is None
            assert created.expires_at > created.created_at
            await asyncio.sleep(0.25)
            ended = await client.messages.batches.retrieve(created.id)
            results = {line.custom_id: line.result async for line in await client.messages.batches.results(created.id)}
    assert ended.processing_status == "ended"
    assert ended.ended_at is not None
    assert ended.results_url == f"{server.base_url}/v1/messages/batches/{created.id}/results"
    assert (ended.request_counts.succeeded, ended.request_counts.errored, ended.request_counts.processing) == (2, 1, 0)
    first, second, third = results["a"], results["b"], results["c"]
    assert first.type == "succeeded"
    assert third.type == "succeeded"
    assert [block.type for block in first.message.content] == ["text"]
    assert first.message.usage.service_tier == "batch"
    assert second.type == "errored"
    assert second.error.error.type == "overloaded_error"
    assert server.batches.created == 1
    assert server.batches.submitted == 3
    assert server.requests == [PARAMS, PARAMS, PARAMS]


async def test_server_batches_expire_cancel_list_delete() -> None:
    """Expired requests, a canceled batch, the newest-first list, and deletion of an ended batch."""
    async with FakeAnthropicServer([text("kept")]) as server, server.client() as client:
        server.batches.expire_requests = 1
        first = await client.messages.batches.create(requests=_requests("x", "y"))
        results = [line async for line in await client.messages.batches.results(first.id)]
        assert [(line.custom_id, line.result.type) for line in results] == [("x", "expired"), ("y", "succeeded")]
        server.batches.processing_s = 60
        second = await client.messages.batches.create(requests=_requests("z"))
        canceling = await client.messages.batches.cancel(second.id)
        assert canceling.processing_status == "canceling"
        assert canceling.cancel_initiated_at is not None
        canceled = await client.messages.batches.retrieve(second.id)
        assert canceled.processing_status == "ended"
        assert canceled.request_counts.canceled == 1
        listed = [batch.id async for batch in client.messages.batches.list(limit=1)]
        assert listed == [second.id, first.id]
        deleted = await client.messages.batches.delete(first.id)
        assert deleted.type == "message_batch_deleted"
        with pytest.raises(anthropic.NotFoundError):
            await client.messages.batches.retrieve(first.id)


async def test_server_batches_refuses_bad_batches() -> None:
    """Duplicate custom_ids, results before the end, and deleting a batch in progress are 400s."""
    async with FakeAnthropicServer([]) as server, server.client(max_retries=0) as client:
        with pytest.raises(anthropic.BadRequestError, match="unique custom_ids"):
            await client.messages.batches.create(requests=_requests("a", "a"))
        server.batches.processing_s = 60
        batch = await client.messages.batches.create(requests=_requests("a"))
        with pytest.raises(anthropic.BadRequestError, match="still processing"):
            await client.messages.batches.delete(batch.id)


def test_server_batches_unknown_batches_and_malformed_requests() -> None:
    """An unknown batch or route is a 404, a body without requests a 400, results before the end a 400."""
    import httpx2

    with FakeAnthropicServer([]) as server:
        base = f"{server.base_url}/v1/messages/batches"
        assert httpx2.get(f"{base}/msgbatch_nope").status_code == 404
        assert httpx2.post(base, content=b'{"requests": [{"custom_id": "a"}]}').status_code == 400
        assert httpx2.post(base, content=b'{"requests": [{"custom_id": "a", "params": 1}]}').status_code == 400
        server.batches.processing_s = 60
        created = httpx2.post(base, content=json.dumps({"requests": _requests("a")}).encode()).json()
        assert httpx2.get(f"{base}/{created['id']}/results").status_code == 400
        assert httpx2.get(f"{base}/{created['id']}/nothing").status_code == 404
        listed = httpx2.get(f"{base}?limit=5&after_id=msgbatch_unknown").json()
        assert listed == {"data": [], "has_more": False, "first_id": None, "last_id": None}

"""Beyond one client: (a) the Message Batches transport against online mode; (b) Ray against local execute_many.

(a) COUNT executions of a two-call scenario (a helper call, then the output call) on ``FakeAnthropicServer``
(per conversation, LATENCY ms per request), online (``execute_many(concurrency=COUNT)``) and with
``transport=MessageBatches(...)`` while the server keeps each batch ``in_progress`` for TURNAROUND seconds (the
simulated batch turnaround). Token cost is priced from the responses (batch results carry
``service_tier: "batch"``); the batch run's wall time should be about two turnarounds (one batch per round).

(b) RAY_COUNT executions of the same scenario on ``FakeAnthropicServerProcess`` (its own process): local
``execute_many`` (concurrency 64) against ``execute_many_ray`` on a local Ray cluster (``ray.init(num_cpus=2)``)
with 1 and 2 workers (shards of SHARD inputs, concurrency 64 per worker). Each Ray run includes starting its
actors; the cluster start is measured apart. Overhead per execution = (Ray wall - local wall) / RAY_COUNT.

    .venv/bin/python bench/bench_scale.py [--count 200] [--latency-ms 20] [--turnaround 2]
        [--ray-count 400] [--shard 50] [--only a|b]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import time
from typing import Any

import anthropic
from _common import machine, print_table
from pydantic import BaseModel

from typedagent import ManyResult, MessageBatches, OutputTool, define_agent, execute_many, tool
from typedagent.testing import FakeAnthropicServer, FakeAnthropicServerProcess, output_call, tool_call


class Answer(BaseModel):
    city: str
    population: int


@tool
def lookup(query: str) -> str:
    """Look up a fact."""
    return f"facts about {query}"


AGENT = define_agent(
    name="scale",
    model="claude-sonnet-4-6",
    instructions="Answer geography questions.",
    output=OutputTool(Answer, name="answer"),
    helpers=[lookup],
)
SCRIPT = [tool_call("lookup", {"query": "Paris"}), output_call(Answer(city="Paris", population=2_100_000))]


async def _run(client: Any, count: int, **options: Any) -> tuple[float, list[ManyResult[Answer]]]:
    started = time.perf_counter()
    stream = execute_many(AGENT, [f"city {n}" for n in range(count)], client=client, **options)
    async with contextlib.aclosing(stream):
        results = [item async for item in stream]
    elapsed = time.perf_counter() - started
    if not all(item.result.ok for item in results) or len(results) != count:
        raise SystemExit("a run failed: the benchmark is not measuring what it should")
    return elapsed, results


def _cost(results: list[ManyResult[Answer]]) -> float:
    return sum(item.result.metadata.cost_usd or 0.0 for item in results)


async def batches(count: int, latency_ms: float, turnaround: float) -> None:
    with FakeAnthropicServer(SCRIPT, per_conversation=True, latency_ms=latency_ms, record_requests=False) as server:
        async with server.client(keep_alive=True) as client:
            online_s, online = await _run(client, count, concurrency=count)
        server.batches.processing_s = turnaround
        settings = MessageBatches(poll_s=0.1, max_poll_s=0.5, gather_s=5)
        async with server.client(keep_alive=True) as client:
            batch_s, batched = await _run(client, count, concurrency=count, transport=settings)
        made = server.batches.created
    online_cost, batch_cost = _cost(online), _cost(batched)
    rows = [
        ("online", f"{online_s:.2f} s", f"${online_cost:.4f}", "1.00x", "-", f"{2 * count:,}"),
        (
            "message_batches",
            f"{batch_s:.2f} s ({batch_s / (2 * turnaround):.2f}x of 2 turnarounds)",
            f"${batch_cost:.4f}",
            f"{batch_cost / online_cost:.2f}x",
            f"{made}",
            f"{2 * count:,}",
        ),
    ]
    print_table(
        f"(a) {count} executions x 2 model calls, {latency_ms:g} ms per request, batch turnaround {turnaround:g} s",
        ["transport", "wall", "token cost", "cost vs online", "batches", "requests"],
        rows,
    )


def _ray_round(url: str, count: int, workers: int, shard: int) -> float:
    from typedagent.ray import execute_many_ray_sync

    factory = functools.partial(anthropic.AsyncAnthropic, base_url=url, api_key="test")
    started = time.perf_counter()
    results = execute_many_ray_sync(
        AGENT, [f"city {n}" for n in range(count)], workers=workers, shard_size=shard, client_factory=factory
    )
    elapsed = time.perf_counter() - started
    if len(results) != count or not all(item.result.ok for item in results):
        raise SystemExit("a Ray run failed: the benchmark is not measuring what it should")
    return elapsed


def ray_rows(count: int, latency_ms: float, shard: int) -> None:
    import ray

    with FakeAnthropicServerProcess(SCRIPT, per_conversation=True, latency_ms=latency_ms) as server:

        async def local() -> float:
            async with anthropic.AsyncAnthropic(base_url=server.base_url, api_key="test") as client:
                return (await _run(client, count, concurrency=64))[0]

        local_s = asyncio.run(local())
        started = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        init_s = time.perf_counter() - started
        try:
            walls = {workers: _ray_round(server.base_url, count, workers, shard) for workers in (1, 2)}
        finally:
            ray.shutdown()
    rows = [("local execute_many", f"{local_s:.2f} s", f"{count / local_s:,.0f}/s", "1.00x", "-")]
    for workers, wall in walls.items():
        overhead_ms = (wall - local_s) / count * 1e3
        rows.append(
            (
                f"Ray, {workers} worker(s)",
                f"{wall:.2f} s",
                f"{count / wall:,.0f}/s",
                f"{local_s / wall:.2f}x",
                f"{overhead_ms:+.2f} ms",
            )
        )
    print_table(
        f"(b) {count} executions x 2 model calls, {latency_ms:g} ms per request, shards of {shard}; "
        f"Ray cluster start {init_s:.1f} s (not counted)",
        ["run", "wall (actor start included)", "throughput", "speed vs local", "overhead per execution"],
        rows,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--latency-ms", type=float, default=20)
    parser.add_argument("--turnaround", type=float, default=2.0)
    parser.add_argument("--ray-count", type=int, default=400)
    parser.add_argument("--shard", type=int, default=50)
    parser.add_argument("--only", choices=["a", "b"])
    args = parser.parse_args()
    print(machine())
    if args.only != "b":
        asyncio.run(batches(args.count, args.latency_ms, args.turnaround))
    if args.only != "a":
        ray_rows(args.ray_count, args.latency_ms, args.shard)


if __name__ == "__main__":
    main()

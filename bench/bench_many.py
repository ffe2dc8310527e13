"""execute_many: (a) under a rate limit, against the minimum it allows; (b) without limits, against a raw SDK loop.

(a) ``FakeAnthropicServerProcess`` with ``ServerRateLimits(requests_per_minute=RPM)`` (its bucket holds a
minute's worth and starts full, as the API describes) and a latency per request. Each execution makes
CALLS API calls (helper calls, then the output call). The minimum the limit allows: the requests beyond
the full bucket, at RPM/60 per second, plus one latency for the last response. ``execute_many`` is
measured beside the naive way, ``asyncio.gather`` over ``execute_agent`` on the same client (the SDK's
default ``max_retries=2`` retrying 429s after ``retry-after``). A fresh server (full bucket) per round.

(b) No limits: the ``bench_load.py`` scenario (a helper call, an output call; with ``--faults``, also the
529 the SDK retries first, which makes the limiter halve the calls it lets through) with COUNT
executions at C=1,000 in flight: ``execute_many(concurrency=1000)`` (its limiter on, as by
default) against a raw SDK loop behind an ``asyncio.Semaphore(1000)``: each round in a fresh process,
alternating, medians, and the median of each round's ratio (its two runs are neighbours in time, so the
ratio cancels the machine's slow drifts). Then the
Python heap per in-flight execution (``tracemalloc``), all held in flight inside a helper tool: through
``execute_many`` and through a plain ``asyncio.gather`` of ``execute_agent``, each in a fresh process.

    .venv/bin/python bench/bench_many.py [--executions 2000] [--rpm 2000] [--latency-ms 50] [--calls 2]
        [--rounds 3] [--b-rounds 7] [--count 2000] [--concurrency 1000] [--transport httpx2|aiohttp]
        [--faults] [--headers] [--only a|b]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import subprocess
import sys
import time
import tracemalloc
from typing import Any, NamedTuple

import anthropic
import httpx2
from _common import fmt_ms, machine, median, print_table
from bench_load import PROMPT, SCRIPT, Gate, check, make_agent, make_client, raw_loop, typedagent_request
from pydantic import BaseModel

from typedagent import OutputTool, define_agent, execute_agent, execute_many, tool
from typedagent.testing import FakeAnthropicServerProcess, ServerRateLimits, output_call, response, tool_call


class Answer(BaseModel):
    ticket: int
    summary: str


@tool
async def fetch(ticket: int) -> str:
    """Read a ticket."""
    return f"ticket {ticket}: VPN drops"


LIMITED_AGENT = define_agent(
    name="limited", model="claude-sonnet-4-6", output=OutputTool(Answer), helpers=[fetch], max_tokens=1024
)


def limited_script(calls: int) -> list[Any]:
    script: list[Any] = [response(tool_call("fetch", {"ticket": i})) for i in range(calls - 1)]
    script.append(output_call(Answer(ticket=1, summary="VPN drops")))
    return script


class Limited(NamedTuple):
    wall: float
    cpu: float
    failed: int
    rate_limited: int
    requests: int


async def limited_round(how: str, args: argparse.Namespace) -> Limited:
    limits = ServerRateLimits(requests_per_minute=args.rpm)
    server = FakeAnthropicServerProcess(
        limited_script(args.calls), per_conversation=True, latency_ms=args.latency_ms, rate_limits=limits
    )
    async with server:
        if args.transport == "aiohttp":
            http: Any = anthropic.DefaultAioHttpClient(timeout=600)
        else:
            http = httpx2.AsyncClient(limits=httpx2.Limits(max_connections=1000), timeout=600)
        client = anthropic.AsyncAnthropic(api_key="bench", base_url=server.base_url, http_client=http)
        prompts = [f"ticket {i}" for i in range(args.executions)]
        cpu, started = time.process_time(), time.perf_counter()
        if how == "execute_many":
            results = [
                item.result async for item in execute_many(LIMITED_AGENT, prompts, client=client, concurrency=256)
            ]
        else:
            results = await asyncio.gather(*(execute_agent(LIMITED_AGENT, p, client=client) for p in prompts))
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        await client.close()
        stats = await asyncio.to_thread(server.stats)
    return Limited(wall, cpu, sum(not r.ok for r in results), stats["rate_limited"], stats["requests_served"])


async def rate_limited(args: argparse.Namespace) -> None:
    requests = args.executions * args.calls
    rate = args.rpm / 60
    minimum = max(0, requests - args.rpm) / rate + args.latency_ms / 1000
    runs: dict[str, list[Limited]] = {"execute_many": [], "asyncio.gather(execute_agent)": []}
    for _ in range(args.rounds):
        for how in runs:
            runs[how].append(await limited_round(how, args))
    rows = []
    for how, results in runs.items():
        wall = median([r.wall for r in results])
        rows.append(
            [
                how,
                f"{wall:,.1f} s",
                f"{minimum:,.1f} s",
                f"{wall / minimum:.3f}x",
                f"{median([r.cpu for r in results]):,.1f} s",
                f"{median([r.failed for r in results]):,.0f} / {args.executions:,}",
                f"{median([r.rate_limited for r in results]):,.0f}",
                f"{median([r.requests for r in results]):,.0f}",
            ]
        )
    print_table(
        f"(a) {args.executions:,} executions x {args.calls} API calls under {args.rpm:,} requests/minute "
        f"(bucket of a minute, starting full), {args.latency_ms:g} ms latency, {args.transport}; "
        f"median of {args.rounds} rounds",
        ["how", "wall", "minimum the limit allows", "wall / minimum", "client CPU", "failed", "429s sent", "requests"],
        rows,
    )


class Batch(NamedTuple):
    wall: float
    cpu: float
    correct: int


async def throughput_round(base_url: str, kind: str, count: int, concurrency: int, transport: str) -> Batch:
    # 1,000 connections opening at once on a busy 2-core machine can outlast the SDK's 5 s connect timeout.
    client = make_client(base_url, transport, timeout=httpx2.Timeout(600, connect=120))
    agent = make_agent(None)
    request = await typedagent_request()
    await execute_agent(agent, PROMPT.format(i=0), client=client, deps=0)  # warm-up: imports, connections
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    if kind == "raw SDK loop":
        gate = asyncio.Semaphore(concurrency)

        async def bounded(i: int) -> Any:
            async with gate:
                return await raw_loop(client, request, i)

        raw = await asyncio.gather(*(bounded(i) for i in range(count)))
        correct = sum(result.owner == "ana" for result in raw)
    else:
        from typedagent import RunInput

        inputs = (RunInput(PROMPT.format(i=i), deps=i) for i in range(count))
        results = [item async for item in execute_many(agent, inputs, client=client, concurrency=concurrency)]
        correct = check([item.result for item in sorted(results, key=lambda item: item.index)])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    await client.close()
    return Batch(wall, cpu, correct)


async def _in_child(what: str, *arguments: str) -> list[str]:
    """Run this script with ``arguments`` in a fresh process; the words of the last line it prints."""
    command = [sys.executable, __file__, *arguments]
    done = await asyncio.to_thread(subprocess.run, command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{what} failed:\n{done.stderr}")
    return done.stdout.strip().splitlines()[-1].split()


async def _child_round(base_url: str, kind: str, args: argparse.Namespace) -> Batch:
    """One round in a fresh process, so no round inherits the heap, the GC generations or the caches of another."""
    options = ["--count", str(args.count), "--concurrency", str(args.concurrency), "--transport", args.transport]
    wall, cpu, correct = await _in_child(f"the {kind} round", "--round", kind, base_url, *options)
    return Batch(float(wall), float(cpu), int(correct))


async def throughput(args: argparse.Namespace) -> None:
    script = SCRIPT if args.faults else SCRIPT[1:]
    # With --headers the server sends the API's rate-limit headers, for a limit far too high to bind: the
    # limiter then runs as SDK middleware on every request, as it does against the real API.
    unbound = ServerRateLimits(requests_per_minute=100_000_000) if args.headers else None
    with FakeAnthropicServerProcess(script, per_conversation=True, rate_limits=unbound) as server:
        kinds = ["raw SDK loop", "execute_many"]
        runs: dict[str, list[Batch]] = {kind: [] for kind in kinds}
        for _ in range(args.b_rounds):
            for kind in kinds:
                runs[kind].append(await _child_round(server.base_url, kind, args))
            kinds.reverse()
        base = median([args.count / run.wall for run in runs["raw SDK loop"]])
        # Each round's two runs are neighbours in time: their ratio cancels the machine's slow drifts.
        paired = [raw.wall / run.wall for raw, run in zip(runs["raw SDK loop"], runs["execute_many"], strict=True)]
        spread = f"{median(paired):.3f}x ({min(paired):.2f}-{max(paired):.2f})"
        rows = []
        for kind, batches in runs.items():
            rate = median([args.count / run.wall for run in batches])
            cpu = median([run.cpu for run in batches])
            rows.append(
                [
                    kind,
                    fmt_ms(median([run.wall for run in batches])),
                    f"{rate:,.0f}/s",
                    f"{rate / base:.3f}x",
                    "1.000x" if kind == "raw SDK loop" else spread,
                    f"{cpu / args.count * 1e3:.2f} ms",
                    f"{min(run.correct for run in batches):,} / {args.count:,} in every round",
                ]
            )
        print_table(
            f"(b) {args.count:,} executions at C={args.concurrency:,} in flight, no rate limit ({args.transport}; "
            f"{len(script)} HTTP requests each{', the first a 529' if args.faults else ''}"
            f"{', rate-limit headers on every response' if args.headers else ', no rate-limit headers'}; "
            f"server in its own process; each round in a fresh process; median of {args.b_rounds} rounds, alternating)",
            ["client", "wall", "executions/s", "vs raw (medians)", "vs raw (paired)", "CPU / execution", "correct"],
            rows,
        )
        memory_rows = []
        for how in ("asyncio.gather(execute_agent)", "execute_many"):
            options = ("--child", how, server.base_url, "--concurrency", str(args.concurrency))
            (heap,) = await _in_child(f"measuring {how}", *options)
            memory_rows.append([how, f"{float(heap) / 1024:.1f} KiB"])
        print_table(
            f"Python heap per in-flight execution ({args.concurrency:,} held inside a helper tool; tracemalloc; "
            "each in a fresh process)",
            ["how", "heap per execution"],
            memory_rows,
        )


async def memory_child(how: str, base_url: str, count: int) -> float:
    """Heap growth per execution with ``count`` held in flight inside their helper tool."""
    from typedagent import RunInput

    probe = make_client(base_url, "httpx2")
    await execute_agent(make_agent(None), PROMPT.format(i=0), client=probe, deps=0)  # warm-up
    await probe.close()
    tracemalloc.start()
    gate = Gate(count)
    agent = make_agent(gate)
    client = make_client(base_url, "httpx2", timeout=httpx2.Timeout(600, connect=120))
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    if how == "execute_many":
        inputs = [RunInput(PROMPT.format(i=i), deps=i) for i in range(count)]
        runner: Any = asyncio.ensure_future(_drain(execute_many(agent, inputs, client=client, concurrency=count)))
    else:
        runner = asyncio.gather(
            *(execute_agent(agent, PROMPT.format(i=i), client=client, deps=i) for i in range(count))
        )
    await asyncio.wait_for(gate.all_in.wait(), 600)
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - before
    gate.release.set()
    await runner
    await client.close()
    return grown / count


async def _drain(stream: Any) -> list[Any]:
    return [item async for item in stream]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executions", type=int, default=2_000, help="(a) executions")
    parser.add_argument("--rpm", type=int, default=2_000, help="(a) requests per minute")
    parser.add_argument("--latency-ms", type=float, default=50, help="(a) server latency")
    parser.add_argument("--calls", type=int, default=2, help="(a) API calls per execution")
    parser.add_argument("--rounds", type=int, default=3, help="(a) rounds")
    parser.add_argument("--b-rounds", type=int, default=7, help="(b) rounds, each in a fresh process")
    parser.add_argument("--count", type=int, default=2_000, help="(b) executions")
    parser.add_argument("--concurrency", type=int, default=1_000, help="(b) executions in flight")
    parser.add_argument("--transport", choices=["httpx2", "aiohttp"], default="httpx2", help="HTTP transport")
    parser.add_argument("--faults", action="store_true", help="(b) a 529 before each execution's first answer")
    parser.add_argument("--headers", action="store_true", help="(b) rate-limit headers (of a limit that never binds)")
    parser.add_argument("--only", choices=["a", "b"])
    parser.add_argument("--child", nargs=2, metavar=("HOW", "BASE_URL"), help=argparse.SUPPRESS)
    parser.add_argument("--round", nargs=2, metavar=("KIND", "BASE_URL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.round:
        kind, base_url = args.round
        done = asyncio.run(throughput_round(base_url, kind, args.count, args.concurrency, args.transport))
        print(done.wall, done.cpu, done.correct)
        return
    if args.child:
        print(asyncio.run(memory_child(args.child[0], args.child[1], args.concurrency)))
        return
    print(f"Machine: {machine()}")
    if args.only != "b":
        asyncio.run(rate_limited(args))
    if args.only != "a":
        asyncio.run(throughput(args))


if __name__ == "__main__":
    main()

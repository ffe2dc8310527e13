"""Load: 1,000 concurrent executions on one event loop, and memory per in-flight execution.

Server: ``FakeAnthropicServerProcess`` (its own process, so it does not share the client's CPU), in
per-conversation mode. Every execution plays: a 529 the SDK retries (``retry-after`` 10 ms), a
response calling a helper, an output call — 3 API calls, 4 HTTP requests. All executions share one
``AsyncAnthropic``, as an application would. Each is checked: output, tokens, iterations, and that
its tool result carries its own ``deps`` (no cross-talk).

Memory: all executions are held in flight at once, then measured: (1) waiting on the API (every
execution's first HTTP response is held back at the client's transport), (2) inside a helper tool
(the helper waits until every execution has reached it). Python heap per execution from
``tracemalloc`` (exact, allocator-independent); resident memory per execution from
``/proc/self/status`` (what the OS sees, allocator slack included). The same measurement for
bare SDK calls (``client.messages.create`` with the same request, no typedagent) separates the
SDK's own cost per request.

    .venv/bin/python bench/bench_load.py [--count 1000] [--rounds 3] [--no-aiohttp] [--memory-only]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

import anthropic
import httpx2
from _common import fmt_ms, machine, median, print_table
from pydantic import BaseModel

from typedagent import AgentDefinition, OutputTool, RunContext, TokenUsage, define_agent, execute_agent, tool
from typedagent.testing import (
    FakeAnthropicServerProcess,
    ScriptedClient,
    ScriptItem,
    api_error,
    output_call,
    response,
    tool_call,
    usage,
)

PROMPT = "Ticket {i}: the VPN drops every hour on every laptop of the sales team."
SCRIPT: list[ScriptItem] = [
    api_error(529, retry_after=0.01),
    response(tool_call("fetch", {"field": "owner"}), usage=usage(120, 30)),
    output_call({"ticket": 0, "owner": "ana", "summary": "VPN drops hourly"}),
]
CALLS, HTTP_REQUESTS = 2, 3
"""Per execution: API calls that reach typedagent (the 529 is retried inside the SDK), HTTP requests."""
TOKENS = TokenUsage(input_tokens=130, output_tokens=35)
GATE_TIMEOUT_S = 300


class Ticket(BaseModel):
    ticket: int
    owner: str
    summary: str


class Gate:
    """Holds callers until ``count`` of them have arrived, then lets them all go on."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.arrived = 0
        self.all_in = asyncio.Event()
        self.release = asyncio.Event()

    async def wait(self) -> None:
        self.arrived += 1
        if self.arrived == self.count:
            self.all_in.set()
        await self.release.wait()


class HoldingTransport(httpx2.AsyncBaseTransport):
    """Forwards to the real transport; holds the first response each conversation gets at the gate.

    A conversation is known by its prompt, so a request the SDK had to retry (a connect timeout under
    load) is still held exactly once.
    """

    def __init__(self, gate: Gate | None) -> None:
        self.inner = httpx2.AsyncHTTPTransport(limits=anthropic.DEFAULT_CONNECTION_LIMITS)
        self.gate = gate
        self.held: set[str] = set()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        reply = await self.inner.handle_async_request(request)
        if self.gate is not None:
            prompt = json.dumps(json.loads(request.content)["messages"][0]["content"])
            if prompt not in self.held:
                self.held.add(prompt)
                await self.gate.wait()
        return reply

    async def aclose(self) -> None:
        await self.inner.aclose()


def make_agent(tool_gate: Gate | None) -> AgentDefinition[Ticket, int]:
    @tool
    async def fetch(ctx: RunContext[int], field: str) -> str:
        """Read a field of this execution's ticket."""
        if tool_gate is not None:
            await tool_gate.wait()
        return json.dumps({"ticket": ctx.deps, field: "ana"})

    return define_agent(
        name="load",
        model="claude-sonnet-4-6",
        instructions="You triage support tickets.",
        output=OutputTool(Ticket),
        helpers=[fetch],
        deps_type=int,
    )


def make_client(
    base_url: str, transport: str, gate: Gate | None = None, timeout: httpx2.Timeout = anthropic.DEFAULT_TIMEOUT
) -> anthropic.AsyncAnthropic:
    if transport == "aiohttp":
        http: Any = anthropic.DefaultAioHttpClient()
    else:
        http = httpx2.AsyncClient(transport=HoldingTransport(gate), timeout=timeout)
    return anthropic.AsyncAnthropic(api_key="bench", base_url=base_url, http_client=http, max_retries=2)


def check(results: list[Any]) -> int:
    """How many executions returned exactly their own, correct result."""
    good = 0
    for i, result in enumerate(results):
        if not result.ok:
            continue
        meta = result.metadata
        tool_result = meta.messages[2]["content"][0]["content"]
        if (
            result.output.owner == "ana"
            and meta.tokens == TOKENS
            and meta.iterations == CALLS
            and meta.messages[0]["content"] == PROMPT.format(i=i)
            and json.loads(tool_result) == {"ticket": i, "owner": "ana"}
        ):
            good += 1
    return good


async def typedagent_request() -> dict[str, Any]:
    """Exactly the request typedagent sends (minus messages), so the raw loop sends the same."""
    scripted = ScriptedClient([output_call(Ticket(ticket=0, owner="ana", summary="-"))])
    await execute_agent(make_agent(None), PROMPT.format(i=0), client=scripted, deps=0)
    return {key: value for key, value in scripted.requests[0].items() if key != "messages"}


async def raw_loop(client: anthropic.AsyncAnthropic, request: dict[str, Any], i: int) -> Ticket:
    """The floor: a minimal hand-written tool loop on the SDK for the same scenario."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT.format(i=i)}]
    while True:
        reply = await client.messages.create(**request, messages=messages)  # type: ignore[arg-type]
        messages.append({"role": "assistant", "content": reply.content})
        results = []
        for block in reply.content:
            if block.type != "tool_use":
                continue
            if block.name == "final_output":
                return Ticket.model_validate(block.input)
            content = json.dumps({"ticket": i, block.input["field"]: "ana"})
            results.append({"type": "tool_result", "tool_use_id": block.id, "content": content})
        messages.append({"role": "user", "content": results})


class Batch(NamedTuple):
    wall: float
    cpu: float
    correct: int


async def batch(base_url: str, client_kind: str, transport: str, count: int) -> Batch:
    """``count`` executions started together on a fresh shared client: wall, client CPU, correct results."""
    client = make_client(base_url, transport)
    agent = make_agent(None)
    request = await typedagent_request()

    def start(i: int) -> Awaitable[Any]:
        if client_kind == "raw SDK loop":
            return raw_loop(client, request, i)
        return execute_agent(agent, PROMPT.format(i=i), client=client, deps=i)

    await start(0)  # warm-up: imports, connection pool
    cpu, wall = time.process_time(), time.perf_counter()
    results = await asyncio.gather(*(start(i) for i in range(count)))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    await client.close()
    raw = client_kind == "raw SDK loop"
    return Batch(wall, cpu, sum(result.owner == "ana" for result in results) if raw else check(list(results)))


async def throughput(base_url: str, transports: list[str], count: int, rounds: int) -> list[list[str]]:
    """Every (client, transport) in alternation, round after round (order reversed each round); medians."""
    order = [(kind, transport) for transport in transports for kind in ("raw SDK loop", "typedagent")]
    batches: dict[tuple[str, str], list[Batch]] = {key: [] for key in order}
    for _ in range(rounds):
        for kind, transport in order:
            batches[kind, transport].append(await batch(base_url, kind, transport, count))
        order.reverse()
    rows = []
    for (kind, transport), runs in batches.items():
        wall, cpu = median([run.wall for run in runs]), median([run.cpu for run in runs])
        correct = min(run.correct for run in runs)
        rows.append(
            [
                kind,
                transport,
                fmt_ms(wall),
                f"{count / wall:,.0f}/s",
                fmt_ms(cpu),
                f"{cpu / count * 1e3:.2f} ms",
                f"{correct:,} / {count:,} in every round",
            ]
        )
    return rows


def rss_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


async def in_flight(count: int, gate: Gate, start: Callable[[int], Awaitable[Any]], measure: str) -> float:
    """Start ``count`` coroutines; once all are held at ``gate``, the growth of ``measure`` per coroutine."""

    def now() -> int:
        return tracemalloc.get_traced_memory()[0] if measure == "heap" else rss_bytes()

    gc.collect()
    before = now()
    tasks = [asyncio.ensure_future(start(i)) for i in range(count)]
    try:
        await asyncio.wait_for(gate.all_in.wait(), GATE_TIMEOUT_S)
    except TimeoutError:
        raise SystemExit(f"only {gate.arrived} of {count} executions got in flight within {GATE_TIMEOUT_S} s") from None
    gc.collect()
    grown = now() - before
    gate.release.set()
    results = await asyncio.gather(*tasks)
    if start.__name__ != "bare":
        failed = [result.error for result in results if not result.ok]
        assert check(list(results)) == count, f"{count - check(list(results))} wrong results, e.g. {failed[:1]}"
    return grown / count


async def measure_state(base_url: str, count: int, state: str, measure: str) -> float:
    """One measurement, in a fresh process: memory per in-flight execution (or bare SDK call)."""
    agent = make_agent(None)
    probe = make_client(base_url, "httpx2")
    await execute_agent(agent, PROMPT.format(i=0), client=probe, deps=0)  # warm-up: imports, caches
    await probe.close()
    request = await typedagent_request()  # exactly what typedagent sends, for the bare SDK calls
    if measure == "heap":
        tracemalloc.start()
    gate = Gate(count)
    # tracemalloc slows the client about threefold: with 1,000 connections opening at once, the SDK's
    # 5 s connect timeout would expire on the busy event loop (not on the server), so allow more.
    slow = httpx2.Timeout(600, connect=120)
    client = make_client(base_url, "httpx2", gate if state in ("bare", "api") else None, slow)
    if state == "tool":
        agent = make_agent(gate)

    async def bare(i: int) -> Any:
        params = {**request, "messages": [{"role": "user", "content": PROMPT.format(i=i)}]}
        try:
            return await client.messages.create(**params)
        except anthropic.APIStatusError:
            return None

    async def execution(i: int) -> Any:
        return await execute_agent(agent, PROMPT.format(i=i), client=client, deps=i)

    grown = await in_flight(count, gate, bare if state == "bare" else execution, measure)
    await client.close()
    return grown


STATES = {
    "bare": "bare SDK call (no typedagent), awaiting the API",
    "api": "typedagent execution, awaiting the API",
    "tool": "typedagent execution, inside a helper tool",
}


def memory(base_url: str, count: int) -> list[list[str]]:
    """Each (state, measure) in its own process: RSS never shrinks, so phases must not share one."""
    rows = []
    for state, label in STATES.items():
        cells = [label]
        for measure in ("heap", "rss"):
            command = [sys.executable, __file__, "--count", str(count), "--child", state, measure, base_url]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise SystemExit(f"measuring {state}/{measure} failed:\n{done.stderr}")
            cells.append(f"{float(done.stdout.strip().splitlines()[-1]) / 1024:.1f} KiB")
        rows.append(cells)
    return rows


async def main_async(count: int, transports: list[str], rounds: int) -> None:
    with FakeAnthropicServerProcess(SCRIPT, per_conversation=True) as server:
        if transports:
            print_table(
                f"{count:,} concurrent executions on one event loop and one client ({CALLS} API calls + 1 retried "
                f"529 = {HTTP_REQUESTS} HTTP requests each; server in its own process; median of {rounds} rounds)",
                ["client", "transport", "wall", "throughput", "client CPU", "CPU / execution", "correct"],
                await throughput(server.base_url, transports, count, rounds),
            )
        memory_rows = await asyncio.to_thread(memory, server.base_url, count)
        print_table(
            f"Memory per in-flight execution ({count:,} held in flight at once, httpx2; "
            "heap and RSS each measured in a fresh process)",
            ["state", "Python heap (tracemalloc)", "resident memory (RSS growth)"],
            memory_rows,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-aiohttp", action="store_true", help="measure the default httpx2 transport only")
    parser.add_argument("--memory-only", action="store_true", help="skip the throughput table")
    parser.add_argument("--child", nargs=3, metavar=("STATE", "MEASURE", "BASE_URL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        state, measure, base_url = args.child
        print(asyncio.run(measure_state(base_url, args.count, state, measure)))
        return
    print(f"Machine: {machine()}")
    transports = [] if args.memory_only else ["httpx2"] if args.no_aiohttp else ["httpx2", "aiohttp"]
    asyncio.run(main_async(args.count, transports, args.rounds))


if __name__ == "__main__":
    main()

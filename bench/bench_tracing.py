"""What tracing costs: client CPU per run with no tracer provider, and with an SDK provider exporting to memory.

The default (no provider) is compared with the code without its tracing hooks; the same scenario as the other
benches (3 helper calls, then the output call: 4 model calls per run) runs on two
clients: the in-process ``ScriptedClient`` (where typedagent's own cost is all there is, so any overhead shows
most) and the SDK's ``AsyncAnthropic`` on a ``FakeAnthropicServerProcess`` (a server in a process of its own,
so ``time.process_time`` is the client's CPU alone; the SDK then emits its own span per call).

The baseline is measured in the same run: typedagent with its four tracing hooks replaced by pass-throughs,
which is the code as it was before them (the loop awaits the model call and the tool call directly). Rounds
are short and alternate the variants, so that the load of a shared machine drifts between rounds, not within
one; the table shows medians over rounds, and the no-provider target is judged on the median of the per-round
ratios (each round's variant against the baseline measured next to it).

    .venv/bin/python bench/bench_tracing.py [--rounds 31] [--runs 40] [--loopback-runs 4]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import statistics
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from _common import OUTPUT, PROMPT, fake_servers, machine, median, print_table, scripted_items, typedagent_agent
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from typedagent import execute_agent
from typedagent._observability import settings as _tracing
from typedagent._run import observe
from typedagent.testing import ScriptedClient

TARGET = 1.03
Runner = Callable[[], Awaitable[Any]]
EXPORTER = InMemorySpanExporter()


def _provider() -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
    return provider


PROVIDER = _provider()


@contextlib.contextmanager
def without_hooks() -> Iterator[None]:
    """The code before tracing: no observer registered with the loop, so each seam passes the work through."""
    saved = observe.observers._all
    observe.observers._all = ()
    try:
        yield
    finally:
        observe.observers._all = saved


@contextlib.contextmanager
def settings(variant: str) -> Iterator[None]:
    """Put the variant's tracing in force."""
    if variant == "baseline":
        with without_hooks():
            yield
        return
    chosen = {
        "no provider (default)": _tracing.Settings(),
        "SDK provider, in-memory exporter": _tracing.Settings(tracer_provider=PROVIDER),
        "same, include_content=True": _tracing.Settings(tracer_provider=PROVIDER, include_content=True),
    }[variant]
    previous = _tracing.swap_settings(chosen)
    try:
        yield
    finally:
        _tracing.swap_settings(previous)


VARIANTS = (
    "baseline",
    "no provider (default)",
    "SDK provider, in-memory exporter",
    "same, include_content=True",
)


def scripted_runner() -> Runner:
    agent = typedagent_agent()
    items = scripted_items(reflection=False)

    async def run() -> Any:
        result = await execute_agent(agent, PROMPT, client=ScriptedClient(items))
        assert result.ok, result
        assert result.output == OUTPUT
        return result

    return run


def loopback_runner(base_url: str) -> tuple[Runner, Any]:
    from anthropic import AsyncAnthropic

    client = AsyncAnthropic(base_url=base_url, api_key="test")
    agent = typedagent_agent()

    async def run() -> Any:
        result = await execute_agent(agent, PROMPT, client=client)
        assert result.ok, result
        return result

    return run, client


async def cpu_per_run(run: Runner, runs: int, variant: str) -> float:
    EXPORTER.clear()
    gc.collect()
    with settings(variant):
        started = time.process_time()
        for _ in range(runs):
            await run()
        spent = time.process_time() - started
    return spent / runs


async def alternate(run: Runner, rounds: int, runs: int, variants: tuple[str, ...]) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {variant: [] for variant in variants}
    for variant in variants:  # warm-up: imports, caches, first-call paths
        await cpu_per_run(run, max(1, runs // 10), variant)
    order = list(variants)
    for _ in range(rounds):
        for variant in order:
            samples[variant].append(await cpu_per_run(run, runs, variant))
        order.reverse()
    return samples


async def scenario_rows(scenario: str, run: Runner, rounds: int, runs: int) -> list[list[str]]:
    """The default against the baseline on their own, then the provider variants against a baseline of theirs.

    Apart: a provider variant's garbage (spans, client copies) would otherwise slow the rounds next to it.
    """
    rows = rows_for(scenario, await alternate(run, rounds, runs, VARIANTS[:2]))
    return rows + rows_for(scenario, await alternate(run, rounds, runs, (VARIANTS[0], *VARIANTS[2:])))


def rows_for(scenario: str, samples: dict[str, list[float]]) -> list[list[str]]:
    base = samples["baseline"]
    rows: list[list[str]] = []
    for variant, values in samples.items():
        of_medians = median(values) / median(base)
        paired = statistics.median(value / b for value, b in zip(values, base, strict=True))
        if variant == "baseline":
            target = "baseline"
        elif variant == "no provider (default)":
            target = f"≤ {TARGET:.2f}x {'met' if paired <= TARGET else 'MISSED'}"
        else:
            target = "reported"
        rows.append(
            [scenario, variant, f"{median(values) * 1e6:,.0f} µs", f"{of_medians:.3f}x", f"{paired:.3f}x", target]
        )
    return rows


async def main_async(rounds: int, runs: int, loopback_runs: int) -> list[list[str]]:
    rows = await scenario_rows("ScriptedClient, in process", scripted_runner(), rounds, runs)
    with fake_servers() as urls:
        run, client = loopback_runner(urls["typedagent-plain"])
        try:
            rows += await scenario_rows("AsyncAnthropic, loopback server", run, rounds, loopback_runs)
        finally:
            await client.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--runs", type=int, default=40, help="in-process runs per variant per round")
    parser.add_argument("--loopback-runs", type=int, default=4, help="loopback runs per variant per round")
    args = parser.parse_args()
    print(f"Machine: {machine()}")
    rows = asyncio.run(main_async(args.rounds, args.runs, args.loopback_runs))
    print_table(
        f"Client CPU per run with tracing (4 model calls, 4 tool calls; median of {args.rounds} rounds)",
        ["client", "tracing", "CPU per run", "vs baseline (medians)", "vs baseline (paired)", "target"],
        rows,
    )


if __name__ == "__main__":
    main()

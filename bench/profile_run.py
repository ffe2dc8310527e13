"""Where a run's client CPU goes: cProfile of sequential runs over loopback HTTP, grouped by package.

Not a benchmark (``make bench`` does not run it): it explains the loopback table. Each function's own
time goes to its package; time in C functions (socket calls, ``json``, ``isinstance``, pydantic-core)
goes to the package of the Python function that called them. Also counts Python function calls per
run, a figure that does not depend on the machine's load.

    .venv/bin/python bench/profile_run.py [--client typedagent|raw] [--transport httpx2|aiohttp] [--runs 300]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import time
from collections import defaultdict
from typing import Any

from _common import OUTPUT, PROMPT, fake_servers, print_table, raw_loop, request_shape, typedagent_agent

from typedagent import execute_agent

GROUPS = (
    ("/typedagent/", "typedagent"),
    ("/bench/", "scenario (tool handler, raw loop)"),
    ("/anthropic/", "anthropic SDK (request building, response parsing)"),
    ("/httpx2/", "httpx2 / httpcore2 / h11 / anyio"),
    ("/httpcore2/", "httpx2 / httpcore2 / h11 / anyio"),
    ("/h11/", "httpx2 / httpcore2 / h11 / anyio"),
    ("/anyio/", "httpx2 / httpcore2 / h11 / anyio"),
    ("/sniffio/", "httpx2 / httpcore2 / h11 / anyio"),
    ("/aiohttp/", "aiohttp / yarl / multidict"),
    ("/yarl/", "aiohttp / yarl / multidict"),
    ("/multidict/", "aiohttp / yarl / multidict"),
    ("/pydantic", "pydantic"),
    ("/asyncio/", "asyncio event loop"),
    ("selectors.py", "asyncio event loop"),
)


def group_of(function: tuple[str, int, str]) -> str:
    filename = function[0]
    for marker, group in GROUPS:
        if marker in filename:
            return group
    return "other (stdlib: json, typing, ...)"


def by_group(profile: cProfile.Profile) -> dict[str, float]:
    stats: dict[Any, Any] = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    seconds: dict[str, float] = defaultdict(float)
    for function, (_, _, own, _, callers) in stats.items():
        if function[0] != "~":
            seconds[group_of(function)] += own
            continue
        if not callers:
            seconds["other (stdlib: json, typing, ...)"] += own
        for caller, (_, _, caller_own, _) in callers.items():
            seconds[group_of(caller)] += caller_own
    return seconds


async def profile(client_name: str, transport: str, runs: int) -> tuple[dict[str, float], int]:
    from anthropic import AsyncAnthropic, DefaultAioHttpClient

    with fake_servers() as urls:
        extra: dict[str, Any] = {"http_client": DefaultAioHttpClient()} if transport == "aiohttp" else {}
        client = AsyncAnthropic(base_url=urls["typedagent-plain"], api_key="test", **extra)
        agent = typedagent_agent()
        shape = await request_shape(reflection=False)

        async def run() -> None:
            if client_name == "typedagent":
                result = await execute_agent(agent, PROMPT, client=client)
                assert result.ok, result
            else:
                assert await raw_loop(client, shape, reflection=False) == OUTPUT

        for _ in range(20):
            await run()
        profiler = cProfile.Profile(time.process_time)  # CPU, not wall: waiting in epoll is not cost
        profiler.enable()
        for _ in range(runs):
            await run()
        profiler.disable()
        await client.close()
    calls = sum(entry[1] for entry in pstats.Stats(profiler).stats.values())  # type: ignore[attr-defined]
    return by_group(profiler), calls // runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", choices=("typedagent", "raw"), default="typedagent")
    parser.add_argument("--transport", choices=("httpx2", "aiohttp"), default="httpx2")
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    seconds, calls = asyncio.run(profile(args.client, args.transport, args.runs))
    total = sum(seconds.values())
    rows = [
        [group, f"{value / args.runs * 1e6:,.0f} µs", f"{value / total:.1%}"]
        for group, value in sorted(seconds.items(), key=lambda item: -item[1])
    ]
    print_table(
        f"{args.client} on {args.transport}: profiled CPU per run by package ({args.runs} runs, 4 calls each; "
        f"{calls:,} Python function calls per run; cProfile inflates absolute times)",
        ["package", "per run (profiled)", "share"],
        rows,
    )


if __name__ == "__main__":
    main()

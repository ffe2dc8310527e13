"""Blocking calls with one reused ``AsyncAnthropic``: requests sent and wall time per run, from sync code.

The scenario (3 helper calls, then the output call: 4 model calls per run) runs from plain sync code,
one run after another, against ``FakeAnthropicServer`` on 127.0.0.1 (keep-alive connections). Ways:

- ``execute_agent_sync``, one client reused by every run: the blocking wrappers' long-lived event loop;
- a new event loop per run with the same reused client (what ``execute_agent_sync`` did before): the
  pooled connections belong to the previous run's closed loop, so requests fail and the SDK sends
  them again;
- baseline: ``asyncio.run`` with a new client per run (correct, but no connection is ever reused);
- pydantic-ai's ``run_sync`` with one reused client (reference).

Rounds alternate the ways; the table shows the requests the server received per run and the median
wall time per run, with its ratio to the baseline.

    .venv/bin/python bench/bench_sync.py [--rounds 5] [--runs 20]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import time
from collections.abc import Callable
from typing import Any

from _common import (
    MODEL,
    OUTPUT,
    PROMPT,
    fmt_ms,
    machine,
    median,
    print_table,
    pydantic_ai_agent,
    ratio,
    server_scripts,
    typedagent_agent,
)

from typedagent import execute_agent, execute_agent_sync
from typedagent._run.sync import run_blocking
from typedagent.testing import FakeAnthropicServer

CALLS_PER_RUN = 4


def ways(typed_url: str, pydantic_url: str) -> tuple[dict[str, Callable[[], Any]], list[Any]]:
    """Each way of running the scenario from sync code, and the clients to close at the end."""
    from anthropic import AsyncAnthropic
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    agent = typedagent_agent()
    shared = AsyncAnthropic(base_url=typed_url, api_key="test")
    new_loop_client = AsyncAnthropic(base_url=typed_url, api_key="test")
    pydantic_client = AsyncAnthropic(base_url=pydantic_url, api_key="test")
    pydantic = pydantic_ai_agent(
        AnthropicModel(MODEL, provider=AnthropicProvider(anthropic_client=pydantic_client)), reflection=False
    )

    def reused() -> Any:
        return execute_agent_sync(agent, PROMPT, client=shared).output

    def new_loop_per_run() -> Any:
        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(execute_agent(agent, PROMPT, client=new_loop_client)).output
        finally:
            loop.close()

    def fresh_client() -> Any:
        async def main() -> Any:
            async with AsyncAnthropic(base_url=typed_url, api_key="test") as client:
                return (await execute_agent(agent, PROMPT, client=client)).output

        return asyncio.run(main())

    def pydantic_ai() -> Any:
        return pydantic.run_sync(PROMPT).output

    runs = {
        "typedagent execute_agent_sync, reused client": reused,
        "new event loop per run, reused client (before)": new_loop_per_run,
        "asyncio.run, new client per run (baseline)": fresh_client,
        "pydantic-ai run_sync, reused client (reference)": pydantic_ai,
    }
    return runs, [shared, new_loop_client, pydantic_client]


def close(clients: list[Any]) -> None:
    """Close each client on the loop its connections belong to (none is left for the one of the old way)."""
    from pydantic_ai._utils import get_event_loop

    shared, new_loop_client, pydantic_client = clients
    run_blocking(shared.close())
    get_event_loop().run_until_complete(pydantic_client.close())
    with contextlib.suppress(RuntimeError):  # its connections belong to loops that are closed: they cannot be
        asyncio.run(new_loop_client.close())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    scripts = server_scripts()
    typed = FakeAnthropicServer(scripts["typedagent-plain"], per_conversation=True, record_requests=False)
    pydantic = FakeAnthropicServer(scripts["pydantic-ai-plain"], per_conversation=True, record_requests=False)
    walls: dict[str, list[float]] = {}
    requests: dict[str, list[int]] = {}
    with typed, pydantic:
        runs, clients = ways(typed.base_url, pydantic.base_url)
        order = list(runs)
        for _ in range(args.rounds):
            for name in order:
                server = pydantic if name.startswith("pydantic") else typed
                gc.collect()
                before, started = server.requests_served, time.perf_counter()
                outputs = [runs[name]() for _ in range(args.runs)]
                walls.setdefault(name, []).append((time.perf_counter() - started) / args.runs)
                requests.setdefault(name, []).append(server.requests_served - before)
                if name != "new event loop per run, reused client (before)":
                    assert all(output == OUTPUT for output in outputs), name
            order.reverse()
        close(clients)
    baseline = median(walls["asyncio.run, new client per run (baseline)"])
    rows = [
        (
            name,
            f"{sum(requests[name]) / (args.rounds * args.runs):.2f}",
            f"{CALLS_PER_RUN}",
            fmt_ms(median(walls[name])),
            ratio(median(walls[name]), baseline),
        )
        for name in runs
    ]
    print(machine())
    print_table(
        f"Sync runs with a reused client: {args.rounds} rounds x {args.runs} runs, loopback HTTP",
        ["way", "requests per run", "model calls per run", "wall per run", "vs baseline"],
        rows,
    )


if __name__ == "__main__":
    main()

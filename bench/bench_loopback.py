"""Client CPU per run over real loopback HTTP, against the floor: a hand-written SDK loop.

``FakeAnthropicServer`` runs in a process of its own (``_server_process.py``), so this process's
CPU time (``time.process_time``) is the client's alone: request building, the SDK, the HTTP
transport, response parsing, the framework. Clients run in alternation, round after round; the
table shows medians over rounds.

Clients: the raw ``AsyncAnthropic`` loop (baseline), typedagent, pydantic-ai's ``AnthropicModel``,
each on the SDK's default httpx2 transport and on its aiohttp transport
(``anthropic.DefaultAioHttpClient``, the ``typedagent[aiohttp]`` extra).

    .venv/bin/python bench/bench_loopback.py [--rounds 25] [--runs 20]
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any, NamedTuple

from _common import (
    MODEL,
    OUTPUT,
    PROMPT,
    Runner,
    alternating,
    fake_servers,
    fmt_ms,
    fmt_us,
    machine,
    median,
    per_run,
    print_table,
    pydantic_ai_agent,
    ratio,
    raw_loop,
    request_shape,
    typedagent_agent,
    verdict,
)

from typedagent import execute_agent

TARGET = 1.10


class Sample(NamedTuple):
    cpu: float
    """Median client CPU seconds per run."""
    wall: float
    """Median wall seconds per run."""
    paired: float
    """Median over rounds of this client's figure / the raw loop's (same transport, same round)."""
    of_medians: float
    """This client's median / the raw loop's median (same transport)."""

    @property
    def worst(self) -> float:
        """The target is judged on the less favourable of the two ratios."""
        return max(self.paired, self.of_medians)


OPEN_CLIENTS: list[Any] = []


def sdk_client(base_url: str, transport: str) -> Any:
    """One ``AsyncAnthropic`` per client under test, kept for the whole bench (keep-alive connections)."""
    from anthropic import AsyncAnthropic, DefaultAioHttpClient

    if transport == "aiohttp":
        client = AsyncAnthropic(base_url=base_url, api_key="test", http_client=DefaultAioHttpClient())
    else:
        client = AsyncAnthropic(base_url=base_url, api_key="test")
    OPEN_CLIENTS.append(client)
    return client


async def close_clients() -> None:
    while OPEN_CLIENTS:
        await OPEN_CLIENTS.pop().close()


async def raw_runner(base_url: str, transport: str, *, reflection: bool) -> Runner:
    client = sdk_client(base_url, transport)
    shape = await request_shape(reflection=reflection)

    async def run() -> Any:
        output = await raw_loop(client, shape, reflection=reflection)
        assert output == OUTPUT
        return output

    return run


def typedagent_runner(base_url: str, transport: str, *, reflection: bool) -> Runner:
    client = sdk_client(base_url, transport)
    agent = typedagent_agent(reflection=reflection)

    async def run() -> Any:
        result = await execute_agent(agent, PROMPT, client=client)
        assert result.ok, result
        assert result.output == OUTPUT
        return result

    return run


def pydantic_ai_runner(base_url: str, transport: str, *, reflection: bool) -> Runner:
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    provider = AnthropicProvider(anthropic_client=sdk_client(base_url, transport))
    agent = pydantic_ai_agent(AnthropicModel(MODEL, provider=provider), reflection=reflection)

    async def run() -> Any:
        result = await agent.run(PROMPT)
        assert result.output == OUTPUT
        return result

    return run


async def runners(urls: dict[str, str], *, reflection: bool) -> dict[tuple[str, str], Runner]:
    variant = "reflection" if reflection else "plain"
    ours, theirs = urls[f"typedagent-{variant}"], urls[f"pydantic-ai-{variant}"]
    built: dict[tuple[str, str], Runner] = {}
    for transport in ("httpx2", "aiohttp"):
        built["raw SDK loop", transport] = await raw_runner(ours, transport, reflection=reflection)
        built["typedagent", transport] = typedagent_runner(ours, transport, reflection=reflection)
        built["pydantic-ai", transport] = pydantic_ai_runner(theirs, transport, reflection=reflection)
    return built


async def measure(urls: dict[str, str], rounds: int, runs: int, *, reflection: bool) -> dict[Any, Sample]:
    clients = await runners(urls, reflection=reflection)
    for run in clients.values():  # warm-up: connections, imports, schema caches
        await per_run(run, 5)
    cpu, wall = await alternating(clients, rounds, runs)
    await close_clients()
    samples = {}
    for client, transport in clients:
        # Paired ratio: each round's figure against the raw loop's in the same round (minutes apart at
        # most), so load from other processes on the machine cancels out instead of skewing one client.
        raw = cpu["raw SDK loop", transport]
        paired = median([mine / theirs for mine, theirs in zip(cpu[client, transport], raw, strict=True)])
        mine = median(cpu[client, transport])
        samples[client, transport] = Sample(mine, median(wall[client, transport]), paired, mine / median(raw))
    return samples


def table_rows(samples: dict[Any, Sample], scenario: str) -> list[list[str]]:
    floor = samples["raw SDK loop", "httpx2"].cpu
    rows = []
    for (client, transport), sample in samples.items():
        if client == "typedagent":
            target = f"≤ {TARGET}x {verdict(sample.worst, TARGET)}"
        else:
            target = "baseline" if (client, transport) == ("raw SDK loop", "httpx2") else "-"
        rows.append(
            [
                scenario,
                client,
                transport,
                fmt_us(sample.cpu),
                f"{sample.of_medians:.2f}x / {sample.paired:.2f}x",
                ratio(sample.cpu, floor),
                fmt_ms(sample.wall),
                target,
            ]
        )
    return rows


async def main_async(rounds: int, runs: int) -> list[list[str]]:
    rows = []
    with fake_servers() as urls:
        for reflection in (False, True):
            medians = await measure(urls, rounds, runs, reflection=reflection)
            rows += table_rows(medians, "reflection (5 calls)" if reflection else "plain (4 calls)")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--runs", type=int, default=20, help="runs per client per round")
    args = parser.parse_args()
    print(f"Machine: {machine()}")
    rows = asyncio.run(main_async(args.rounds, args.runs))
    print_table(
        f"Client CPU per run over loopback HTTP (median of {args.rounds} rounds x {args.runs} sequential runs)",
        [
            "scenario",
            "client",
            "transport",
            "CPU per run",
            "vs raw, same transport (medians / paired)",
            "vs raw httpx2",
            "wall per run",
            "target",
        ],
        rows,
    )


if __name__ == "__main__":
    main()

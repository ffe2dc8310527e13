"""Concurrency: 200 runs at once against a server that takes 50 ms per response.

Same scenario and clients as ``bench_loopback.py`` (server in its own process, per-conversation
script, 50 ms added to every response). The ideal wall time is 4 x 50 ms = 200 ms; on a 2-core
machine every client is CPU-bound long before that, so the raw SDK loop on the same transport is
the reference. Clients alternate, round after round; medians.

    .venv/bin/python bench/bench_concurrency.py [--rounds 9] [--concurrency 200]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from typing import Any

from _common import fake_servers, fmt_ms, machine, median, print_table, ratio, verdict
from bench_loopback import Runner, Sample, close_clients, runners

LATENCY_MS = 50
CALLS = 4
TARGET = 1.15


async def batch(run: Runner, concurrency: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds) for ``concurrency`` runs started together."""
    gc.collect()  # every sample starts from the same heap: no client inherits another's garbage
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(run() for _ in range(concurrency)))
    return time.perf_counter() - wall, time.process_time() - cpu


async def measure(rounds: int, concurrency: int) -> dict[Any, Sample]:
    with fake_servers(latency_ms=LATENCY_MS) as urls:
        clients = await runners(urls, reflection=False)
        for run in clients.values():  # warm-up: open the connection pools
            await batch(run, concurrency)
        walls: dict[Any, list[float]] = {name: [] for name in clients}
        cpus: dict[Any, list[float]] = {name: [] for name in clients}
        order = list(clients)
        for _ in range(rounds):
            for name in order:
                wall, cpu = await batch(clients[name], concurrency)
                walls[name].append(wall)
                cpus[name].append(cpu)
            order.reverse()
        await close_clients()
    samples = {}
    for client, transport in clients:
        raw = walls["raw SDK loop", transport]  # paired with the same round: see bench_loopback.measure
        paired = median([mine / theirs for mine, theirs in zip(walls[client, transport], raw, strict=True)])
        mine = median(walls[client, transport])
        samples[client, transport] = Sample(median(cpus[client, transport]), mine, paired, mine / median(raw))
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--concurrency", type=int, default=200)
    args = parser.parse_args()
    print(f"Machine: {machine()}")
    medians = asyncio.run(measure(args.rounds, args.concurrency))
    ideal = CALLS * LATENCY_MS / 1000
    floor = medians["raw SDK loop", "httpx2"].wall
    rows = [["ideal (4 x 50 ms, no CPU cost)", "-", fmt_ms(ideal), "-", ratio(ideal, floor), "1.00x", "-", "-"]]
    for (client, transport), sample in medians.items():
        if client == "typedagent":
            target = f"≤ {TARGET}x {verdict(sample.worst, TARGET)}"
        else:
            target = "baseline" if (client, transport) == ("raw SDK loop", "httpx2") else "-"
        rows.append(
            [
                client,
                transport,
                fmt_ms(sample.wall),
                f"{sample.of_medians:.2f}x / {sample.paired:.2f}x",
                ratio(sample.wall, floor),
                ratio(sample.wall, ideal),
                fmt_ms(sample.cpu),
                target,
            ]
        )
    print_table(
        f"{args.concurrency} concurrent runs, {LATENCY_MS} ms server latency, 4 calls each "
        f"(median wall of {args.rounds} rounds)",
        [
            "client",
            "transport",
            "wall",
            "vs raw, same transport (medians / paired)",
            "vs raw httpx2",
            "vs ideal",
            "client CPU",
            "target",
        ],
        rows,
    )


if __name__ == "__main__":
    main()

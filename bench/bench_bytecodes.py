"""Python bytecodes per run over loopback HTTP: where a client's interpreted work goes, unmoved by the load.

The loop's own work is interpreted Python, which runs at a fraction of the speed (per instruction) of the
SDK's C and Rust parts (JSON, HTTP parsing, pydantic-core): ``bench_instructions.py`` counts every machine
instruction alike, so it understates what the loop costs in CPU time. This bench counts what the interpreter
executes instead: every bytecode, with ``sys.settrace`` opcode events, in this process, while each client
plays the loopback scenario of ``bench_loopback.py`` (the fake server runs in a process of its own,
uncounted). The count does not move with the machine's load; tracing slows the runs down, which does not
matter to a count.

    .venv/bin/python bench/bench_bytecodes.py [--runs 20] [--top 15]

The table gives the bytecodes of one run per client and scenario; ``--top N`` then lists the N functions
(and files) with the most bytecodes typedagent runs beyond the raw loop, plain scenario.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from types import FrameType
from typing import Any

from _common import PROMPT, fake_servers, machine, print_table, raw_loop, request_shape, typedagent_agent

from typedagent import execute_agent

Where = tuple[str, str]
"""A function: its file (shortened) and its name."""


def _short(path: str) -> str:
    for marker in ("/typedagent/", "/site-packages/", "/lib/python3."):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


class Counting:
    """Counts the bytecodes executed while it is on, by the function executing them."""

    def __init__(self) -> None:
        self.by_function: Counter[Where] = Counter()

    def _trace(self, frame: FrameType, event: str, arg: object) -> Any:
        if event == "call":
            frame.f_trace_opcodes = True
            frame.f_trace_lines = False
        elif event == "opcode":
            code = frame.f_code
            self.by_function[_short(code.co_filename), code.co_name] += 1
        return self._trace

    def __enter__(self) -> Counting:
        self.by_function.clear()
        sys.settrace(self._trace)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.settrace(None)


async def count(runs: int, *, reflection: bool) -> dict[str, Counter[Where]]:
    """Bytecodes per function over ``runs`` runs of each client (after a warm-up), by client."""
    from anthropic import AsyncAnthropic

    variant = "reflection" if reflection else "plain"
    counts: dict[str, Counter[Where]] = {}
    with fake_servers() as urls:
        client = AsyncAnthropic(base_url=urls[f"typedagent-{variant}"], api_key="test")
        agent = typedagent_agent(reflection=reflection)
        shape = await request_shape(reflection=reflection)
        clients = {
            "raw SDK loop": lambda: raw_loop(client, shape, reflection=reflection),
            "typedagent": lambda: execute_agent(agent, PROMPT, client=client),
        }
        for play in clients.values():  # warm-up: connections, imports, schema caches
            for _ in range(10):
                await play()
        for name, play in clients.items():
            with Counting() as counting:
                for _ in range(runs):
                    await play()
            counts[name] = Counter(counting.by_function)
        await client.close()
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--top", type=int, default=0, help="list the functions typedagent adds most bytecodes in")
    args = parser.parse_args()
    print(f"Machine: {machine()}")
    rows = []
    plain: dict[str, Counter[Where]] = {}
    for reflection in (False, True):
        counts = asyncio.run(count(args.runs, reflection=reflection))
        plain = plain or counts
        raw = counts["raw SDK loop"].total() / args.runs
        ours = counts["typedagent"].total() / args.runs
        scenario = "reflection (5 calls)" if reflection else "plain (4 calls)"
        rows.append([scenario, f"{raw:,.0f}", f"{ours:,.0f}", f"{ours - raw:+,.0f}", f"{ours / raw:.3f}x"])
    print_table(
        f"Python bytecodes per run over loopback HTTP, httpx2 ({args.runs} runs each)",
        ["scenario", "raw SDK loop", "typedagent", "typedagent adds", "vs raw"],
        rows,
    )
    if args.top:
        extra = Counter(plain["typedagent"])
        extra.subtract(plain["raw SDK loop"])
        by_file: Counter[str] = Counter()
        for (path, _), n in extra.items():
            by_file[path] += n
        top = [[f"{path}", f"{n / args.runs:+,.0f}"] for path, n in by_file.most_common(args.top)]
        print_table("Files typedagent adds most bytecodes in (plain)", ["file", "bytecodes per run"], top)
        top = [[f"{path}: {name}", f"{n / args.runs:+,.0f}"] for (path, name), n in extra.most_common(args.top)]
        print_table("Functions typedagent adds most bytecodes in (plain)", ["function", "bytecodes per run"], top)


if __name__ == "__main__":
    main()

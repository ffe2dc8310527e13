"""Output modes side by side: what each request carries, and the loop's own cost per run, against tool mode.

The benchmark scenario (3 helper calls, then the output: 4 model calls per run; with reflection the output is
previewed, then submitted: 5) run by ``ScriptedClient`` for each mode. ``output_call`` hands the output over as
each mode expects it (a tool call, or JSON text), so the scripts are the same. Sizes are characters of the
requests' JSON (the API counts tokens; characters are the offline proxy, about four to a token in English):
the fixed part of a request (everything but ``messages``), and everything sent over a run. Rounds alternate the
modes; the table shows medians over rounds of the process's CPU time (steadier than wall time on a shared
machine). Ratios are against tool mode, measured in the same run.

    .venv/bin/python bench/bench_output_modes.py [--rounds 7] [--runs 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from _common import (
    INSTRUCTIONS,
    MODEL,
    OUTPUT,
    OUTPUT_NAME,
    PROMPT,
    Triage,
    alternating,
    fmt_us,
    machine,
    median,
    preview,
    print_table,
    ratio,
    scripted_items,
    search_kb,
)

from typedagent import AgentDefinition, OutputTool, define_agent, execute_agent, tool
from typedagent.testing import ScriptedClient

Variant = tuple[Literal["tool", "native", "prompted"], bool]
VARIANTS: dict[str, Variant] = {
    "tool": ("tool", False),
    "tool, strict": ("tool", True),
    "native": ("native", False),
    "prompted": ("prompted", False),
}


def agent_for(variant: Variant, *, reflection: bool) -> AgentDefinition[Triage, None]:
    mode, strict = variant
    output = OutputTool(
        Triage, mode=mode, strict=strict, name=OUTPUT_NAME, reflection_handler=preview if reflection else None
    )
    return define_agent(name="triage", model=MODEL, instructions=INSTRUCTIONS, output=output, helpers=[tool(search_kb)])


def runner(variant: Variant, *, reflection: bool) -> Callable[[], Awaitable[Any]]:
    agent = agent_for(variant, reflection=reflection)
    items = scripted_items(reflection=reflection)

    async def run() -> Any:
        result = await execute_agent(agent, PROMPT, client=ScriptedClient(items))
        assert result.ok, result
        assert result.output == OUTPUT
        return result

    return run


async def sizes(variant: Variant, *, reflection: bool) -> tuple[int, int, int]:
    """Characters of the fixed part of a request, of all requests of a run, and the number of requests."""
    client = ScriptedClient(scripted_items(reflection=reflection))
    result = await execute_agent(agent_for(variant, reflection=reflection), PROMPT, client=client)
    assert result.ok, result
    fixed = {key: value for key, value in client.requests[0].items() if key != "messages"}
    return len(json.dumps(fixed)), sum(len(json.dumps(request)) for request in client.requests), len(client.requests)


async def measure(rounds: int, runs: int, *, reflection: bool) -> dict[str, float]:
    runners = {name: runner(variant, reflection=reflection) for name, variant in VARIANTS.items()}
    await alternating(runners, 1, max(1, runs // 10))  # warm-up: schema caches, first-call paths
    cpu, _ = await alternating(runners, rounds, runs)
    return {name: median(samples) for name, samples in cpu.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--runs", type=int, default=200, help="runs per mode per round")
    args = parser.parse_args()
    print(f"Machine: {machine()}")
    size_rows: list[list[object]] = []
    time_rows: list[list[object]] = []
    for reflection in (False, True):
        scenario = "reflection" if reflection else "plain"
        measured = {name: asyncio.run(sizes(v, reflection=reflection)) for name, v in VARIANTS.items()}
        base_fixed, base_total, _ = measured["tool"]
        for name, (fixed, total, calls) in measured.items():
            size_rows.append(
                [scenario, name, calls, f"{fixed:,}", ratio(fixed, base_fixed), f"{total:,}", ratio(total, base_total)]
            )
        medians = asyncio.run(measure(args.rounds, args.runs, reflection=reflection))
        for name, value in medians.items():
            time_rows.append([scenario, name, fmt_us(value), ratio(value, medians["tool"])])
    print_table(
        "What the requests carry (characters of their JSON)",
        ["scenario", "mode", "requests", "fixed part", "vs tool", "whole run", "vs tool"],
        size_rows,
    )
    print_table(
        f"In-process CPU time per run (median of {args.rounds} rounds x {args.runs} runs)",
        ["scenario", "mode", "per run", "vs tool"],
        time_rows,
    )


if __name__ == "__main__":
    main()

"""What a pause costs: paused, stored as JSON, read back and resumed, against approvals decided inline.

In process (``ScriptedClient``, no HTTP). Scenario: N rounds of one ``search_kb`` call and one approval call
each, then the output call. The pausing run pauses once per round (``pausable=True``), writes
``state.to_json()``, reads it back with ``PausedState.from_json`` and resumes; the inline run asks an
``approve=`` callback. Rounds alternate the two; the table shows medians over rounds, and the size of the
last state written.

    .venv/bin/python bench/bench_pausing.py [--rounds 7] [--runs 50]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from collections.abc import Awaitable, Callable
from typing import Any

from _common import OUTPUT, PROMPT, Triage, fmt_us, machine, median, print_table, ratio, search_kb

from typedagent import (
    AgentDefinition,
    Approve,
    ExecutePaused,
    OutputTool,
    PausedState,
    PendingCall,
    ValidationConfig,
    define_agent,
    execute_agent,
    tool,
)
from typedagent.testing import ScriptedClient, output_call, response, tool_call


@tool(requires_approval=True)
def escalate(team: str, note: str) -> str:
    """Escalate the ticket to a team (a person approves it first)."""
    return f"escalated to {team}: {note}"


AGENT: AgentDefinition[Triage, None] = define_agent(
    name="triage",
    model="claude-sonnet-4-6",
    output=OutputTool(Triage),
    helpers=[tool(search_kb), escalate],
    validation=ValidationConfig(max_iterations_per_attempt=30),
)


def script(rounds: int) -> list[Any]:
    items: list[Any] = [
        response(
            tool_call("search_kb", {"query": f"vpn drops {turn}"}),
            tool_call("escalate", {"team": "network", "note": "VPN drops hourly " * 20}),
        )
        for turn in range(rounds)
    ]
    return [*items, output_call(OUTPUT)]


def approve(call: PendingCall) -> Approve:
    return Approve()


def inline_runner(rounds: int) -> Callable[[], Awaitable[int]]:
    items = script(rounds)

    async def run() -> int:
        result = await execute_agent(AGENT, PROMPT, client=ScriptedClient(items), approve=approve)
        assert result.ok, result.status
        return 0

    return run


def pausing_runner(rounds: int) -> Callable[[], Awaitable[int]]:
    items = script(rounds)

    async def run() -> int:
        client = ScriptedClient(items)
        result = await execute_agent(AGENT, PROMPT, client=client, pausable=True)
        size = 0
        while isinstance(result, ExecutePaused):
            text = result.state.to_json()
            size = len(text.encode())
            state = PausedState.from_json(text)
            decisions = {call.id: Approve() for call in state.pending}
            result = await execute_agent(AGENT, resume=state, decisions=decisions, client=client)
        assert result.ok, result.status
        return size

    return run


async def per_run(run: Callable[[], Awaitable[int]], runs: int) -> tuple[float, int]:
    gc.collect()
    size = 0
    started = time.perf_counter()
    for _ in range(runs):
        size = await run()
    return (time.perf_counter() - started) / runs, size


async def measure(rounds: int, repeats: int, runs: int) -> dict[str, tuple[float, int]]:
    runners = {"inline (approve=)": inline_runner(rounds), "paused and resumed": pausing_runner(rounds)}
    samples: dict[str, list[float]] = {name: [] for name in runners}
    sizes: dict[str, int] = {}
    for run in runners.values():
        await per_run(run, max(1, runs // 10))
    order = list(runners)
    for _ in range(repeats):
        for name in order:
            seconds, sizes[name] = await per_run(runners[name], runs)
            samples[name].append(seconds)
        order.reverse()
    return {name: (median(values), sizes[name]) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--runs", type=int, default=50, help="runs per variant per round")
    args = parser.parse_args()
    print(f"Machine: {machine()}")
    rows = []
    for pauses in (1, 5, 20):
        medians = asyncio.run(measure(pauses, args.rounds, args.runs))
        baseline, _ = medians["inline (approve=)"]
        for name, (seconds, size) in medians.items():
            rows.append(
                [
                    f"{pauses} approval round(s)",
                    name,
                    fmt_us(seconds),
                    ratio(seconds, baseline),
                    f"{size / 1024:,.1f} KiB" if size else "-",
                ]
            )
    print_table(
        f"A run with approvals, per run (median of {args.rounds} rounds x {args.runs} runs)",
        ["scenario", "variant", "per run", "vs inline", "last state's JSON"],
        rows,
    )


if __name__ == "__main__":
    main()

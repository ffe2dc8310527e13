"""In-process overhead: the framework's own cost per run, with no HTTP at all.

typedagent on its ``ScriptedClient`` against pydantic-ai on its ``FunctionModel``, same scenario
(3 helper calls, then the output call: 4 model calls per run; the reflection variant adds a preview
turn: 5). Rounds alternate the clients; the table shows medians over rounds.

    .venv/bin/python bench/bench_inprocess.py [--rounds 7] [--runs 200]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from collections.abc import Awaitable, Callable
from typing import Any

from _common import (
    OUTPUT,
    PROMPT,
    fmt_us,
    machine,
    median,
    print_table,
    pydantic_ai_agent,
    pydantic_ai_turns,
    ratio,
    scripted_items,
    typedagent_agent,
    verdict,
)

from typedagent import execute_agent
from typedagent.testing import ScriptedClient

TARGET = 0.1


def typedagent_runner(*, reflection: bool) -> Callable[[], Awaitable[Any]]:
    agent = typedagent_agent(reflection=reflection)
    items = scripted_items(reflection=reflection)

    async def run() -> Any:
        result = await execute_agent(agent, PROMPT, client=ScriptedClient(items))
        assert result.ok, result
        assert result.output == OUTPUT
        return result

    return run


def pydantic_ai_runner(*, reflection: bool) -> Callable[[], Awaitable[Any]]:
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    # async, so pydantic-ai calls it on the loop: a sync function would cost it a worker-thread hop.
    async def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        turn = sum(isinstance(message, ModelResponse) for message in messages)
        turns = pydantic_ai_turns(reflection=reflection, output_tool=info.output_tools[0].name)
        return ModelResponse(
            parts=[
                ToolCallPart(call["name"], call["input"], tool_call_id=f"call_{turn}_{i}")
                for i, call in enumerate(turns[turn])
            ]
        )

    agent = pydantic_ai_agent(FunctionModel(model), reflection=reflection)

    async def run() -> Any:
        result = await agent.run(PROMPT)
        assert result.output == OUTPUT, result
        return result

    return run


async def per_run(run: Callable[[], Awaitable[Any]], runs: int) -> float:
    gc.collect()  # every sample starts from the same heap: no client inherits another's garbage
    started = time.perf_counter()
    for _ in range(runs):
        await run()
    return (time.perf_counter() - started) / runs


async def measure(rounds: int, runs: int, *, reflection: bool) -> dict[str, float]:
    runners = {
        "typedagent (ScriptedClient)": typedagent_runner(reflection=reflection),
        "pydantic-ai (FunctionModel)": pydantic_ai_runner(reflection=reflection),
    }
    samples: dict[str, list[float]] = {name: [] for name in runners}
    for run in runners.values():  # warm-up: imports, schema caches, first-call paths
        await per_run(run, max(1, runs // 10))
    order = list(runners)
    for _ in range(rounds):
        for name in order:
            samples[name].append(await per_run(runners[name], runs))
        order.reverse()
    return {name: median(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--runs", type=int, default=200, help="runs per client per round")
    args = parser.parse_args()
    print(f"Machine: {machine()}")
    rows = []
    for reflection in (False, True):
        medians = asyncio.run(measure(args.rounds, args.runs, reflection=reflection))
        baseline = medians["pydantic-ai (FunctionModel)"]
        calls = 5 if reflection else 4
        for name, value in medians.items():
            ours = name.startswith("typedagent")
            rows.append(
                [
                    f"{'reflection' if reflection else 'plain'} ({calls} calls)",
                    name,
                    fmt_us(value),
                    ratio(value, baseline),
                    f"≤ {TARGET}x {verdict(value / baseline, TARGET)}" if ours else "baseline",
                ]
            )
    print_table(
        f"In-process overhead per run (median of {args.rounds} rounds x {args.runs} runs)",
        ["scenario", "client", "per run", "vs pydantic-ai", "target"],
        rows,
    )


if __name__ == "__main__":
    main()

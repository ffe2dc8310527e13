"""Parallel tools: four helpers of 100 ms each, called in one response, must overlap.

The model (a ``ScriptedClient``) calls four helpers in its first response and the output tool in
its second. The tool phase is timed from the first ``on_tool_call`` to the last ``on_tool_result``
of that response: run one by one it would take 400 ms; the target is ≤ 130 ms. Async helpers run
on the event loop, sync ones (``time.sleep``) in worker threads; both are shown, and pydantic-ai's
whole run on ``FunctionModel`` is given for reference.

    .venv/bin/python bench/bench_parallel_tools.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable
from typing import Any

from _common import OUTPUT, PROMPT, Triage, fmt_ms, machine, median, print_table, verdict

from typedagent import (
    ExecuteCallbacks,
    ExecutionState,
    OutputTool,
    ToolCall,
    ToolResult,
    define_agent,
    execute_agent,
    tool,
)
from typedagent.testing import ScriptedClient, output_call, response, tool_call

DELAY_S = 0.1
TOOLS = 4
TARGET_S = 0.130


def blocking_lookup() -> Callable[..., Any]:
    def lookup(key: str) -> str:
        time.sleep(DELAY_S)
        return f"value of {key}"

    return lookup


def async_lookup() -> Callable[..., Any]:
    async def lookup(key: str) -> str:
        await asyncio.sleep(DELAY_S)
        return f"value of {key}"

    return lookup


def make_helpers(*, sync: bool) -> list[Callable[..., Any]]:
    """Four distinct helper functions, ``lookup_1`` to ``lookup_4``."""
    helpers = []
    for index in range(1, TOOLS + 1):
        lookup = blocking_lookup() if sync else async_lookup()
        lookup.__name__ = lookup.__qualname__ = f"lookup_{index}"
        lookup.__doc__ = "Look a key up (takes 100 ms)."
        helpers.append(lookup)
    return helpers


async def typedagent_tool_phase(*, sync: bool) -> tuple[float, float]:
    """(tool phase, whole run) in seconds for one run."""
    agent = define_agent(
        name="parallel",
        model="claude-sonnet-4-6",
        output=OutputTool(Triage),
        helpers=[tool(fn) for fn in make_helpers(sync=sync)],
    )
    first_call: list[float] = []
    last_result: list[float] = []

    def on_tool_call(state: ExecutionState, event: ToolCall) -> None:
        if state.iteration == 1 and not first_call:
            first_call.append(time.perf_counter())

    def on_tool_result(state: ExecutionState, event: ToolResult) -> None:
        if state.iteration == 1:
            last_result[:] = [time.perf_counter()]

    client = ScriptedClient(
        [
            response(*(tool_call(f"lookup_{i}", {"key": f"k{i}"}) for i in range(1, TOOLS + 1))),
            output_call(OUTPUT),
        ]
    )
    started = time.perf_counter()
    result = await execute_agent(
        agent,
        PROMPT,
        client=client,
        callbacks=ExecuteCallbacks(on_tool_call=on_tool_call, on_tool_result=on_tool_result),
    )
    whole = time.perf_counter() - started
    assert result.ok, result
    return last_result[0] - first_call[0], whole


async def pydantic_ai_run(*, sync: bool) -> float:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        if sum(isinstance(m, ModelResponse) for m in messages) == 0:
            parts = [ToolCallPart(f"lookup_{i}", {"key": f"k{i}"}, tool_call_id=f"c{i}") for i in range(1, TOOLS + 1)]
            return ModelResponse(parts=parts)
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, OUTPUT.model_dump(), tool_call_id="o")])

    agent = Agent(FunctionModel(model), output_type=Triage, tools=make_helpers(sync=sync))
    started = time.perf_counter()
    result = await agent.run(PROMPT)
    assert result.output == OUTPUT
    return time.perf_counter() - started


async def measure(rounds: int) -> list[list[str]]:
    rows = []
    for sync in (False, True):
        await typedagent_tool_phase(sync=sync)  # warm-up
        await pydantic_ai_run(sync=sync)
        phases, wholes, pydantic_ai = [], [], []
        for _ in range(rounds):
            phase, whole = await typedagent_tool_phase(sync=sync)
            phases.append(phase)
            wholes.append(whole)
            pydantic_ai.append(await pydantic_ai_run(sync=sync))
        kind = "sync (worker threads)" if sync else "async (event loop)"
        rows.append(
            [
                kind,
                "typedagent",
                fmt_ms(median(phases)),
                fmt_ms(median(wholes)),
                f"≤ 130 ms {verdict(median(phases), TARGET_S)}",
            ]
        )
        rows.append([kind, "pydantic-ai (reference)", "-", fmt_ms(median(pydantic_ai)), "-"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    print(f"Machine: {machine()}")
    rows = asyncio.run(measure(args.rounds))
    print_table(
        f"Parallel tools: {TOOLS} helpers x {DELAY_S * 1000:.0f} ms in one response (median of {args.rounds} runs; "
        f"serial would be {TOOLS * DELAY_S * 1000:.0f} ms)",
        ["helpers", "client", "tool phase", "whole run", "target"],
        rows,
    )


if __name__ == "__main__":
    main()

"""MCP toolsets: what a tool call costs through an MCP server, and what starting one costs.

The scenario is the usual one (``_common``): three ``search_kb`` calls, then the output. The helper runs in
three ways: as a typedagent helper in the process (the baseline), and as a tool of the demo MCP server of the
test suite (``tests/mcp_servers/demo.py``'s ``echo``), over stdio and over streamable HTTP on 127.0.0.1. Runs
happen inside ``agent.connected()``, so they measure calls, not start-ups; the model is a ``ScriptedClient``
(no network). A second table times connecting: starting the stdio server (a Python process importing the
``mcp`` package) and connecting to the running HTTP server, with the tool list read.

    .venv/bin/python bench/bench_mcp.py [--rounds 5] [--runs 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from _common import (
    INSTRUCTIONS,
    MODEL,
    OUTPUT,
    OUTPUT_NAME,
    PROMPT,
    QUERIES,
    Triage,
    fmt_ms,
    machine,
    print_table,
    ratio,
)

from typedagent import AgentDefinition, OutputTool, define_agent, execute_agent, tool
from typedagent.mcp import MCPToolset
from typedagent.testing import ScriptedClient, output_call, tool_call

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from mcp_support import http_demo, stdio_demo  # noqa: E402


async def echo(text: str) -> str:
    """Say the text back.

    Args:
        text: The text.
    """
    return text


def agent_with(helper: Any) -> AgentDefinition[Triage, None]:
    return define_agent(
        name="triage",
        model=MODEL,
        instructions=INSTRUCTIONS,
        output=OutputTool(Triage, name=OUTPUT_NAME),
        helpers=[helper],
    )


def script() -> list[Any]:
    return [*(tool_call("echo", {"text": query}) for query in QUERIES), output_call(OUTPUT)]


async def seconds_per_run(agent: AgentDefinition[Triage, None], runs: int) -> float:
    started = time.perf_counter()
    for _ in range(runs):
        result = await execute_agent(agent, PROMPT, client=ScriptedClient(script()))
        assert result.ok, result
    return (time.perf_counter() - started) / runs


async def calls(url: str, rounds: int, runs: int) -> dict[str, list[float]]:
    agents = {
        "helper (in process)": agent_with(tool(echo)),
        "MCP over stdio": agent_with(stdio_demo()),
        "MCP over streamable HTTP": agent_with(MCPToolset.http(url)),
    }
    samples: dict[str, list[float]] = {name: [] for name in agents}
    for name, agent in agents.items():
        async with agent.connected():
            await seconds_per_run(agent, 2)  # warm: the first calls import and compile
            for _ in range(rounds):
                samples[name].append(await seconds_per_run(agent, runs))
    return samples


async def connecting(url: str, rounds: int) -> dict[str, list[float]]:
    toolsets = {
        "stdio (start the server)": stdio_demo,
        "streamable HTTP (server running)": lambda: MCPToolset.http(url),
    }
    samples: dict[str, list[float]] = {name: [] for name in toolsets}
    for _ in range(rounds):
        for name, make in toolsets.items():
            agent = agent_with(make())
            started = time.perf_counter()
            async with agent.connected():
                samples[name].append(time.perf_counter() - started)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    print(machine())
    with http_demo() as server:
        per_run = asyncio.run(calls(server.url, args.rounds, args.runs))
        start = asyncio.run(connecting(server.url, args.rounds))
    baseline = statistics.median(per_run["helper (in process)"])
    rows = []
    for name, values in per_run.items():
        run = statistics.median(values)
        per_call = (run - baseline) / len(QUERIES)
        extra = "-" if name.startswith("helper") else fmt_ms(per_call)
        rows.append((name, fmt_ms(run), ratio(run, baseline), extra, f"{fmt_ms(min(values))} to {fmt_ms(max(values))}"))
    print_table(
        f"One run: 3 tool calls and the output, {args.runs} runs x {args.rounds} rounds (median)",
        ["tool", "per run", "vs helper", "added per call", "spread of rounds"],
        rows,
    )
    print_table(
        f"Connecting and listing the tools ({args.rounds} times, median)",
        ["transport", "median", "min", "max"],
        [(name, fmt_ms(statistics.median(v)), fmt_ms(min(v)), fmt_ms(max(v))) for name, v in start.items()],
    )


if __name__ == "__main__":
    main()

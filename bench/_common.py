"""The benchmark scenario, written once for every client, and the table printer.

Scenario: a triage agent with one async helper (``search_kb``). The model calls the helper three
times, one call per response, then calls the output tool: 4 Messages API calls per run. The
reflection variant adds a preview turn: 3 helper calls, the output call (answered with the
reflection handler's text), then ``submit``: 5 API calls per run.

Three clients play the scenario:

- ``raw``: a minimal hand-written ``AsyncAnthropic`` loop, the floor any framework sits on. It sends
  the same request as typedagent (same system prompt, tools, ``tool_choice``, ``cache_control``),
  so the HTTP bodies match.
- ``typedagent``: ``execute_agent`` on the agent below.
- ``pydantic-ai``: an ``Agent`` with ``output_type=Triage`` and the same helper. pydantic-ai has no
  reflection mode, so its reflection variant gives the model a ``preview_triage`` tool returning the
  same preview text before ``final_result``: the same five calls.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import platform
import statistics
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from typedagent import AgentDefinition, OutputTool, define_agent, tool

MODEL = "claude-sonnet-4-6"
INSTRUCTIONS = "You triage support tickets. Search the knowledge base before you answer."
PROMPT = "Ticket: the VPN drops every hour, on every laptop of the sales team."
QUERIES = ("vpn drops hourly", "dhcp lease renewal", "idle timeout")
OUTPUT_NAME = "emit_triage"


class Triage(BaseModel):
    severity: int
    summary: str
    kb_articles: list[str]


OUTPUT = Triage(severity=2, summary="VPN sessions drop at DHCP lease renewal.", kb_articles=["KB-17-0", "KB-18-1"])
OUTPUT_INPUT: dict[str, Any] = OUTPUT.model_dump(mode="json")


async def search_kb(query: str, limit: int = 3) -> list[str]:
    """Search the knowledge base; returns article ids.

    Args:
        query: What to look for.
        limit: How many ids to return.
    """
    return [f"KB-{len(query)}-{i}" for i in range(limit)]


def preview(triage: Triage) -> str:
    return f"severity {triage.severity}: {triage.summary} ({len(triage.kb_articles)} articles)"


def typedagent_agent(*, reflection: bool = False) -> AgentDefinition[Triage, None]:
    return define_agent(
        name="triage",
        model=MODEL,
        instructions=INSTRUCTIONS,
        output=OutputTool(Triage, name=OUTPUT_NAME, reflection_handler=preview if reflection else None),
        helpers=[tool(search_kb)],
    )


def model_turns(*, reflection: bool) -> list[list[dict[str, Any]]]:
    """The model's side of the scenario: the tool calls of each response, as ``{"name", "input"}``."""
    turns = [[{"name": "search_kb", "input": {"query": query}}] for query in QUERIES]
    turns.append([{"name": OUTPUT_NAME, "input": OUTPUT_INPUT}])
    if reflection:
        turns.append([{"name": "submit", "input": {}}])
    return turns


def scripted_items(*, reflection: bool) -> list[Any]:
    """The scenario as a ``ScriptedClient`` script."""
    from typedagent.testing import output_call, submit_call, tool_call

    items: list[Any] = [tool_call("search_kb", {"query": query}) for query in QUERIES]
    items.append(output_call(OUTPUT))
    if reflection:
        items.append(submit_call())
    return items


async def request_shape(*, reflection: bool) -> dict[str, Any]:
    """The parameters typedagent sends, minus ``messages``: the raw loop sends exactly these."""
    from typedagent import execute_agent
    from typedagent.testing import ScriptedClient

    client = ScriptedClient(scripted_items(reflection=reflection))
    result = await execute_agent(typedagent_agent(reflection=reflection), PROMPT, client=client)
    assert result.ok, result
    return {key: value for key, value in client.requests[0].items() if key != "messages"}


async def raw_loop(client: Any, shape: dict[str, Any], *, reflection: bool) -> Triage:
    """The floor: a minimal hand-written tool loop on the SDK, as its docs show one.

    Assistant turns go back as the SDK's own content objects; the output is validated with pydantic.
    """
    messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
    candidate: Triage | None = None
    while True:
        response = await client.messages.create(**shape, messages=messages)
        messages.append({"role": "assistant", "content": response.content})
        results = []
        for block in response.content:
            if block.type != "tool_use":
                continue
            if block.name == OUTPUT_NAME:
                candidate = Triage.model_validate(block.input)
                if not reflection:
                    return candidate
                content = preview(candidate)
            elif block.name == "submit" and candidate is not None:
                return candidate
            else:
                content = json.dumps(await search_kb(**block.input))
            results.append({"type": "tool_result", "tool_use_id": block.id, "content": content})
        messages.append({"role": "user", "content": results})


def pydantic_ai_agent(model: Any, *, reflection: bool) -> Any:
    """The same agent in pydantic-ai (``model``: a ``FunctionModel`` or an ``AnthropicModel``)."""
    from pydantic_ai import Agent, Tool

    tools = [Tool(search_kb)]
    if reflection:

        async def preview_triage(triage: Triage) -> str:
            """Preview a triage before handing it over.

            Args:
                triage: The candidate triage.
            """
            return preview(triage)

        tools.append(Tool(preview_triage))
    return Agent(
        model,
        output_type=Triage,
        instructions=INSTRUCTIONS,
        tools=tools,
        model_settings={"max_tokens": 4096},
    )


def pydantic_ai_turns(*, reflection: bool, output_tool: str = "final_result") -> list[list[dict[str, Any]]]:
    """The model's side of the scenario for pydantic-ai (its output tool, its preview tool)."""
    turns = [[{"name": "search_kb", "input": {"query": query}}] for query in QUERIES]
    if reflection:
        turns.append([{"name": "preview_triage", "input": {"triage": OUTPUT_INPUT}}])
    turns.append([{"name": output_tool, "input": OUTPUT_INPUT}])
    return turns


Runner = Callable[[], Awaitable[Any]]
"""One run of the scenario by one client."""
Name = TypeVar("Name")


async def per_run(run: Runner, runs: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) per run."""
    gc.collect()  # every sample starts from the same heap: no client inherits another's garbage
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(runs):
        await run()
    return (time.process_time() - cpu) / runs, (time.perf_counter() - wall) / runs


async def alternating(
    clients: Mapping[Name, Runner], rounds: int, runs: int
) -> tuple[dict[Name, list[float]], dict[Name, list[float]]]:
    """CPU and wall seconds per run of each client, one sample a round; the order reverses every round."""
    cpu: dict[Name, list[float]] = {name: [] for name in clients}
    wall: dict[Name, list[float]] = {name: [] for name in clients}
    order = list(clients)
    for _ in range(rounds):
        for name in order:
            spent, elapsed = await per_run(clients[name], runs)
            cpu[name].append(spent)
            wall[name].append(elapsed)
        order.reverse()
    return cpu, wall


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A Markdown table, so the output pastes straight into docs/performance.md."""
    cells = [[str(cell) for cell in row] for row in rows]
    widths = [max(len(h), *(len(row[i]) for row in cells)) for i, h in enumerate(headers)]
    print(f"\n### {title}\n")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in cells:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")
    print()


def verdict(value: float, target: float) -> str:
    return "met" if value <= target else "MISSED"


def machine() -> str:
    """One line naming the machine and the versions measured."""
    import importlib.metadata as md

    def version(name: str) -> str:
        try:
            return md.version(name)
        except md.PackageNotFoundError:
            return "-"

    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    packages = ("anthropic", "httpx2", "aiohttp", "pydantic", "pydantic-ai-slim", "typedagent")
    versions = ", ".join(f"{name} {version(name)}" for name in packages)
    return f"{cpu}, {os.cpu_count()} cores (load average {load}); Python {platform.python_version()}; {versions}"


def fmt_us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs"


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f} ms"


def ratio(value: float, baseline: float) -> str:
    return f"{value / baseline:.2f}x"


def server_scripts() -> dict[str, list[Any]]:
    """The scenario as ``FakeAnthropicServer`` scripts, one per tool naming.

    typedagent and the raw loop share tool names; pydantic-ai names its output tool ``final_result``
    and has its own preview tool.
    """
    from typedagent.testing import response, tool_call

    def script(turns: list[list[dict[str, Any]]]) -> list[Any]:
        return [response(*(tool_call(call["name"], call["input"]) for call in turn)) for turn in turns]

    return {
        "typedagent-plain": script(model_turns(reflection=False)),
        "typedagent-reflection": script(model_turns(reflection=True)),
        "pydantic-ai-plain": script(pydantic_ai_turns(reflection=False)),
        "pydantic-ai-reflection": script(pydantic_ai_turns(reflection=True)),
    }


@contextlib.contextmanager
def fake_servers(latency_ms: float = 0) -> Iterator[dict[str, str]]:
    """One ``FakeAnthropicServerProcess`` per script (per-conversation mode); yields their base URLs.

    Each server runs in a process of its own, so this process's CPU time is the client's alone.
    """
    from typedagent.testing import FakeAnthropicServerProcess

    servers = {
        name: FakeAnthropicServerProcess(script, per_conversation=True, latency_ms=latency_ms)
        for name, script in server_scripts().items()
    }
    with contextlib.ExitStack() as stack:
        yield {name: stack.enter_context(server).base_url for name, server in servers.items()}
    problems = [line for server in servers.values() for line in server.stderr.splitlines() if "problem" in line]
    if problems:
        raise RuntimeError("the fake servers could not answer some requests:\n" + "\n".join(problems[:20]))

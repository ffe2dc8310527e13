"""Token economy: what each framework sends for the same agent, and what it costs, cold and warm.

One agent (a ~160-word system prompt, two helper tools, an 8-field output model with a validator) and one
scripted model, played by four clients against ``FakeAnthropicServer(prompt_cache=True)``, which records every
request and reports the usage the API would (tokens estimated as JSON bytes / 3.5; cache reads and writes
simulated from Anthropic's documented rules: breakpoints, the 20-block lookback, the model's minimum cacheable
length, TTLs):

- ``typedagent``: ``execute_agent``, default settings (``prompt_caching=True``);
- ``pydantic-ai``: ``Agent`` on ``AnthropicModel`` with all its caching on (``anthropic_cache_instructions``,
  ``anthropic_cache_tool_definitions`` and ``anthropic_cache``, the automatic breakpoint);
- ``raw SDK loop``: a hand-written ``messages.create`` loop with the top-level ``cache_control`` the SDK's docs
  show; its output tool is the same JSON schema pydantic generates, described by the model's docstring;
- ``SDK tool runner``: ``client.beta.messages.tool_runner`` with the same top-level ``cache_control`` and
  ``thread=False`` (the fake server keeps no message threads), stopped once the output tool's input validates.

Scenarios (the model's side is the same for every client; only tool names differ):

- ``one tool``: one helper call, then the output;
- ``parallel + rejected``: both helpers in one response, an output the validator rejects, then a good one;
- ``10 iterations``: nine helper calls, one per response, then the output (10 requests);
- ``10 iterations, forced``: the same, with the tenth request forcing the output tool (typedagent's
  ``force_output_on_last_iteration=True``; the raw loop sends the same ``tool_choice``; pydantic-ai and the
  tool runner have no such setting).

Each client plays each scenario twice on one server: ``cold`` is the first run (empty cache), ``warm`` the
second, with another ticket (a new run of the same agent within the cache's lifetime). Cost is at Sonnet-class
prices: $3 input, $15 output, $3.75 5-minute and $6 1-hour cache writes, $0.30 cache reads per million tokens.

    .venv/bin/python bench/bench_tokens.py
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from _common import machine, print_table
from pydantic import BaseModel, Field, ValidationError

from typedagent import OutputRejected, OutputTool, ValidationConfig, define_agent, execute_agent, tool
from typedagent.testing import FakeAnthropicServer, response, tool_call

MODEL = "claude-sonnet-4-6"
INSTRUCTIONS = (
    "You are the triage desk of a mid-sized software company. Each message you receive is a support ticket "
    "written by a customer, sometimes angry, sometimes vague, often missing the one detail that matters. Your job "
    "is to turn it into a structured triage record that the on-call engineer can act on without reading the "
    "ticket again. Look the customer up before you judge the severity: an enterprise customer on a paid support "
    "plan gets a faster response target than a free-tier user, and a customer with open incidents may be "
    "reporting the same problem twice. Search the knowledge base for known issues that match the symptoms, and "
    "cite the articles you relied on by their ids. Severity runs from 1 (the whole product is down for many "
    "customers) to 4 (a question or a cosmetic problem). Be conservative: when in doubt between two severities, "
    "pick the more urgent one and say why in the summary. The summary must be one or two plain sentences, without "
    "greetings or apologies, naming the component and the symptom. Never invent article ids, customer names or "
    "version numbers that the tools did not give you."
)
HOUSE_RULES = (
    "House rules for the record. The component is one of: accounts, billing, dashboard, exports, imports, "
    "integrations, mobile, notifications, permissions, reporting, search, sync, or other; pick the narrowest one "
    "that fits and use other only when none does. A ticket about money taken twice, an invoice that cannot be "
    "paid, or a plan that changed without the customer asking is billing, whatever screen it mentions. A ticket "
    "about data that is late, missing or stale after a sync is sync, even when the customer saw it on the "
    "dashboard. A security report (a leaked key, a permission that lets someone see what they should not, a "
    "suspicious login) is always severity 1 and component permissions or accounts, and its summary says "
    "security report first. Mark duplicate_of only with an incident id that lookup_customer returned as open; a "
    "ticket that merely resembles an old incident is not a duplicate. Set needs_reply to false only when the "
    "ticket is an automated notification or says explicitly that no answer is wanted. Articles count only when "
    "their title matches the symptom; do not cite an article just because the search returned it. When the "
    "customer cannot be found, use the name as written for customer_id, plan free, and say so in the summary. "
    "Keep product names as the customer wrote them, but correct obvious typos in component names. If a ticket "
    "mixes two unrelated problems, triage the more urgent one and mention the other in a single clause."
)
AGENT: dict[str, str] = {"instructions": INSTRUCTIONS}
"""The agent being measured: ``small`` (``INSTRUCTIONS``) or ``large`` (with ``HOUSE_RULES``)."""
SIZES = {"small": INSTRUCTIONS, "large": f"{INSTRUCTIONS}\n\n{HOUSE_RULES}"}
TICKETS = (
    "Ticket from acme-corp: since this morning every export to CSV fails with a timeout after 30 seconds.",
    "Ticket from globex: the dashboard shows yesterday's figures although the nightly sync reported success.",
)
PRICES = {"input": 3.0, "output": 15.0, "write_5m": 3.75, "write_1h": 6.0, "read": 0.30}
"""US dollars per million tokens, Sonnet-class."""


class Triage(BaseModel):
    """The triage record the on-call engineer acts on."""

    customer_id: str = Field(description="The customer's id, as lookup_customer returned it.")
    plan: Literal["free", "team", "enterprise"] = Field(description="The customer's support plan.")
    severity: int = Field(ge=1, le=4, description="1 = product down for many customers, 4 = question.")
    component: str = Field(description="The product component the ticket is about.")
    summary: str = Field(max_length=400, description="One or two sentences: the component and the symptom.")
    kb_articles: list[str] = Field(default_factory=list, description="Ids of the knowledge-base articles used.")
    duplicate_of: str | None = Field(default=None, description="An open incident this ticket repeats, if any.")
    needs_reply: bool = Field(default=True, description="Whether the customer needs a written reply today.")


def rejection(triage: Triage) -> str | None:
    """The validator: an enterprise customer's ticket is never below severity 3."""
    if triage.plan == "enterprise" and triage.severity > 3:
        return "severity: an enterprise customer's ticket is severity 3 or more urgent; lower the number."
    return None


async def lookup_customer(name: str) -> dict[str, Any]:
    """Look a customer up by name: their id, support plan and open incidents.

    Args:
        name: The customer's name as the ticket gives it.
    """
    return {"customer_id": f"cus_{len(name):04d}", "plan": "enterprise", "open_incidents": []}


async def search_kb(query: str, limit: int = 3) -> list[dict[str, str]]:
    """Search the knowledge base for known issues; returns article ids and titles.

    Args:
        query: Symptoms to look for.
        limit: How many articles to return at most.
    """
    return [{"id": f"KB-{len(query)}-{i}", "title": f"Known issue {i}: {query}"} for i in range(limit)]


HELPERS = {"lookup_customer": lookup_customer, "search_kb": search_kb}
REJECTED = Triage(
    customer_id="cus_0009",
    plan="enterprise",
    severity=4,
    component="exports",
    summary="CSV exports time out after 30 seconds for every user.",
    kb_articles=["KB-16-0"],
)
GOOD = REJECTED.model_copy(update={"severity": 2})


# The scenarios: the model's responses, as lists of (tool, input); "OUTPUT" is the framework's output tool.

Turn = list[tuple[str, dict[str, Any]]]


def scenario(name: str) -> list[Turn]:
    output = ("OUTPUT", GOOD.model_dump(mode="json"))
    if name == "one tool":
        return [[("lookup_customer", {"name": "acme-corp"})], [output]]
    if name == "parallel + rejected":
        return [
            [("lookup_customer", {"name": "acme-corp"}), ("search_kb", {"query": "csv export timeout"})],
            [("OUTPUT", REJECTED.model_dump(mode="json"))],
            [output],
        ]
    return [[("search_kb", {"query": f"csv export timeout, attempt {n}"})] for n in range(9)] + [[output]]


SCENARIOS = ("one tool", "parallel + rejected", "10 iterations", "10 iterations, forced")


def script(turns: list[Turn], output_name: str) -> list[Any]:
    return [response(*(tool_call(output_name if n == "OUTPUT" else n, i) for n, i in turn)) for turn in turns]


# The clients: each plays one run of a scenario on ``client`` (an AsyncAnthropic on the fake server).

Play = Callable[[Any, str, str], Awaitable[None]]


async def play_typedagent(client: Any, name: str, ticket: str) -> None:
    def validate(out: Triage) -> None:
        problem = rejection(out)
        if problem:
            raise OutputRejected(problem)

    forced = name.endswith("forced")
    agent = define_agent(
        name="triage",
        model=MODEL,
        instructions=AGENT["instructions"],
        output=OutputTool(Triage),
        helpers=[tool(lookup_customer), tool(search_kb)],
        validators=[validate],
        validation=ValidationConfig(max_iterations_per_attempt=10, force_output_on_last_iteration=forced),
    )
    result = await execute_agent(agent, ticket, client=client)
    assert result.ok, result


async def play_pydantic_ai(client: Any, name: str, ticket: str) -> None:
    from pydantic_ai import Agent, ModelRetry, Tool
    from pydantic_ai.models.anthropic import AnthropicModel, AnthropicModelSettings
    from pydantic_ai.providers.anthropic import AnthropicProvider

    settings = AnthropicModelSettings(
        max_tokens=4096,
        anthropic_cache_instructions=True,
        anthropic_cache_tool_definitions=True,
        anthropic_cache=True,
    )
    model = AnthropicModel(MODEL, provider=AnthropicProvider(anthropic_client=client))
    agent = Agent(
        model,
        output_type=Triage,
        instructions=AGENT["instructions"],
        tools=[Tool(lookup_customer), Tool(search_kb)],
        model_settings=settings,
    )

    @agent.output_validator
    def validate(out: Triage) -> Triage:
        problem = rejection(out)
        if problem:
            raise ModelRetry(problem)
        return out

    result = await agent.run(ticket)
    assert isinstance(result.output, Triage)


def raw_tools() -> list[dict[str, Any]]:
    """The tools a careful hand-written loop sends: the helpers' schemas and the output model's own."""
    schema = Triage.model_json_schema()
    description = schema.pop("description")
    return [
        *typedagent_helper_params(),
        {"name": "final_output", "description": description, "input_schema": schema},
    ]


def typedagent_helper_params() -> list[dict[str, Any]]:
    """The helpers' definitions, written by hand as the SDK's docs write them."""
    return [
        {
            "name": "lookup_customer",
            "description": "Look a customer up by name: their id, support plan and open incidents.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The customer's name as the ticket gives it."}
                },
                "required": ["name"],
            },
        },
        {
            "name": "search_kb",
            "description": "Search the knowledge base for known issues; returns article ids and titles.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Symptoms to look for."},
                    "limit": {"type": "integer", "default": 3, "description": "How many articles to return at most."},
                },
                "required": ["query"],
            },
        },
    ]


async def play_raw(client: Any, name: str, ticket: str) -> None:
    tools = raw_tools()
    messages: list[dict[str, Any]] = [{"role": "user", "content": ticket}]
    for iteration in range(10):
        forced = name.endswith("forced") and iteration == 9
        reply = await client.messages.create(
            model=MODEL,
            max_tokens=4096,
            system=AGENT["instructions"],
            tools=tools,
            tool_choice={"type": "tool", "name": "final_output"} if forced else {"type": "any"},
            messages=messages,
            cache_control={"type": "ephemeral"},
        )
        messages.append({"role": "assistant", "content": [block.model_dump() for block in reply.content]})
        results: list[dict[str, Any]] = []
        for block in reply.content:
            if block.name == "final_output":
                problem = _problem(block.input)
                if problem is None:
                    return
                results.append({"type": "tool_result", "tool_use_id": block.id, "content": problem, "is_error": True})
            else:
                content = json.dumps(await HELPERS[block.name](**block.input))
                results.append({"type": "tool_result", "tool_use_id": block.id, "content": content})
        messages.append({"role": "user", "content": results})
    raise AssertionError("the raw loop ran out of iterations")


def _problem(data: Any) -> str | None:
    try:
        return rejection(Triage.model_validate(data))
    except ValidationError as exc:
        return str(exc)


async def play_runner(client: Any, name: str, ticket: str) -> None:
    from anthropic.lib.tools import BetaAsyncFunctionTool, beta_async_tool

    accepted: list[Triage] = []

    async def final_output(**fields: Any) -> str:
        problem = _problem(fields)
        if problem is not None:
            raise ValueError(problem)
        accepted.append(Triage.model_validate(fields))
        return "accepted"

    schema = Triage.model_json_schema()
    output = BetaAsyncFunctionTool(
        final_output, name="final_output", description=schema.pop("description"), input_schema=schema
    )
    runner = client.beta.messages.tool_runner(
        model=MODEL,
        max_tokens=4096,
        system=AGENT["instructions"],
        tools=[beta_async_tool(as_text(lookup_customer)), beta_async_tool(as_text(search_kb)), output],
        tool_choice={"type": "any"},
        messages=[{"role": "user", "content": ticket}],
        cache_control={"type": "ephemeral"},
        thread=False,
    )
    try:
        async for message in runner:
            if any(block.type == "tool_use" and block.name == "final_output" for block in message.content):
                await runner.generate_tool_call_response()  # runs the output tool: validates, or reports the problem
                if accepted:
                    return
    finally:
        await runner.close()  # the SDK's way to stop a runner early
    raise AssertionError("the tool runner ended without an accepted output")


def as_text(helper: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[str]]:
    """The helper with its result as JSON text, as the raw loop and typedagent send it.

    The tool runner sends a function's list as the ``tool_result``'s content as is; a list of dicts without
    ``type`` is not content the API takes.
    """

    @functools.wraps(helper)
    async def wrapped(*args: Any, **kwargs: Any) -> str:
        return json.dumps(await helper(*args, **kwargs))

    return wrapped


CLIENTS: dict[str, tuple[Play, str]] = {
    "typedagent": (play_typedagent, "final_output"),
    "pydantic-ai (all caching on)": (play_pydantic_ai, "final_result"),
    "raw SDK loop": (play_raw, "final_output"),
    "SDK tool runner": (play_runner, "final_output"),
}


@dataclass
class Run:
    requests: int = 0
    bytes: int = 0
    input_tokens: int = 0
    """All input tokens: uncached, read and written."""
    read: int = 0
    cost: float = 0.0


def measure(requests: list[dict[str, Any]], responses: list[dict[str, Any]]) -> Run:
    run = Run(requests=len(requests))
    for request, message in zip(requests, responses, strict=True):
        run.bytes += len(json.dumps(request, separators=(",", ":"), ensure_ascii=False).encode())
        usage = message["usage"]
        split = usage.get("cache_creation") or {}
        written_1h = split.get("ephemeral_1h_input_tokens", 0)
        written_5m = usage["cache_creation_input_tokens"] - written_1h
        run.input_tokens += (
            usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]
        )
        run.read += usage["cache_read_input_tokens"]
        run.cost += (
            usage["input_tokens"] * PRICES["input"]
            + usage["output_tokens"] * PRICES["output"]
            + written_5m * PRICES["write_5m"]
            + written_1h * PRICES["write_1h"]
            + usage["cache_read_input_tokens"] * PRICES["read"]
        ) / 1e6
    return run


async def measure_client(name: str, scenario_name: str) -> tuple[Run, Run] | None:
    play, output_name = CLIENTS[name]
    if scenario_name.endswith("forced") and name not in ("typedagent", "raw SDK loop"):
        return None
    turns = script(scenario(scenario_name), output_name)
    runs: list[Run] = []
    server = FakeAnthropicServer(turns, per_conversation=True, prompt_cache=True)
    async with server, server.client(max_retries=0) as client:
        for ticket in TICKETS:
            start = len(server.requests)
            await play(client, scenario_name, ticket)
            runs.append(measure(server.requests[start:], server.responses[start:]))
    assert not server.problems, server.problems
    return runs[0], runs[1]


def m_usd(dollars: float) -> str:
    return f"{dollars * 1e3:.2f} m$"


def static_prefix_bytes(request: dict[str, Any]) -> int:
    """The JSON bytes of a request's tools and system prompt, breakpoints left out."""

    def unmarked(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
        if isinstance(value, list):
            return [unmarked(v) for v in value]
        return value

    parts = [unmarked(request.get("tools") or []), unmarked(request.get("system") or "")]
    return sum(len(json.dumps(part, separators=(",", ":"), ensure_ascii=False).encode()) for part in parts)


async def prefixes() -> dict[str, int]:
    sizes: dict[str, int] = {}
    for name, (play, output_name) in CLIENTS.items():
        server = FakeAnthropicServer(script(scenario("one tool"), output_name), per_conversation=True)
        async with server, server.client(max_retries=0) as client:
            await play(client, "one tool", TICKETS[0])
        sizes[name] = static_prefix_bytes(server.requests[0])
    return sizes


async def main() -> None:
    print(f"Machine: {machine()}")
    logging.getLogger("anthropic").setLevel(logging.CRITICAL)  # the tool runner logs the rejected output's error
    for size, instructions in SIZES.items():
        AGENT["instructions"] = instructions
        print(f"\n## The {size} agent: a {len(instructions.split())}-word system prompt")
        await tables()


async def tables() -> None:
    sizes = await prefixes()
    print_table(
        "Fixed prefix (tools + system prompt) each client sends",
        ["client", "bytes", "est. tokens"],
        [[name, f"{size:,}", f"{size / 3.5:,.0f}"] for name, size in sizes.items()],
    )
    rows: list[list[object]] = []
    cheapest: dict[tuple[str, str], str] = {}
    for scenario_name in SCENARIOS:
        measured = {name: await measure_client(name, scenario_name) for name in CLIENTS}
        present = {name: runs for name, runs in measured.items() if runs is not None}
        for phase in (0, 1):
            best = min(present, key=lambda name: present[name][phase].cost)
            cheapest[(scenario_name, ["cold", "warm"][phase])] = best
        base = present["typedagent"]
        for name, runs in measured.items():
            if runs is None:
                rows.append([scenario_name, name, "—", "—", "—", "—", "—", "—", "—"])
                continue
            cold, warm = runs
            rows.append(
                [
                    scenario_name,
                    name,
                    cold.requests,
                    f"{cold.bytes:,}",
                    f"{cold.input_tokens:,}",
                    f"{cold.read / cold.input_tokens:.0%} / {warm.read / warm.input_tokens:.0%}",
                    m_usd(cold.cost),
                    m_usd(warm.cost),
                    f"{cold.cost / base[0].cost:.2f}x / {warm.cost / base[1].cost:.2f}x",
                ]
            )
    print_table(
        "Tokens and estimated cost per run (cold: empty cache; warm: second run of the agent)",
        [
            "scenario",
            "client",
            "requests",
            "bytes sent",
            "est. input tokens",
            "cache-read share cold / warm",
            "cost cold",
            "cost warm",
            "vs typedagent cold / warm",
        ],
        rows,
    )
    print_table(
        "Cheapest client per scenario",
        ["scenario", "cold", "warm"],
        [[s, cheapest[(s, "cold")], cheapest[(s, "warm")]] for s in SCENARIOS],
    )


if __name__ == "__main__":
    asyncio.run(main())

"""Client CPU per streamed run over loopback HTTP, against a minimal hand-written SDK streaming loop.

The scenario of ``_common`` (three helper calls, then the output call: 4 Messages API calls), every call
streamed, served by ``FakeAnthropicServer`` in a process of its own as server-sent events, so this
process's CPU time (``time.process_time``) is the client's alone. Two clients, in alternation round after
round, medians over rounds:

- ``raw SDK stream loop`` (baseline): the SDK docs' streaming tool loop — ``client.messages.stream(...)``,
  every event read, ``get_final_message()``, tools run, results sent back;
- ``stream_agent``: typedagent's streamed execution, every event read (deltas, partial outputs, tool
  calls, the result).

A second table measures the latency a UI sees: from the moment the first byte of the output tool's input
arrives from the socket (the chunk carrying its first non-empty ``input_json_delta``) to the first
``PartialOutput`` event in the consumer's hands, against the raw loop's first ``input_json`` event. The
``long`` scenario has an output of about 4 KB, streamed in some 250 pieces.

    .venv/bin/python bench/bench_streaming.py [--rounds 15] [--runs 10]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
from _common import (
    OUTPUT_NAME,
    PROMPT,
    QUERIES,
    Runner,
    Triage,
    alternating,
    fmt_ms,
    fmt_us,
    machine,
    median,
    per_run,
    print_table,
    request_shape,
    search_kb,
    typedagent_agent,
    verdict,
)

from typedagent import stream_agent

TARGET = 1.15

SHORT = Triage(severity=2, summary="VPN sessions drop at DHCP lease renewal.", kb_articles=["KB-17-0", "KB-18-1"])
LONG = Triage(
    severity=3,
    summary=" ".join(f"Step {i}: the lease renews, the tunnel re-keys and the session drops." for i in range(55)),
    kb_articles=[f"KB-{i}-0" for i in range(20)],
)


class Stamps:
    """When the first byte of the output tool's input arrived from the socket, per run."""

    def __init__(self) -> None:
        self.armed = False
        self.first_byte: float | None = None

    def reset(self) -> None:
        self.armed = False
        self.first_byte = None

    def see(self, chunk: bytes) -> None:
        if self.first_byte is not None:
            return
        if f'"name":"{OUTPUT_NAME}"'.encode() in chunk:
            self.armed = True
        if self.armed and b'"partial_json":"' in chunk and b'"partial_json":""' not in chunk:
            self.first_byte = time.perf_counter()


class _StampedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, stamps: Stamps) -> None:
        self.inner = inner
        self.stamps = stamps

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.stamps.see(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class StampingTransport(httpx2.AsyncBaseTransport):
    """The SDK's default transport, noting when the output tool's input starts arriving (negligible CPU)."""

    def __init__(self, stamps: Stamps) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.stamps = stamps

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        response.stream = _StampedStream(response.stream, self.stamps)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def client(base_url: str, stamps: Stamps) -> Any:
    from anthropic import AsyncAnthropic, DefaultAsyncHttpxClient

    return AsyncAnthropic(
        base_url=base_url, api_key="test", http_client=DefaultAsyncHttpxClient(transport=StampingTransport(stamps))
    )


async def raw_stream_loop(sdk: Any, shape: dict[str, Any], stamps: Stamps) -> tuple[Triage, float | None]:
    """The floor: the SDK's streaming helper in a minimal tool loop, every event read.

    Returns the output and when the first ``input_json`` event of the output tool reached the loop.
    """
    messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
    first: float | None = None
    while True:
        async with sdk.messages.stream(**shape, messages=messages) as stream:
            async for event in stream:
                if first is None and event.type == "input_json" and stamps.first_byte is not None:
                    first = time.perf_counter()
            response = await stream.get_final_message()
        messages.append({"role": "assistant", "content": response.content})
        results = []
        for block in response.content:
            if block.type != "tool_use":
                continue
            if block.name == OUTPUT_NAME:
                return Triage.model_validate(block.input), first
            content = json.dumps(await search_kb(**block.input))
            results.append({"type": "tool_result", "tool_use_id": block.id, "content": content})
        messages.append({"role": "user", "content": results})


async def raw_runner(base_url: str, expected: Triage, latencies: list[float]) -> Runner:
    stamps = Stamps()
    sdk = client(base_url, stamps)
    shape = await request_shape(reflection=False)

    async def run() -> Any:
        stamps.reset()
        output, first = await raw_stream_loop(sdk, shape, stamps)
        assert output == expected
        assert first is not None
        assert stamps.first_byte is not None
        latencies.append(first - stamps.first_byte)
        return output

    return run


def typedagent_runner(base_url: str, expected: Triage, latencies: list[float]) -> Runner:
    stamps = Stamps()
    sdk = client(base_url, stamps)
    agent = typedagent_agent()

    async def run() -> Any:
        stamps.reset()
        first: float | None = None
        async with stream_agent(agent, PROMPT, client=sdk) as streamed:
            async for event in streamed:
                if first is None and event.kind == "partial_output":
                    first = time.perf_counter()
        result = streamed.result
        assert result.ok is True
        assert result.output == expected
        assert first is not None
        assert stamps.first_byte is not None
        latencies.append(first - stamps.first_byte)
        return result

    return run


async def measure(base_url: str, expected: Triage, rounds: int, runs: int) -> dict[str, dict[str, Any]]:
    latencies: dict[str, list[float]] = {"raw SDK stream loop": [], "stream_agent": []}
    clients = {
        "raw SDK stream loop": await raw_runner(base_url, expected, latencies["raw SDK stream loop"]),
        "stream_agent": typedagent_runner(base_url, expected, latencies["stream_agent"]),
    }
    for run in clients.values():  # warm-up: connections, imports, schema caches
        await per_run(run, 3)
    for found in latencies.values():
        found.clear()
    cpu, wall = await alternating(clients, rounds, runs)
    raw = cpu["raw SDK stream loop"]
    return {
        name: {
            "cpu": median(cpu[name]),
            "wall": median(wall[name]),
            "paired": median([mine / theirs for mine, theirs in zip(cpu[name], raw, strict=True)]),
            "of_medians": median(cpu[name]) / median(raw),
            "latency": median(latencies[name]) if latencies[name] else float("nan"),
        }
        for name in clients
    }


def scripts() -> dict[str, list[Any]]:
    from typedagent.testing import response, tool_call

    def script(output: Triage) -> list[Any]:
        turns = [response(tool_call("search_kb", {"query": query})) for query in QUERIES]
        return [*turns, response(tool_call(OUTPUT_NAME, output.model_dump(mode="json")))]

    return {"short": script(SHORT), "long": script(LONG)}


@contextlib.contextmanager
def servers() -> Iterator[dict[str, str]]:
    from typedagent.testing import FakeAnthropicServerProcess

    processes = {name: FakeAnthropicServerProcess(script, per_conversation=True) for name, script in scripts().items()}
    with contextlib.ExitStack() as stack:
        yield {name: stack.enter_context(process).base_url for name, process in processes.items()}


async def main_async(rounds: int, runs: int) -> tuple[list[list[str]], list[list[str]]]:
    cpu_rows: list[list[str]] = []
    latency_rows: list[list[str]] = []
    with servers() as urls:
        for scenario, expected in (("short", SHORT), ("long", LONG)):
            samples = await measure(urls[scenario], expected, rounds, runs)
            size = f"{scenario} output ({len(expected.model_dump_json())} B)"
            for name, sample in samples.items():
                worst = max(sample["paired"], sample["of_medians"])
                target = "baseline" if name.startswith("raw") else f"≤ {TARGET}x {verdict(worst, TARGET)}"
                cpu_rows.append(
                    [
                        size,
                        name,
                        fmt_us(sample["cpu"]),
                        f"{sample['of_medians']:.2f}x / {sample['paired']:.2f}x",
                        fmt_ms(sample["wall"]),
                        target,
                    ]
                )
                what = "first input_json event" if name.startswith("raw") else "first PartialOutput event"
                latency_rows.append([size, name, what, f"{sample['latency'] * 1e6:,.0f} µs"])
    return cpu_rows, latency_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--runs", type=int, default=10, help="runs per client per round")
    args = parser.parse_args()
    print(f"Machine: {machine()}")
    cpu_rows, latency_rows = asyncio.run(main_async(args.rounds, args.runs))
    print_table(
        f"Client CPU per streamed run over loopback HTTP (4 calls; median of {args.rounds} rounds x {args.runs} runs)",
        ["scenario", "client", "CPU per run", "vs raw (medians / paired)", "wall per run", "target"],
        cpu_rows,
    )
    print_table(
        "From the first byte of the output tool's input to the consumer (median over runs)",
        ["scenario", "client", "event", "latency"],
        latency_rows,
    )


if __name__ == "__main__":
    main()

"""Peak memory of ``stream_agent`` when its consumer is slow, against ``execute_agent`` on the same output.

One model call whose output tool writes a long ``summary`` (10 KB to 160 KB of JSON), streamed the way the API
streams it — ``input_json_delta`` pieces of 16 characters — by a ``ScriptedClient`` in this process. Each
measurement runs in a fresh interpreter; the figure is ``tracemalloc``'s peak of Python allocations during
the run (the interpreter and the imports before it are not counted). Three ways to run it:

- ``execute_agent`` (baseline): no stream, the output parsed once;
- ``stream, fast consumer``: ``stream_agent``, every event read as it arrives;
- ``stream, slow consumer``: ``stream_agent`` whose consumer reads the first event, then nothing until the
  model's response has streamed in whole (a UI that falls behind), then everything.

A slow consumer used to hold every ``PartialOutput`` snapshot of the output — each a copy of the output so
far — so its memory grew with the square of the output; the stream now keeps only the newest snapshot of
each tool call while the consumer lags, and memory grows with the output. The last column, the slow
consumer's peak per byte of output, is the figure that must not grow with the output (it shrinks while the
fixed cost of a run is still a large part of the peak); ``slow / execute`` is the ratio to the baseline
measured in the same run. Run it on a checkout before the change (``PYTHONPATH=<old>/src``) for the figures
the change is compared with.

    .venv/bin/python bench/bench_stream_memory.py [--sizes 10,40,160]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tracemalloc
from typing import Any

from _common import machine, print_table
from pydantic import BaseModel

MODES = ("execute", "fast", "slow")


class Report(BaseModel):
    title: str
    summary: str


def report(kilobytes: int) -> Report:
    sentence = "The lease renews, the tunnel re-keys and the session drops. "
    return Report(title="VPN drops", summary=(sentence * (kilobytes * 1024 // len(sentence) + 1))[: kilobytes * 1024])


async def measure(mode: str, kilobytes: int) -> tuple[int, int]:
    """(peak bytes, events read) of one run."""
    from typedagent import ExecuteCallbacks, OutputTool, define_agent, execute_agent, stream_agent
    from typedagent.testing import ScriptedClient, output_call

    agent = define_agent(name="reports", model="claude-sonnet-4-6", output=OutputTool(Report), max_tokens=64_000)
    expected = report(kilobytes)
    client = ScriptedClient([output_call(expected)])
    streamed_in = asyncio.Event()
    callbacks = ExecuteCallbacks(on_tool_call=lambda state, event: streamed_in.set())
    events = 0
    tracemalloc.start()
    tracemalloc.reset_peak()
    if mode == "execute":
        result = await execute_agent(agent, "Summarise the incident.", client=client)
    else:
        async with stream_agent(agent, "Summarise the incident.", client=client, callbacks=callbacks) as run:
            async for _ in run:
                events += 1
                if mode == "slow" and events == 1:
                    await streamed_in.wait()  # the consumer lags until the whole response has streamed in
        result = run.result
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result.unwrap() == expected
    return peak, events


def child(mode: str, kilobytes: int) -> tuple[int, int]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(kilobytes)], capture_output=True, text=True, check=True
    )
    peak, events = json.loads(done.stdout)
    return int(peak), int(events)


def megabytes(value: float) -> str:
    return f"{value / 2**20:,.1f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,40,160", help="output sizes in KB, comma-separated")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "KB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(measure(args.child[0], int(args.child[1])))))
        return
    print(f"Machine: {machine()}")
    rows: list[list[Any]] = []
    for kilobytes in (int(size) for size in args.sizes.split(",")):
        peaks = {mode: child(mode, kilobytes) for mode in MODES}
        baseline = peaks["execute"][0]
        rows.append(
            [
                f"{kilobytes} KB",
                peaks["slow"][1],
                megabytes(baseline),
                megabytes(peaks["fast"][0]),
                megabytes(peaks["slow"][0]),
                f"{peaks['slow'][0] / baseline:.1f}x",
                f"{peaks['slow'][0] / (kilobytes * 1024):,.0f} B",
            ]
        )
    print_table(
        "Peak memory of one streamed execution (tracemalloc, fresh interpreter per figure)",
        [
            "output",
            "events read (slow)",
            "execute_agent",
            "stream, fast consumer",
            "stream, slow consumer",
            "slow / execute",
            "slow, per output byte",
        ],
        rows,
    )


if __name__ == "__main__":
    main()

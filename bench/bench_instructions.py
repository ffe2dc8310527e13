"""Client instructions per run over loopback HTTP, counted by valgrind: a figure the machine's load cannot move.

CPU time on a shared machine moves by 10% from one round to the next; an instruction count does not. Each
client (the raw SDK loop, typedagent) runs the loopback scenario of ``bench_loopback.py`` in a process of its
own under ``valgrind --tool=callgrind`` (the fake server runs natively in its own process, uncounted), once
with ``--few`` runs and once with ``--many``: the difference divided by the extra runs is the instructions of
one run, start-up and warm-up cancelled out. Instructions are not time (cache misses and a thread hand-off
cost more than their count), so read this table beside ``bench_loopback.py``'s.

    .venv/bin/python bench/bench_instructions.py [--few 5] [--many 45] [--reflection]

Skipped (a line says so) where valgrind is not installed.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from _common import PROMPT, fake_servers, machine, print_table, raw_loop, request_shape, typedagent_agent

from typedagent import execute_agent

CLIENTS = ("raw SDK loop", "typedagent")


async def play(client_name: str, runs: int, reflection: bool) -> None:
    """The child: warm up, then play the scenario ``runs`` times with one client."""
    from anthropic import AsyncAnthropic

    with fake_servers() as urls:
        client = AsyncAnthropic(base_url=urls[f"typedagent-{'reflection' if reflection else 'plain'}"], api_key="test")
        agent = typedagent_agent(reflection=reflection)
        shape = await request_shape(reflection=reflection)
        for _ in range(5):
            assert (await execute_agent(agent, PROMPT, client=client)).ok
            await raw_loop(client, shape, reflection=reflection)
        for _ in range(runs):
            if client_name == "typedagent":
                assert (await execute_agent(agent, PROMPT, client=client)).ok
            else:
                await raw_loop(client, shape, reflection=reflection)
        await client.close()


def count(client_name: str, runs: int, reflection: bool) -> int:
    """Instructions of a child process playing ``runs`` runs, counted by callgrind."""
    with tempfile.TemporaryDirectory() as folder:
        command = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={folder}/out",
            sys.executable,
            __file__,
            "--child",
            client_name,
            str(runs),
            *(["--reflection"] if reflection else []),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    assert found is not None, done.stderr[-2000:]
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--few", type=int, default=5)
    parser.add_argument("--many", type=int, default=45)
    parser.add_argument("--reflection", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("CLIENT", "RUNS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        asyncio.run(play(args.child[0], int(args.child[1]), args.reflection))
        return
    print(machine())
    if shutil.which("valgrind") is None:
        print("\nvalgrind is not installed (Debian: apt-get install valgrind): no instruction counts.")
        return
    jobs = [(name, runs) for name in ("raw", "typedagent") for runs in (args.few, args.many)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        counts = dict(zip(jobs, pool.map(lambda job: count(job[0], job[1], args.reflection), jobs), strict=True))
    extra = args.many - args.few
    per_run = {name: (counts[(name, args.many)] - counts[(name, args.few)]) / extra for name in ("raw", "typedagent")}
    scenario = "reflection (5 calls)" if args.reflection else "plain (4 calls)"
    title = (
        f"Client instructions per run over loopback HTTP, httpx2 ({scenario}; callgrind, {args.many} - {args.few} runs)"
    )
    print_table(
        title,
        ["client", "instructions per run", "vs raw SDK loop"],
        [
            [label, f"{per_run[name] / 1e6:,.2f} M", f"{per_run[name] / per_run['raw']:.3f}x"]
            for label, name in zip(CLIENTS, ("raw", "typedagent"), strict=True)
        ],
    )


if __name__ == "__main__":
    main()

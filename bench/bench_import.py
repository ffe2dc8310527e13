"""Import time: ``import typedagent`` against ``import pydantic_ai`` (and the SDK, for reference).

Each import runs in a fresh interpreter under ``python -X importtime``; the figure is the
top-level package's cumulative time. Interpreters alternate between the modules; medians.

    .venv/bin/python bench/bench_import.py [--rounds 9]
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from _common import fmt_ms, machine, median, print_table, ratio, verdict

MODULES = ("typedagent", "pydantic_ai", "anthropic", "pydantic")
TARGET = 0.3


def import_time(module: str) -> float:
    """Cumulative import time of ``module`` in a fresh interpreter, in seconds."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"], capture_output=True, text=True, check=True
    )
    for line in reversed(done.stderr.splitlines()):
        parts = [part.strip() for part in line.removeprefix("import time:").split("|")]
        if len(parts) == 3 and parts[2] == module:
            return int(parts[1]) / 1e6
    raise RuntimeError(f"no importtime line for {module!r} in:\n{done.stderr[-2000:]}")


def sdk_loaded_by(module: str) -> bool:
    done = subprocess.run(
        [sys.executable, "-c", f"import sys, {module}; print('anthropic' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip() == "True"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    print(f"Machine: {machine()}")
    for module in MODULES:  # warm the OS file cache and the .pyc files first
        import_time(module)
    samples: dict[str, list[float]] = {module: [] for module in MODULES}
    for _ in range(args.rounds):
        for module in MODULES:
            samples[module].append(import_time(module))
    medians = {module: median(values) for module, values in samples.items()}
    baseline = medians["pydantic_ai"]
    rows = []
    for module in MODULES:
        value = medians[module]
        if module == "typedagent":
            target = f"≤ {TARGET}x {verdict(value / baseline, TARGET)}"
        else:
            target = "baseline" if module == "pydantic_ai" else "-"
        rows.append(
            [
                f"import {module}",
                fmt_ms(value),
                ratio(value, baseline),
                "yes" if module == "anthropic" or sdk_loaded_by(module) else "no",
                target,
            ]
        )
    print_table(
        f"Import time (python -X importtime, cumulative, median of {args.rounds} fresh interpreters)",
        ["statement", "time", "vs pydantic_ai", "loads anthropic", "target"],
        rows,
    )


if __name__ == "__main__":
    main()

"""``typedagent eval``: run an eval dataset against an agent, write its reports, exit 1 when a threshold fails."""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path
from typing import Any, TextIO

from .._agent.locate import ImportFailed, UsageError, load_agent
from .._api.client import close_client, default_client
from ._run import _positive_int

__all__ = ["add_eval_parser", "eval_command"]

EXIT_THRESHOLD_FAILED = 1


def add_eval_parser(commands: Any) -> None:
    """Register ``typedagent eval``."""
    parser = commands.add_parser(
        "eval",
        help="run an eval dataset (YAML or JSON) against an agent; exit 1 when a pass-rate threshold fails",
        description=(
            "Run every case of DATASET against the agent (--repeat times), score the runs with the dataset's "
            "evaluators, print a table and write the reports asked for. With --cassette the model's answers are "
            "replayed from a cassette (no network, no API key). Exit status: 0 every threshold holds, 1 a "
            "threshold failed, 2 usage error."
        ),
    )
    parser.add_argument("target", metavar="MODULE:ATTR", help="the agent: package.module:agent or file.py:agent")
    parser.add_argument("dataset", metavar="DATASET", type=Path, help="the dataset file (.yaml, .yml or .json)")
    parser.add_argument(
        "--repeat", type=_positive_int, metavar="N", help="runs per case (default: the file's 'repeat', else 1)"
    )
    parser.add_argument(
        "-c", "--concurrency", type=_positive_int, default=8, metavar="N", help="executions at once (default 8)"
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--cassette", type=Path, metavar="PATH", help="replay the model's answers from this cassette")
    source.add_argument(
        "--record", type=Path, metavar="PATH", help="run live and save every request/response to this cassette"
    )
    parser.add_argument("--baseline", type=Path, metavar="REPORT", help="a JSON report to compare with")
    parser.add_argument(
        "--json", type=Path, metavar="PATH", help="write the JSON report here (never over a file the run reads)"
    )
    parser.add_argument("--html", type=Path, metavar="PATH", help="write the HTML report here")
    parser.add_argument("--junit", type=Path, metavar="PATH", help="write JUnit XML here")


def eval_command(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """Run the evals; return the exit status."""
    from ..evals import EvalReport, format_report, load_dataset, run_evals, to_html, to_junit
    from ..evals._files import read_file
    from ..testing import RecordingClient

    try:
        target = load_agent(args.target)
    except ImportFailed as exc:
        raise UsageError(str(exc)) from exc
    agent = target.agent
    reports = report_paths(args, getattr(target.module, "__file__", None))
    try:
        dataset = load_dataset(args.dataset, agent)
        repeat = args.repeat or read_file(args.dataset).get("repeat", 1)
    except (ValueError, OSError) as exc:
        raise UsageError(f"DATASET: {exc}") from None
    baseline = None
    if args.baseline is not None:
        try:
            baseline = EvalReport.load(args.baseline)
        except (ValueError, OSError) as exc:
            raise UsageError(f"--baseline: {exc}") from None
    client = _client(args)

    async def evaluate() -> EvalReport:
        try:
            return await run_evals(dataset, agent, repeat=repeat, concurrency=args.concurrency, client=client)
        finally:
            if isinstance(client, RecordingClient):
                await close_client(client.client)  # the live client this command made

    try:
        report = asyncio.run(evaluate())
    except AssertionError as exc:
        # The cassette disagrees with the run (the agent changed): say what drifted, don't crash.
        stderr.write(f"typedagent eval: {type(exc).__name__}: {exc}\n")
        return EXIT_THRESHOLD_FAILED
    # The reports first: whatever happens to the console, the run's results are on disk.
    for flag, path in reports:
        replaced = " (replaced the file that was there)" if path.exists() else ""
        if flag == "--json":
            report.save(path)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(to_html(report, baseline=baseline) if flag == "--html" else to_junit(report))
        stderr.write(f"wrote {path}{replaced}\n")
    stdout.write(format_report(report, baseline=baseline))
    return 0 if report.passed else EXIT_THRESHOLD_FAILED


def report_paths(args: argparse.Namespace, module_file: str | None) -> list[tuple[str, Path]]:
    """The reports asked for, as (flag, path), once each is checked not to be a file the run reads or writes.

    Raises:
        UsageError: a report path is the dataset, a cassette, the baseline or the agent's module, a folder, or
            the path of another report.
    """
    inputs = [
        (args.dataset, "the dataset, an input of this run"),
        (args.cassette, "the cassette (--cassette), an input of this run"),
        (args.baseline, "the baseline (--baseline), an input of this run"),
        (Path(module_file) if module_file else None, "the agent's module, an input of this run"),
        (args.record, "the cassette --record writes"),
    ]
    chosen: list[tuple[str, Path]] = []
    for flag, path in (("--json", args.json), ("--html", args.html), ("--junit", args.junit)):
        if path is None:
            continue
        for other, what in inputs:
            if other is not None and _same_file(path, other):
                raise UsageError(f"{flag} {path} is {what}: write the report somewhere else")
        for earlier, earlier_path in chosen:
            if _same_file(path, earlier_path):
                raise UsageError(f"{flag} {path} is also where {earlier} writes: give each report its own path")
        if path.is_dir():
            raise UsageError(f"{flag} {path} is a folder: give the report a file path")
        chosen.append((flag, path))
    return chosen


def _same_file(one: Path, other: Path) -> bool:
    """Whether two paths name one file (through ``..``, symbolic links or hard links)."""
    try:
        return os.path.samefile(one, other)
    except OSError:  # one of them does not exist (yet)
        return one.resolve() == other.resolve()


def _client(args: argparse.Namespace) -> Any:
    """The client of the run: a replay of ``--cassette``, a recording one with ``--record``, else the default."""
    if args.cassette is not None:
        from ..testing import CassetteError, ReplayClient

        try:
            return ReplayClient(args.cassette)
        except (CassetteError, ValueError) as exc:  # not a cassette, not JSON, not UTF-8
            raise UsageError(f"--cassette: {' '.join(str(exc).split())}") from None
    if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        raise UsageError("ANTHROPIC_API_KEY is not set: export it, or replay a recording with --cassette PATH")
    if args.record is not None:
        from ..testing import RecordingClient

        try:
            return RecordingClient(default_client(), args.record)
        except ValueError as exc:  # checked before any call: a paid response is never lost to an unwritable path
            raise UsageError(f"--record: {exc}") from None
    return None

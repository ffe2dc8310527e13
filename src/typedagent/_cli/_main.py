"""Argument parsing and dispatch; usage errors become one line on stderr and exit status 2."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from typing import TextIO

from .._agent.locate import UsageError
from .._shared.version import __version__
from ._batch import add_batch_parser, batch_command
from ._check import add_check_parser, check_command
from ._demo import add_demo_parser, demo_command
from ._eval import add_eval_parser, eval_command
from ._resume import add_resume_parser, resume_command
from ._run import EXIT_INTERRUPTED, add_run_parser, run_command

__all__ = ["build_parser", "main"]

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    """The ``typedagent`` argument parser with its commands."""
    parser = argparse.ArgumentParser(
        prog="typedagent",
        description=(
            "Run, check, evaluate and demo typedagent agents. Data (JSON) goes to stdout, everything else to stderr."
        ),
    )
    parser.add_argument("--version", action="version", version=f"typedagent {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    add_run_parser(commands)
    add_resume_parser(commands)
    add_batch_parser(commands)
    add_check_parser(commands)
    add_demo_parser(commands)
    add_eval_parser(commands)
    return parser


def main(
    argv: Sequence[str] | None = None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    stdin: TextIO | None = None,
) -> int:
    """Run the command line; returns the exit status (0 success, 1 failure, 2 usage error, 3 paused).

    Args:
        argv: Arguments without the program name; default ``sys.argv[1:]``.
        stdout: Where data goes (default ``sys.stdout``).
        stderr: Where progress and errors go (default ``sys.stderr``).
        stdin: Where ``run ... -`` reads the prompt (default ``sys.stdin``).
    """
    out, err, inp = stdout or sys.stdout, stderr or sys.stderr, stdin or sys.stdin
    parser = build_parser()
    try:
        # argparse prints help, --version and its errors itself; send them where the caller asked.
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse exits on --help/--version (0) and on bad arguments (2)
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    try:
        if args.command == "run":
            return run_command(args, out, err, inp)
        if args.command == "resume":
            return resume_command(args, out, err, inp)
        if args.command == "check":
            return check_command(args, out, err)
        if args.command == "batch":
            return batch_command(args, err)
        if args.command == "eval":
            return eval_command(args, out, err)
        return demo_command(args, out, err)
    except UsageError as exc:
        err.write(f"typedagent {args.command}: error: {exc}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        err.write("typedagent: interrupted\n")
        return EXIT_INTERRUPTED

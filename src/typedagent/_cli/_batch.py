"""``typedagent batch``: an agent over every line of a JSONL file, results appended to a resumable JSONL file."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import os
import signal
import time
from pathlib import Path
from typing import Any, TextIO

from .._agent.definition import AgentDefinition, ValidationConfig
from .._agent.locate import ImportFailed, Target, UsageError, load_agent
from .._api.transport import BATCH_CONCURRENCY, Transport, default_concurrency
from .._many.journal import Journal
from .._many.many import DEFAULT_CONCURRENCY, execute_many
from .._run.arguments import check_tools_can_wait
from .._shared.errors import JournalError
from ._batch_inputs import check_inputs, read_inputs
from ._batch_ray import connect_ray, ray_stream
from ._batch_view import BatchStats, BatchView, make_view
from ._run import EXIT_INTERRUPTED, _positive_int
from ._scripted import FreshScripts, scripted_factory

__all__ = ["add_batch_parser", "batch_command"]


def add_batch_parser(commands: Any) -> None:
    """Register ``typedagent batch``."""
    parser = commands.add_parser(
        "batch",
        help="run an agent on every line of a JSONL file; results go to a JSONL file you can resume from",
        description=(
            "Run an agent on every input of INPUTS (JSON Lines: a prompt string, or an object with "
            '"prompt" and optional "deps" and "key"). Each finished execution is appended to OUTPUT at once; '
            "run the same command again to resume after a crash or Ctrl-C. Progress and a summary go to stderr. "
            "Exit status: 0 every input succeeded, 1 some failed, 2 usage error, 130 interrupted."
        ),
    )
    parser.add_argument("target", metavar="MODULE:ATTR", help="the agent: package.module:agent or file.py:agent")
    parser.add_argument("inputs", metavar="INPUTS", type=Path, help="the inputs, one JSON value per line")
    parser.add_argument("-o", "--output", metavar="OUTPUT", type=Path, required=True, help="results (JSON Lines)")
    parser.add_argument(
        "-c",
        "--concurrency",
        type=_positive_int,
        metavar="N",
        help=f"most executions in flight at once (default {DEFAULT_CONCURRENCY}; on Ray, per worker); the API's "
        "rate limits pace them",
    )
    parser.add_argument(
        "--max-attempts", type=_positive_int, metavar="N", help="override ValidationConfig.max_attempts"
    )
    parser.add_argument(
        "--message-batches",
        action="store_true",
        help="send the model calls in Message Batches: half the token price, each round within 24 hours "
        f"(default concurrency then {BATCH_CONCURRENCY:,})",
    )
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        help='run over the Ray cluster at ADDRESS ("auto" for the one this machine belongs to, "local" to start '
        "one here); needs typedagent[ray]",
    )
    parser.add_argument("--workers", type=_positive_int, metavar="N", help="Ray workers (default: the cluster's CPUs)")
    parser.add_argument(
        "--scripted",
        action="store_true",
        help="answer from the module's scripted_client() instead of the API (offline, no key): each input on a "
        "fresh one, one input at a time",
    )


def batch_command(args: argparse.Namespace, stderr: TextIO) -> int:
    """Run the batch; return the exit status."""
    try:
        target = load_agent(args.target)
    except ImportFailed as exc:
        raise UsageError(str(exc)) from exc
    agent = target.agent
    try:
        check_tools_can_wait(agent, False)
    except ValueError as exc:
        raise UsageError(
            f"{exc} typedagent batch cannot pause: run such an agent with typedagent run, or from Python with "
            "execute_many(..., pausable=True)"
        ) from None
    if args.max_attempts is not None:
        validation = dataclasses.replace(agent.validation, max_attempts=args.max_attempts)
        agent = dataclasses.replace(agent, validation=ValidationConfig(**dataclasses.asdict(validation)))
    path: Path = args.inputs
    scripts = _scripts(target, args)
    default_deps = None if scripts is None else scripts.deps
    total = check_inputs(path, agent, default_deps)  # every line and every key checked before any API call
    if scripts is None and not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        raise UsageError(
            "ANTHROPIC_API_KEY is not set: export it to run the batch against the API, or answer from the "
            "module's scripted_client() with --scripted"
        )
    try:
        journal = Journal.open(args.output, agent)
    except JournalError as exc:
        raise UsageError(f"--output: {exc}") from None
    except OSError as exc:
        raise UsageError(f"--output: cannot open {args.output}: {exc.strerror or exc}") from None
    resumed_from, torn = journal.loaded, journal.torn_bytes
    asyncio.run(journal.close())
    stats = BatchStats(total=total)
    view = make_view(stderr, stats)
    view.start(target.label, str(args.output), resumed_from)
    if torn:
        view.note(f"cut off a torn last line ({torn} bytes) left in {args.output} by an interrupted write")
    if scripts is not None:
        view.note("the model answers from the module's scripted_client(), one input at a time (offline)")
    if args.ray is not None:
        connect_ray(args.ray, target.module)
    try:
        interrupted = asyncio.run(_run(agent, path, args, stats, view, scripts))
    except AssertionError as exc:
        # A scripted client disagreeing with the run (its script ran out): report it, don't crash.
        view.stop()
        stderr.write(f"typedagent batch: error: {type(exc).__name__}: {exc}\n")
        return 1
    view.stop()
    view.summary(str(args.output), interrupted)
    if interrupted:
        return EXIT_INTERRUPTED
    return 1 if stats.failed else 0


def _scripts(target: Target, args: argparse.Namespace) -> FreshScripts | None:
    """The client of ``--scripted`` (None without it).

    Raises:
        UsageError: ``--scripted`` with ``-c``, ``--ray`` or ``--message-batches``, or a module with no
            ``scripted_client()``.
    """
    if not args.scripted:
        return None
    if args.ray is not None or args.message_batches:
        raise UsageError(
            "--scripted answers from the module's scripted_client() in this process: it cannot run on Ray "
            "(--ray) or in Message Batches (--message-batches)"
        )
    if args.concurrency is not None and args.concurrency != 1:
        raise UsageError("--scripted runs one input at a time, each on a fresh scripted_client(): leave out -c")
    deps = getattr(target.module, "deps", None)  # a scripted example brings its own deps, as for `run --scripted`
    return FreshScripts(scripted_factory(target), deps=deps if callable(deps) else None)


async def _run(
    agent: AgentDefinition[Any, Any],
    path: Path,
    args: argparse.Namespace,
    stats: BatchStats,
    view: BatchView,
    scripts: FreshScripts | None,
) -> bool:
    """Drive ``execute_many``; the first Ctrl-C stops it cleanly, a second one gives up waiting."""
    from anthropic import AsyncAnthropic

    abort = asyncio.Event()
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    assert main is not None

    def on_interrupt() -> None:
        if abort.is_set():
            main.cancel()
            return
        abort.set()
        view.note("stopping: no new input starts; executions in flight are being stopped (Ctrl-C again to quit now)")

    loop.add_signal_handler(signal.SIGINT, on_interrupt)
    client: Any = AsyncAnthropic() if scripts is None else scripts
    transport: Transport = "message_batches" if args.message_batches else "online"
    concurrency = 1 if scripts is not None else args.concurrency or default_concurrency(transport)
    if args.message_batches:
        view.note("model calls go in Message Batches: tokens at half price, each round may take up to 24 hours")
    if args.ray is not None:
        stream = ray_stream(agent, path, args, view, concurrency=concurrency, transport=transport, abort=abort)
    else:
        stream = execute_many(
            agent,
            read_inputs(path, agent, None if scripts is None else scripts.deps),
            client=client,
            concurrency=concurrency,
            abort_event=abort,
            journal=args.output,
            transport=transport,
            callbacks=None if scripts is None else scripts.callbacks(),
        )
    stats.started = time.monotonic()  # the rate counts executions, not the start-up before them
    try:
        async with contextlib.aclosing(stream):
            async for item in stream:
                stats.add(item)
                view.update()
    except asyncio.CancelledError:
        return True
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        if scripts is None:
            await client.close()
    return abort.is_set()

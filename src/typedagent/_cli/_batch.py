"""``typedagent batch``: an agent over every line of a JSONL file, results appended to a resumable JSONL file."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO, cast

import pydantic

from .._definition import AgentDefinition, ValidationConfig
from .._errors import JournalError
from .._journal import Journal
from .._many import DEFAULT_CONCURRENCY, RunInput, execute_many
from .._transport import BATCH_CONCURRENCY, Transport, default_concurrency
from ._batch_ray import connect_ray, ray_stream
from ._batch_view import BatchStats, BatchView, make_view
from ._load import ImportFailed, UsageError, load_agent
from ._run import EXIT_INTERRUPTED, _positive_int

__all__ = ["add_batch_parser", "batch_command", "read_inputs"]

_FIELDS = frozenset({"prompt", "deps", "key"})


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


def batch_command(args: argparse.Namespace, stderr: TextIO) -> int:
    """Run the batch; return the exit status."""
    try:
        target = load_agent(args.target)
    except ImportFailed as exc:
        raise UsageError(str(exc)) from exc
    agent = target.agent
    if args.max_attempts is not None:
        validation = dataclasses.replace(agent.validation, max_attempts=args.max_attempts)
        agent = dataclasses.replace(agent, validation=ValidationConfig(**dataclasses.asdict(validation)))
    path: Path = args.inputs
    total = sum(1 for _ in read_inputs(path, agent))  # every line checked before any API call
    if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        raise UsageError("ANTHROPIC_API_KEY is not set: export it to run the batch against the API")
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
    if args.ray is not None:
        connect_ray(args.ray, target.module)
    interrupted = asyncio.run(_run(agent, path, args, stats, view))
    view.stop()
    view.summary(str(args.output), interrupted)
    if interrupted:
        return EXIT_INTERRUPTED
    return 1 if stats.failed else 0


async def _run(
    agent: AgentDefinition[Any, Any], path: Path, args: argparse.Namespace, stats: BatchStats, view: BatchView
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
    client = AsyncAnthropic()
    transport: Transport = "message_batches" if args.message_batches else "online"
    concurrency = args.concurrency or default_concurrency(transport)
    if args.message_batches:
        view.note("model calls go in Message Batches: tokens at half price, each round may take up to 24 hours")
    if args.ray is not None:
        stream = ray_stream(agent, path, args, view, concurrency=concurrency, transport=transport, abort=abort)
    else:
        stream = execute_many(
            agent,
            read_inputs(path, agent),
            client=client,
            concurrency=concurrency,
            abort_event=abort,
            journal=args.output,
            transport=transport,
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
        await client.close()
    return abort.is_set()


def read_inputs(path: Path, agent: AgentDefinition[Any, Any]) -> Iterator[RunInput[Any]]:
    """The inputs of a JSONL file, read one line at a time; blank lines are skipped.

    A line is a JSON string (the prompt) or an object with ``prompt`` (a string or a list of content
    blocks) and optional ``deps`` (validated into the agent's ``deps_type``) and ``key``.

    Raises:
        UsageError: the file cannot be read, or a line is not a usable input (the message names the line).
    """
    adapter: pydantic.TypeAdapter[Any] | None = None
    if agent.deps_type is not None:
        adapter = pydantic.TypeAdapter(agent.deps_type)
    try:
        file = path.open(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    with file:
        for number, line in enumerate(file, start=1):
            if line.strip():
                yield _input(line, f"{path}:{number}", agent, adapter)


def _input(
    line: str, where: str, agent: AgentDefinition[Any, Any], adapter: pydantic.TypeAdapter[Any] | None
) -> RunInput[Any]:
    try:
        value: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{where} is not JSON ({exc.msg}): write one JSON string or object per line") from None
    if isinstance(value, str):
        value = {"prompt": value}
    if not isinstance(value, dict):
        raise UsageError(f'{where}: expected a prompt string or an object with "prompt", got {type(value).__name__}')
    fields = cast("dict[str, Any]", value)
    unknown = sorted(set(fields) - _FIELDS)
    if unknown:
        raise UsageError(f'{where}: unknown field(s) {", ".join(unknown)} (allowed: "prompt", "deps", "key")')
    prompt = fields.get("prompt")
    if not (isinstance(prompt, str) and prompt.strip()) and not (isinstance(prompt, list) and prompt):
        raise UsageError(f'{where}: "prompt" must be a non-empty string or a list of content blocks')
    key = fields.get("key")
    if key is not None and not (isinstance(key, str) and key):
        raise UsageError(f'{where}: "key" must be a non-empty string')
    deps: Any = None
    deps_name = getattr(agent.deps_type, "__name__", "its deps_type")
    if adapter is not None:
        if "deps" not in fields:
            raise UsageError(f'{where}: agent {agent.name!r} needs "deps" ({deps_name})')
        try:
            deps = adapter.validate_python(fields["deps"])
        except pydantic.ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in error['loc']) or '(root)'}: {error['msg']}"
                for error in exc.errors(include_url=False)
            )
            raise UsageError(f'{where}: "deps" does not fit {deps_name}: {problems}') from None
    elif "deps" in fields:
        raise UsageError(f'{where}: agent {agent.name!r} declares no deps_type, so "deps" has nothing to fill')
    return RunInput(cast("Any", prompt), deps=deps, key=key)

"""``typedagent run``: one execution, progress on stderr, the typed output as JSON on stdout."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TextIO, cast

import pydantic

from .._agent.definition import AgentDefinition
from .._agent.locate import ImportFailed, Target, UsageError, load_agent
from .._run.arguments import MISSING
from .._run.execute import execute as execute_run
from .._run.sync import run_blocking
from .._shared.events import ExecuteCallbacks
from .._shared.pausing import ExecutePaused, PausableResult
from .._shared.results import ExecuteFailure
from .._streaming.events import AgentStreamEvent, Paused
from .._streaming.stream import AgentStream, stream_agent
from ._live import LiveView
from ._pause import TerminalApprover, default_state_path, report_paused
from ._progress import Progress
from ._scripted import scripted_factory

__all__ = [
    "EXIT_INTERRUPTED",
    "add_client_options",
    "add_run_parser",
    "execute",
    "output_json",
    "report",
    "run_command",
    "write_json",
]

EXIT_INTERRUPTED = 130
"""Exit status after Ctrl-C, as shells report a process ended by SIGINT."""


def add_run_parser(commands: Any) -> None:
    """Register ``typedagent run``."""
    parser = commands.add_parser(
        "run",
        help="run an agent once: progress on stderr, the typed output as JSON on stdout",
        description=(
            "Run an agent once. Live progress goes to stderr; the validated output goes to stdout as JSON. "
            "A run that pauses at tool calls waiting for a decision writes its state to a file and says how to "
            "resume it (typedagent resume). Exit status: 0 success, 1 the execution failed (error code on "
            "stderr), 2 usage error, 3 paused."
        ),
    )
    parser.add_argument(
        "target", metavar="MODULE:ATTR", help="the agent: package.module:agent or path/to/file.py:agent"
    )
    parser.add_argument("prompt", metavar="PROMPT", help="the user prompt ('-' reads it from stdin)")
    parser.add_argument(
        "--deps-json",
        metavar="JSON",
        help="run-time deps as JSON (or @file.json), validated into the agent's deps_type",
    )
    parser.add_argument(
        "--max-attempts", type=_positive_int, metavar="N", help="override ValidationConfig.max_attempts"
    )
    add_client_options(parser)


def add_client_options(parser: argparse.ArgumentParser) -> None:
    """The options ``run`` and ``resume`` share: where the model's replies come from, approvals, the state file."""
    parser.add_argument(
        "--approve",
        action="store_true",
        help="ask on the terminal about each tool call that needs approval (y/n, and a reason for n) instead of "
        "pausing at it",
    )
    parser.add_argument(
        "--state-file",
        metavar="PATH",
        type=Path,
        help="where a run that pauses writes its state (default: AGENT-ID.paused.json in the working folder)",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--scripted",
        action="store_true",
        help="answer from the module's scripted_client() instead of the API (offline; the bundled examples have one)",
    )
    source.add_argument("--replay", metavar="CASSETTE", type=Path, help="answer from a recorded cassette (offline)")
    source.add_argument(
        "--record", metavar="CASSETTE", type=Path, help="run live and save every request/response to CASSETTE"
    )
    parser.add_argument(
        "--json-events", action="store_true", help="write one JSON object per event to stderr instead of progress lines"
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value}")
    return value


def run_command(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, stdin: TextIO) -> int:
    """Run the agent; return the exit status."""
    try:
        target = load_agent(args.target)
    except ImportFailed as exc:
        raise UsageError(str(exc)) from exc
    agent = target.agent
    if args.max_attempts is not None:
        agent = agent.with_options(validation=dataclasses.replace(agent.validation, max_attempts=args.max_attempts))
    make_deps = getattr(target.module, "deps", None)
    if args.scripted and args.deps_json is None and agent.deps_type is not None and callable(make_deps):
        deps = make_deps()  # a scripted example brings its own deps, as in `typedagent demo`
    else:
        deps = parse_deps(agent, args.deps_json)
    if args.approve and args.prompt == "-":
        raise UsageError("--approve reads your answers from stdin, so the prompt cannot come from stdin too")
    # Like a shell's "$(cat file)", stdin loses the newlines that end it: the same text, the same prompt.
    prompt = stdin.read().rstrip("\n") if args.prompt == "-" else args.prompt
    if not prompt.strip():
        raise UsageError("the prompt is empty: pass the text to work on (or '-' to read it from stdin)")
    client, mode = _scripted(target) if args.scripted else _client(args)
    progress = Progress(stderr, json_events=args.json_events)
    progress.start(agent, label=target.label, mode=mode)
    arguments = {"prompt": prompt, "deps": deps, "client": client, "pausable": True}
    return report(args, target, agent, arguments, progress, stdout, stdin)


def report(
    args: argparse.Namespace,
    target: Target,
    agent: AgentDefinition[Any, Any],
    arguments: dict[str, Any],
    progress: Progress,
    stdout: TextIO,
    stdin: TextIO,
) -> int:
    """Run the execution ``arguments`` describe, report how it ended, and return the exit status."""
    stderr = progress.stream
    if args.approve:
        arguments["approve"] = TerminalApprover(stdin, progress)
    try:
        result, interrupted = execute(agent, arguments, callbacks=progress.callbacks(), on_event=LiveView(progress))
    except AssertionError as exc:
        # A replay cassette (or another test double) disagreeing with the run: report it, don't crash.
        progress.lines.close()
        stderr.write(f"typedagent: error: {type(exc).__name__}: {exc}\n")
        return 1
    progress.finish(result)
    if isinstance(result, ExecutePaused):
        path = args.state_file or getattr(args, "state", None) or default_state_path(agent, result.state)
        return report_paused(result, path, target.label, progress, stdout)
    if isinstance(result, ExecuteFailure):
        if not args.json_events:
            stderr.write(f"typedagent: {agent.name} failed with {result.error.code}\n")
        return EXIT_INTERRUPTED if interrupted else 1
    write_json(stdout, output_json(agent, result.output))
    return 0


def execute(
    agent: AgentDefinition[Any, Any],
    arguments: dict[str, Any],
    *,
    callbacks: ExecuteCallbacks,
    on_event: Callable[[AgentStreamEvent[Any] | Paused], None] | None = None,
) -> tuple[PausableResult[Any], bool]:
    """Run one execution on a worker thread; returns the result and whether Ctrl-C cancelled it.

    The main thread only waits, so Ctrl-C reaches it at once: it sets the execution's abort event, and
    the run ends as ``EXECUTION_CANCELLED`` (tokens so far included) within 100 ms instead of dying
    mid-call. A second Ctrl-C while that happens gives up waiting. With ``on_event`` the execution
    streams (``stream_agent``) and each of its events goes there as it happens.
    """
    abort = threading.Event()
    future: Future[PausableResult[Any]] = Future()
    options: dict[str, Any] = {**arguments, "callbacks": callbacks, "abort_event": abort}

    def work() -> None:
        try:
            main = execute_run(agent, **options) if on_event is None else _streamed(agent, options, on_event)
            future.set_result(run_blocking(main))
        except BaseException as exc:
            future.set_exception(exc)

    # A daemon thread: after a second Ctrl-C the process exits without waiting for it (nor, through
    # run_blocking, for a sync tool abandoned in a worker thread).
    threading.Thread(target=work, name="typedagent-run", daemon=True).start()
    try:
        return future.result(), False
    except KeyboardInterrupt:
        abort.set()
        return future.result(), True


async def _streamed(
    agent: AgentDefinition[Any, Any],
    options: dict[str, Any],
    on_event: Callable[[AgentStreamEvent[Any] | Paused], None],
) -> PausableResult[Any]:
    arguments = dict(options)
    prompt = arguments.pop("prompt", None)  # none when resuming
    # The arguments vary (a prompt, or resume= and decisions=): the stream they make can pause either way.
    stream = cast("AgentStream[Any, Paused, ExecutePaused]", stream_agent(agent, prompt, **arguments))
    async with stream as run:
        async for event in run:
            on_event(event)
    return run.result


def output_json(agent: AgentDefinition[Any, Any], output: object) -> str:
    """The typed output as an indented JSON document, whatever the output type (a model, a list, a scalar)."""
    return agent.output._adapter.dump_json(output, indent=2).decode()


def write_json(stream: TextIO, document: str) -> None:
    """Write a JSON document: coloured on a terminal (when rich is there), plain in a pipe."""
    if stream.isatty():
        try:
            from rich.console import Console
        except ImportError:
            pass
        else:
            Console(file=stream, soft_wrap=True).print_json(document)
            return
    stream.write(document + "\n")
    stream.flush()


def parse_deps(agent: AgentDefinition[Any, Any], deps_json: str | None) -> Any:
    """Build the agent's deps from ``--deps-json`` (a JSON document, or ``@path`` to a file)."""
    deps_type = agent.deps_type
    if deps_type is None:
        if deps_json is not None:
            raise UsageError(f"agent {agent.name!r} declares no deps_type, so --deps-json has nothing to fill")
        return MISSING
    if deps_json is None:
        raise UsageError(
            f"agent {agent.name!r} needs run-time deps ({deps_type.__name__}): pass --deps-json '{{...}}' "
            "or --deps-json @deps.json"
        )
    text = deps_json
    if deps_json.startswith("@"):
        path = Path(deps_json[1:])
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--deps-json: cannot read {path}: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise UsageError(
                f"--deps-json: {path} is not UTF-8 text ({exc.reason} at byte {exc.start}): save it as UTF-8"
            ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--deps-json is not valid JSON: {exc}") from None
    try:
        adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(deps_type)
    except pydantic.PydanticUserError as exc:
        raise UsageError(
            f"deps_type {deps_type.__name__} cannot be built from JSON ({exc.message}); run this agent from Python"
        ) from None
    try:
        return adapter.validate_python(data)
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or '(root)'}: {error['msg']}"
            for error in exc.errors(include_url=False)
        )
        raise UsageError(f"--deps-json does not fit {deps_type.__name__}: {problems}") from None


def _scripted(target: Target) -> tuple[Any, str]:
    """The client of ``--scripted``: what the agent's module's ``scripted_client()`` returns."""
    return scripted_factory(target)(), "scripted model (offline)"


def _client(args: argparse.Namespace) -> tuple[Any, str]:
    """The client for this run, and a phrase saying where the model's replies come from."""
    if args.replay is not None:
        if not args.replay.is_file():
            raise UsageError(f"cassette not found: {args.replay} (record one with --record {args.replay})")
        from ..testing import CassetteError, ReplayClient

        try:
            return ReplayClient(args.replay), f"replaying {args.replay}"
        except (CassetteError, ValueError) as exc:  # not a cassette, or not JSON
            raise UsageError(f"--replay: {' '.join(str(exc).split())}") from None
    if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        raise UsageError(
            "ANTHROPIC_API_KEY is not set: export it to run live, replay a recorded run with --replay CASSETTE, "
            "answer from the module's scripted_client() with --scripted, or try `typedagent demo`, which runs offline"
        )
    from .._api.client import default_client  # a malformed ANTHROPIC_BASE_URL then fails the run, as in execute_agent

    if args.record is not None:
        from ..testing import RecordingClient

        try:
            recorder = RecordingClient(default_client(), args.record)
        except ValueError as exc:  # checked before any call: a paid response is never lost to an unwritable path
            raise UsageError(f"--record: {exc}") from None
        return recorder, f"live, recording to {args.record}"
    return default_client(), "live"

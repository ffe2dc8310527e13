"""``typedagent demo``: the bundled example agents, end to end; scripted without an API key, live with one.

An example is a ``.py`` file defining ``agent`` (an ``AgentDefinition``), ``PROMPT`` (a string),
``scripted_client()`` (a client answering for the model offline) and, when the agent takes run-time
deps, ``deps()``.
"""

from __future__ import annotations

import argparse
import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

from .._agent.definition import AgentDefinition
from .._agent.locate import ImportFailed, UsageError, is_agent, load_module
from .._run.arguments import MISSING
from .._shared.results import ExecuteSuccess
from ._progress import Progress, make_lines
from ._run import EXIT_INTERRUPTED, execute, output_json, write_json

__all__ = ["Example", "add_demo_parser", "demo_command", "discover", "examples_dir"]

PACKAGE = Path(__file__).resolve().parent.parent
"""The installed ``typedagent`` package: a wheel carries the examples in its ``_examples`` folder."""


def add_demo_parser(commands: Any) -> None:
    """Register ``typedagent demo``."""
    parser = commands.add_parser(
        "demo",
        help="run the bundled example agents (scripted without ANTHROPIC_API_KEY, live with it)",
        description=(
            "Run the bundled example agents end to end. Without ANTHROPIC_API_KEY the model is scripted (and the "
            "output says so); with it they run live. Exit status: 0 all examples succeeded, 1 one failed."
        ),
    )
    parser.add_argument("names", nargs="*", metavar="EXAMPLE", help="run only these examples (by file name)")
    parser.add_argument("--scripted", action="store_true", help="use the scripted model even when a key is set")
    parser.add_argument("--examples", metavar="DIR", type=Path, help="run the examples in DIR instead")


@dataclass(frozen=True, slots=True)
class Example:
    """One example module and what the demo needs from it."""

    name: str
    title: str
    module: ModuleType
    agent: AgentDefinition[Any, Any]
    prompt: str


def examples_dir() -> Path:
    """The bundled examples: ``examples/`` of a source checkout, else the copy a wheel ships.

    The checkout comes first so an editable install always runs the examples as they are edited.
    """
    package = PACKAGE
    for candidate in (package.parent.parent / "examples", package / "_examples"):
        if candidate.is_dir():
            return candidate
    raise UsageError(
        "cannot find the bundled examples (examples/ of the source checkout, or typedagent/_examples in a wheel): "
        "reinstall typedagent, or pass --examples DIR"
    )


def discover(directory: Path, names: list[str]) -> list[Example]:
    """The example modules of ``directory`` (files that define agent, PROMPT and scripted_client), by name."""
    if not directory.is_dir():
        raise UsageError(f"--examples: {directory} is not a directory")
    examples: list[Example] = []
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_") or (names and path.stem not in names):
            continue
        module = load_module(str(path))
        agent, prompt = getattr(module, "agent", None), getattr(module, "PROMPT", None)
        if is_agent(agent) and isinstance(prompt, str) and callable(getattr(module, "scripted_client", None)):
            title = (module.__doc__ or path.stem).strip().splitlines()[0]
            examples.append(Example(name=path.stem, title=title, module=module, agent=agent, prompt=prompt))
    found = {example.name for example in examples}
    unknown = [name for name in names if name not in found]
    if unknown or not examples:
        available = ", ".join(p.stem for p in sorted(directory.glob("*.py")) if not p.name.startswith("_")) or "none"
        what = f"no example named {', '.join(map(repr, unknown))}" if unknown else f"no examples in {directory}"
        raise UsageError(f"{what} (available: {available})")
    return examples


def demo_command(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """Run the examples one after the other; return the exit status."""
    del stderr  # the demo is for people: everything goes to stdout, in order
    try:
        examples = discover(args.examples or examples_dir(), list(args.names))
    except ImportFailed as exc:
        raise UsageError(f"an example does not load: {exc}") from exc
    has_key = bool(os.environ.get("ANTHROPIC_API_KEY"))
    live = has_key and not args.scripted
    lines = make_lines(stdout)
    lines.line(
        (f"typedagent demo: {len(examples)} example agent{'s' if len(examples) != 1 else ''}, end to end", "bold")
    )
    if live:
        lines.line(
            ("Running live: ", "bold"),
            "ANTHROPIC_API_KEY is set, so the real model answers (this costs tokens; pass --scripted to run offline).",
        )
    else:
        reason = "--scripted was given" if has_key else "no ANTHROPIC_API_KEY is set"
        lines.line(
            ("The model is scripted", "bold yellow"),
            f" because {reason}: each example replays a prepared conversation through the real loop. Helper tools, "
            "reflection, validators and retries all run for real; only the model's replies and their token counts "
            "are canned." + ("" if has_key else " Set ANTHROPIC_API_KEY to run the same agents live."),
        )
    # The SDK takes a second or two to import; do it now so the first example's latency is its own.
    importlib.import_module("anthropic.types")
    succeeded = 0
    for number, example in enumerate(examples, start=1):
        lines.line("")
        lines.line((f"━━ {number}/{len(examples)} {example.name}", "bold magenta"), (f" · {example.title}", "magenta"))
        first_line = example.prompt.strip().splitlines()[0]
        lines.line(("prompt: ", "dim"), first_line + (" …" if "\n" in example.prompt.strip() else ""))
        make_deps = getattr(example.module, "deps", None)
        deps = make_deps() if callable(make_deps) else MISSING
        client = None if live else example.module.scripted_client()
        progress = Progress(stdout)
        progress.start(example.agent, label=example.name, mode="live model" if live else "scripted model")
        arguments = {"prompt": example.prompt, "deps": deps, "client": client}
        result, interrupted = execute(example.agent, arguments, callbacks=progress.callbacks())
        progress.finish(result)
        if interrupted:
            lines.line(("Interrupted: the remaining examples were not run.", "bold red"))
            return EXIT_INTERRUPTED
        if isinstance(result, ExecuteSuccess):
            succeeded += 1
            lines.line((f"result ({example.agent.output.type_name}):", "bold"))
            write_json(stdout, output_json(example.agent, result.output))
    lines.line("")
    mode = "live model" if live else "scripted model"
    style = "bold green" if succeeded == len(examples) else "bold red"
    lines.line((f"{succeeded} of {len(examples)} examples produced a valid output ({mode}).", style))
    return 0 if succeeded == len(examples) else 1

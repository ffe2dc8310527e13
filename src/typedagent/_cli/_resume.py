"""``typedagent resume``: a paused run's state read back from its file, its pending calls decided, and the run on."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO, cast

from .._agent.locate import ImportFailed, UsageError, load_agent
from .._run.resume import check_decisions, check_fingerprint
from .._shared.decisions import Approve, Decision, Deny, decision_from_json
from .._shared.pausing import PausedState
from ._progress import Progress
from ._run import _client, _scripted, add_client_options, parse_deps, report

__all__ = ["add_resume_parser", "resume_command"]


def add_resume_parser(commands: Any) -> None:
    """Register ``typedagent resume``."""
    parser = commands.add_parser(
        "resume",
        help="resume a paused run from its state file, with decisions on the calls it waits on",
        description=(
            "Resume a run that paused at tool calls waiting for a decision (typedagent run wrote its state to a "
            "file). Decide every pending call: approve or deny all the calls that wait for approval, or give "
            'each call\'s decision in a JSON file ({"CALL_ID": {"approve": true}, "CALL_ID": {"deny": "why"}, '
            '"CALL_ID": {"result": ...}, ...}). Exit status as for run: 0 success, 1 failure, 2 usage error, '
            "3 paused again (the new state is written over STATE)."
        ),
    )
    parser.add_argument("target", metavar="MODULE:ATTR", help="the agent the run paused with")
    parser.add_argument("state", metavar="STATE", type=Path, help="the paused run's state file")
    decide = parser.add_mutually_exclusive_group(required=True)
    decide.add_argument("--approve-all", action="store_true", help="approve every call that waits for approval")
    decide.add_argument("--deny-all", action="store_true", help="deny every call that waits for approval")
    decide.add_argument(
        "--decisions", metavar="FILE", type=Path, help="a JSON object: call id -> its decision (see above)"
    )
    parser.add_argument("--reason", metavar="TEXT", help="with --deny-all: why, for the model")
    parser.add_argument(
        "--deps-json",
        metavar="JSON",
        help="run-time deps as JSON (or @file.json), validated into the agent's deps_type",
    )
    add_client_options(parser)


def resume_command(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, stdin: TextIO) -> int:
    """Resume the paused run; return the exit status."""
    try:
        target = load_agent(args.target)
    except ImportFailed as exc:
        raise UsageError(str(exc)) from exc
    agent = target.agent
    state = read_state_file(args.state)
    decisions = _decisions(args, state)
    try:
        check_fingerprint(agent, state)
        check_decisions(state, decisions)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    make_deps = getattr(target.module, "deps", None)
    if args.scripted and args.deps_json is None and agent.deps_type is not None and callable(make_deps):
        deps = make_deps()
    else:
        deps = parse_deps(agent, args.deps_json)
    client, mode = _scripted(target) if args.scripted else _client(args)
    if args.scripted:
        _skip_answered(client, state)
    progress = Progress(stderr, json_events=args.json_events)
    progress.start(agent, label=target.label, mode=mode)
    arguments = {"resume": state, "decisions": decisions, "deps": deps, "client": client}
    return report(args, target, agent, arguments, progress, stdout, stdin)


def read_state_file(path: Path) -> PausedState:
    """The state a paused run wrote to ``path``; a usage error saying what is wrong with it otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read the state file {path}: {exc.strerror or exc}") from None
    try:
        return PausedState.from_json(text)
    except ValueError as exc:
        raise UsageError(f"{path}: {exc}") from None


def _decisions(args: argparse.Namespace, state: PausedState) -> dict[str, Decision]:
    external = [call for call in state.pending if call.kind == "external"]
    if args.reason is not None and not args.deny_all:
        raise UsageError("--reason goes with --deny-all (with --decisions, write each reason in the file)")
    if (args.approve_all or args.deny_all) and external:
        names = ", ".join(f"{call.id} ({call.name})" for call in external)
        raise UsageError(
            f"the run also waits on external tool calls ({names}), whose results only you can give: "
            'use --decisions FILE with {"CALL_ID": {"result": ...}} for each'
        )
    if args.approve_all:
        return {call.id: Approve() for call in state.pending}
    if args.deny_all:
        return {call.id: Deny(args.reason) if args.reason else Deny() for call in state.pending}
    try:
        data: object = json.loads(Path(args.decisions).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read --decisions {args.decisions}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"--decisions {args.decisions} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"--decisions {args.decisions} must hold a JSON object: call id -> decision")
    entries = cast("dict[str, object]", data)
    try:
        return {key: decision_from_json(value, f"decision {key!r}") for key, value in entries.items()}
    except ValueError as exc:
        raise UsageError(f"--decisions {args.decisions}: {exc}") from None


def _skip_answered(client: object, state: PausedState) -> None:
    """``--scripted``: a fresh scripted client starts its script over; skip the replies the paused run used."""
    from ..testing import ScriptedClient

    if isinstance(client, ScriptedClient):
        client.skip(state._data["totals"]["iterations"])

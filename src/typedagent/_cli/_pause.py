"""Pausing on the command line: the terminal's approval prompt, the paused state's file and how to resume it."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

from .._shared.decisions import DEFAULT_DENIAL, Approve, Deny
from .._shared.pausing import ExecutePaused, PendingCall
from ._progress import Progress, to_json

if TYPE_CHECKING:
    from .._agent.definition import AgentDefinition
    from .._shared.pausing import PausedState

__all__ = ["EXIT_PAUSED", "TerminalApprover", "report_paused", "write_state"]

EXIT_PAUSED: Final = 3
"""Exit status of a run that paused at tool calls waiting for a decision (its state is in a file)."""

_YES: Final = frozenset({"y", "yes"})
_NO: Final = frozenset({"n", "no"})


class TerminalApprover:
    """``typedagent run --approve``: asks on the terminal about each call that needs approval.

    It shows the tool and its arguments, reads ``y`` or ``n`` (and, for ``n``, a reason the model reads) from the
    command's standard input. No answer (the input closed) denies the call.
    """

    def __init__(self, stdin: TextIO, progress: Progress) -> None:
        self.stdin = stdin
        self.progress = progress
        self._lock = threading.Lock()

    def __call__(self, call: PendingCall) -> Approve | Deny:
        with self._lock:
            self.progress.lines.close()  # the spinner would draw over the question
            self._show(call)
            while True:
                answer = self._ask("Approve this call? [y/n] ")
                if answer is None:
                    return Deny("No answer came from the terminal, so this call did not run.")
                if answer.lower() in _YES:
                    return Approve()
                if answer.lower() in _NO:
                    reason = self._ask("Reason, for the model (Enter for none): ")
                    return Deny(reason or DEFAULT_DENIAL)

    def _show(self, call: PendingCall) -> None:
        if self.progress.json_events:
            record = {"event": "approval_request", "id": call.id, "name": call.name, "input": to_json(call.input)}
            self.progress.stream.write(json.dumps(record, ensure_ascii=False) + "\n")
            self.progress.stream.flush()
            return
        arguments = json.dumps(call.input, indent=2, ensure_ascii=False, default=str)
        self.progress.lines.line(("? ", "bold yellow"), (call.name, "bold"), " wants to run, with:")
        for line in arguments.splitlines():
            self.progress.lines.line(("    ", ""), (line, "cyan"))

    def _ask(self, question: str) -> str | None:
        stream = self.progress.stream
        if not self.progress.json_events:
            stream.write(question)
            stream.flush()
        line = self.stdin.readline()
        if not self.progress.json_events and not _is_terminal(self.stdin):
            stream.write(line if line.endswith("\n") else line + "\n")  # what a terminal would have echoed
        return None if not line else line.strip()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def write_state(path: Path, state: PausedState) -> None:
    """Write the state to ``path`` whole or not at all, readable by its owner only (it holds the conversation)."""
    text = state.to_json()
    folder = path.parent if str(path.parent) else Path()
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def default_state_path(agent: AgentDefinition[Any, Any], state: PausedState) -> Path:
    """Where a paused run's state goes when ``--state-file`` is not given: the working folder."""
    return Path(f"{agent.name}-{state.id[:12]}.paused.json")


def report_paused(result: ExecutePaused, path: Path, label: str, progress: Progress, stdout: TextIO) -> int:
    """Write the state to ``path``, say how to resume (stderr), the pending calls as JSON (stdout); exit status.

    A state that cannot be written there is not lost: it goes to stdout, inside the JSON document.
    """
    pending = [{"id": c.id, "name": c.name, "input": to_json(c.input), "kind": c.kind} for c in result.pending]
    try:
        write_state(path, result.state)
    except OSError as exc:
        progress.stream.write(
            f"typedagent: error: cannot write the state to {path}: {exc.strerror or exc}. It is in the JSON on "
            'stdout instead ("state"): save that value to a file and pass the file to typedagent resume.\n'
        )
        document = {
            "status": "paused",
            "state_file": None,
            "pending": pending,
            "state": json.loads(result.state.to_json()),
        }
        stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        stdout.flush()
        return EXIT_PAUSED
    if progress.json_events:
        record = {"event": "paused", "state_file": str(path), "pending": pending}
        progress.stream.write(json.dumps(record, ensure_ascii=False) + "\n")
    else:
        lines = progress.lines
        lines.line(("  state written to ", "dim"), (str(path), "bold"))
        lines.line("Resume it with one of:")
        if any(call.kind == "approval" for call in result.pending):
            lines.line(f"  typedagent resume {label} {path} --approve-all")
            lines.line(f"  typedagent resume {label} {path} --deny-all --reason 'why'")
        example = {c.id: {"approve": True} if c.kind == "approval" else {"result": "..."} for c in result.pending}
        lines.line(f"  typedagent resume {label} {path} --decisions decisions.json")
        lines.line(("  where decisions.json holds ", "dim"), (json.dumps(example, ensure_ascii=False), "dim"))
    progress.stream.flush()
    document = {"status": "paused", "state_file": str(path), "pending": pending}
    stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    stdout.flush()
    return EXIT_PAUSED

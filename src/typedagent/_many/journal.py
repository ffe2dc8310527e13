"""The journal of ``execute_many``: one JSON line per finished execution, durable before it is reported.

Each line is written with a single ``write`` on a file opened for appending and then ``fsync``-ed;
lines finished together share one ``fsync`` (group commit). A process killed mid-write can leave at
most a torn last line without its newline: opening the journal cuts it off, and that execution runs
again (a last line that parses whole is kept, and given its newline). A run holds an exclusive lock
on the file (``flock``, where the platform has it) for as long as the journal is open, so two runs
never share one. Reading back rebuilds the ``ExecuteResult`` from the line: the output revalidated into the
agent's output type, the error with its typed context, tokens, attempts and timings (the
conversation itself is not journaled).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, cast, get_args

import pydantic
import pydantic_core

from .._agent.definition import AgentDefinition
from .._shared.errors import AgentError, AgentErrorCode, ErrorContext, JournalError
from .._shared.results import (
    AttemptOutcome,
    AttemptRecord,
    CallbackError,
    ExecuteFailure,
    ExecuteResult,
    ExecuteSuccess,
    ExecutionMetadata,
    TokenUsage,
)

__all__ = ["Journal", "record_line", "result_of"]

VERSION: Final = 1
"""The format version written in each line (``"v"``); a journal of a higher version is refused."""
_CONTEXTS: Final[dict[str, type[Any]]] = {cls.__name__: cls for cls in get_args(ErrorContext)}


def record_line(
    *, key: str, index: int, fingerprint: str, agent: AgentDefinition[Any, Any], result: ExecuteResult[Any]
) -> bytes:
    """One journal line (JSON, newline-terminated) for a finished execution."""
    meta = result.metadata
    if isinstance(result, ExecuteSuccess):
        outcome, output, error = "success", agent.output.to_json(result.output), None
    else:
        outcome, output, error = str(result.error.code), None, _error_json(result.error)
    record: dict[str, Any] = {
        "key": key,
        "index": index,
        "outcome": outcome,
        "output": output,
        "error": error,
        "tokens": dataclasses.asdict(meta.tokens),
        "cost_usd": meta.cost_usd,
        "cache_savings_usd": meta.cache_savings_usd,
        "tool_calls": meta.tool_calls,
        "agent": agent.name,
        "model": meta.model,
        "iterations": meta.iterations,
        "latency_ms": round(meta.latency_ms, 3),
        "attempts": [_attempt_json(attempt) for attempt in meta.attempts],
        "callback_errors": [dataclasses.asdict(error) for error in meta.callback_errors],
        "input_sha256": fingerprint,
        "v": VERSION,
    }
    return pydantic_core.to_json(record, fallback=str) + b"\n"


def _error_json(error: AgentError) -> dict[str, Any]:
    context = {"type": type(error.context).__name__, **dataclasses.asdict(error.context)}
    return {"code": str(error.code), "message": error.message, "context": context, "last_output": error.last_output}


def _attempt_json(attempt: AttemptRecord) -> dict[str, Any]:
    data = dataclasses.asdict(attempt)
    data["outcome"] = str(attempt.outcome)
    return data


def result_of(record: Mapping[str, Any], agent: AgentDefinition[Any, Any]) -> ExecuteResult[Any]:
    """Rebuild the ``ExecuteResult`` a journal line stands for.

    Raises:
        JournalError: the line does not fit (an output the agent's output type no longer accepts, an
            unknown error code).
    """
    key = record.get("key")
    try:
        metadata = ExecutionMetadata(
            model=record["model"],
            tokens=TokenUsage(**record["tokens"]),
            attempts=tuple(_attempt_of(attempt) for attempt in record["attempts"]),
            iterations=record["iterations"],
            latency_ms=record["latency_ms"],
            callback_errors=tuple(CallbackError(**error) for error in record["callback_errors"]),
            messages=[],
            cost_usd=record.get("cost_usd"),
            cache_savings_usd=record.get("cache_savings_usd"),
            tool_calls=record.get("tool_calls", 0),
        )
        error = record["error"]
        if error is None:
            return ExecuteSuccess(output=agent.output.from_json(record["output"]), metadata=metadata)
        data = dict(error["context"])
        context_type = _CONTEXTS[data.pop("type")]
        context = context_type(**{name: _tuples(value) for name, value in data.items()})
        failure = AgentError(
            code=AgentErrorCode(error["code"]),
            message=error["message"],
            context=cast("ErrorContext", context),
            last_output=error["last_output"],
        )
        return ExecuteFailure(error=failure, metadata=metadata)
    except pydantic.ValidationError as exc:
        raise JournalError(
            f"the journaled output of key {key!r} no longer fits {agent.output.type_name} ({exc.error_count()} "
            "problem(s)): the output type changed since it was written. Use a new journal file."
        ) from None
    except (KeyError, TypeError, ValueError) as exc:
        raise JournalError(f"the journal line of key {key!r} is not one typedagent can read back: {exc!r}.") from None


def _attempt_of(data: Mapping[str, Any]) -> AttemptRecord:
    return AttemptRecord(
        number=data["number"],
        iterations=data["iterations"],
        tokens=TokenUsage(**data["tokens"]),
        outcome=AttemptOutcome(data["outcome"]),
        candidate=data["candidate"],
        validation_errors=tuple(data["validation_errors"]),
    )


def _whole_record(line: bytes) -> bool:
    """A last line that parses as a whole record (an object with a key): only its newline is missing."""
    try:
        record: Any = json.loads(line)
    except ValueError:
        return False
    return isinstance(record, dict) and isinstance(cast("dict[str, Any]", record).get("key"), str)


def _lock(fd: int, path: Path) -> None:
    """Hold an exclusive lock on the journal while it is open (released when ``fd`` is closed, or the process ends).

    ``flock`` on Linux, macOS and the BSDs; Windows has no ``fcntl``, and there a journal is not locked. A file
    system that does not support locks (some network mounts) leaves the journal unlocked too.
    """
    if sys.platform == "win32":  # pragma: no cover - no flock on Windows
        return
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise JournalError(
            f"{path} is in use by another run (it holds the journal's lock, in this process or another): wait for "
            "it to finish, or use another journal file."
        ) from None
    except OSError:  # pragma: no cover - a file system without locks
        return


def _tuples(value: Any) -> Any:
    """JSON lists back to the tuples the context classes hold."""
    if isinstance(value, list):
        items = cast("list[Any]", value)  # type: ignore[redundant-cast]  # pyright leaves it partly Unknown
        return tuple(_tuples(item) for item in items)
    return value


class Journal:
    """An append-only JSONL file of finished executions, indexed by key.

    Open it with ``Journal.open`` (blocking: run it in a thread), append with ``await append(...)``
    (the line is on disk when it returns), read a finished key back with ``lookup``.
    """

    def __init__(self, path: Path, agent: AgentDefinition[Any, Any], fd: int, size: int) -> None:
        self.path = path
        self.agent = agent
        self.index: dict[str, int] = {}
        """Key → offset of its line, for every line loaded or appended."""
        self.loaded = 0
        """Lines found when the journal was opened."""
        self.torn_bytes = 0
        """Bytes of a torn last line cut off when the journal was opened (an interrupted write)."""
        self._fd = fd
        self._size = size
        self._reader: Any = None
        self._pending: list[tuple[bytes, asyncio.Future[None]]] = []
        self._writer: asyncio.Task[None] | None = None
        self._failed: BaseException | None = None

    @classmethod
    def open(cls, path: str | os.PathLike[str], agent: AgentDefinition[Any, Any]) -> Journal:
        """Open (or create) the journal at ``path``, index its lines, and cut off a torn last line.

        Raises:
            JournalError: ``path`` is not a regular file (a FIFO, a device, a terminal: nothing could be read
                back to resume), another run holds the journal, a line other than the last is not JSON, a line
                belongs to another agent or to a newer format.
            OSError: the file cannot be opened for reading and appending.
        """
        path = Path(path)
        # Not blocking: opening a FIFO or a device must not wait for the other end before it can be refused.
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK, 0o644)
        try:
            _refuse_unless_regular(path, fd)
            os.set_blocking(fd, True)
            _lock(fd, path)
            journal = cls(path, agent, fd, 0)
            journal._load()
        except BaseException:
            os.close(fd)
            raise
        return journal

    def _load(self) -> None:
        offset = 0
        number = 0
        with open(self.path, "rb") as file:
            for line in file:
                number += 1
                if not line.endswith(b"\n"):
                    if not _whole_record(line):
                        # An interrupted write: the execution was never reported finished, so it runs again.
                        self.torn_bytes = len(line)
                        break
                    # Whole, only its newline missing (an editor, a copy): keep it, and end it so the next line
                    # does not run into it.
                    self._write(b"\n")
                    line += b"\n"
                if line.strip():
                    key = self._key_of(line, number)
                    if key in self.index:
                        raise JournalError(
                            f"{self.path}:{number}: key {key!r} is journaled twice; the file was edited or written "
                            "by two runs at once. Remove one of the lines."
                        )
                    self.index[key] = offset
                offset += len(line)
        if self.torn_bytes:
            os.ftruncate(self._fd, offset)
        self._size = offset
        self.loaded = len(self.index)

    def _key_of(self, line: bytes, number: int) -> str:
        try:
            record: Any = json.loads(line)
        except ValueError:
            raise JournalError(
                f"{self.path}:{number} is not JSON: this is not a typedagent journal, or it was damaged. "
                "Fix or remove that line, or use another file."
            ) from None
        fields = cast("dict[str, Any]", record) if isinstance(record, dict) else {}
        version = fields.get("v", VERSION)
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise JournalError(
                f"{self.path}:{number} has a format version {version!r} that is not a number typedagent writes "
                f"(1 to {VERSION}): this is not a typedagent journal, or it was edited. Fix that line, or use "
                "another file."
            )
        if version > VERSION:
            raise JournalError(
                f"{self.path}:{number} was written in journal format {version} by a newer typedagent; this one reads "
                f"format {VERSION}. Upgrade typedagent to resume this journal, or use another file."
            )
        key = fields.get("key")
        if not isinstance(key, str):
            raise JournalError(f'{self.path}:{number} has no "key": this is not a typedagent journal.')
        agent = fields.get("agent")
        if agent != self.agent.name:
            raise JournalError(
                f"{self.path} holds results of agent {agent!r}, not {self.agent.name!r}: use another journal file."
            )
        return key

    def lookup(self, key: str) -> dict[str, Any] | None:
        """The journaled record of ``key``, or None."""
        offset = self.index.get(key)
        if offset is None:
            return None
        if self._reader is None:
            self._reader = open(self.path, "rb")  # noqa: SIM115 - kept open for the journal's lifetime
        self._reader.seek(offset)
        record: dict[str, Any] = json.loads(self._reader.readline())
        return record

    async def append(self, key: str, line: bytes) -> None:
        """Append one line; returns once it is on disk (lines appended together share one fsync).

        Raises:
            OSError: the write or the fsync failed (then every later append fails too).
        """
        if self._failed is not None:
            raise self._failed
        self.index[key] = self._size + sum(len(pending) for pending, _ in self._pending)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((line, done))
        if self._writer is None:
            self._writer = asyncio.ensure_future(self._write_pending())
        await asyncio.shield(done)

    async def _write_pending(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                data = b"".join(line for line, _ in batch)
                try:
                    await asyncio.to_thread(self._write, data)
                except OSError as exc:
                    self._failed = exc
                    for _, done in batch + self._pending:
                        if not done.done():
                            done.set_exception(exc)
                    self._pending = []
                    return
                self._size += len(data)
                for _, done in batch:
                    if not done.done():
                        done.set_result(None)
        finally:
            self._writer = None

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        os.fsync(self._fd)

    async def close(self) -> None:
        """Wait for pending lines to reach the disk, then close the file."""
        writer = self._writer
        if writer is not None:
            await asyncio.shield(writer)
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


_NOT_REGULAR: Final = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a terminal or device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
)


def _refuse_unless_regular(path: Path, fd: int) -> None:
    mode = os.fstat(fd).st_mode
    if stat.S_ISREG(mode):
        return
    what = next((name for test, name in _NOT_REGULAR if test(mode)), "not a file")
    raise JournalError(
        f"{path} is not a regular file ({what}): the results must go to a file that can be read back to resume "
        "from; pass a file path"
    )

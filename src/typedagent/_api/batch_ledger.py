"""The ledger of submitted Message Batches: which batch holds each request, so a resumed run attaches to it.

A JSONL file next to the ``execute_many`` journal (``<journal>.batches``), one line per batch submitted:
its id and the ``custom_id`` of each request with the key of the execution that sent it. Each line is on
disk (``fsync``) before the requests' executions wait on the batch; a torn last line (a process killed
mid-write) is cut off when the ledger is opened.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, cast

from .._shared.errors import JournalError

__all__ = ["BatchLedger", "ledger_path"]

VERSION: Final = 1


def ledger_path(journal: str | os.PathLike[str]) -> Path:
    """Where the ledger of the run journaled at ``journal`` lives."""
    return Path(f"{os.fspath(journal)}.batches")


class BatchLedger:
    """The submitted batches of one journal: ``batch_of(custom_id)``, and ``record`` for each new batch."""

    def __init__(self, path: Path, fd: int, submitted: dict[str, str]) -> None:
        self.path = path
        self._fd = fd
        self._submitted = submitted
        self.batches = len(set(submitted.values()))
        """Batches recorded (those read when opened, and those recorded since)."""

    @classmethod
    def open(cls, path: Path) -> BatchLedger:
        """Open (or create) the ledger and read the batches it records (blocking: run it in a thread).

        Raises:
            JournalError: a line other than the last is not a ledger line.
        """
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        submitted: dict[str, str] = {}
        offset = 0
        try:
            with open(path, "rb") as file:
                for number, line in enumerate(file, start=1):
                    if not line.endswith(b"\n"):
                        os.ftruncate(fd, offset)  # a torn write: that batch is submitted again
                        break
                    offset += len(line)
                    batch_id, requests = _read(line, path, number)
                    submitted.update(dict.fromkeys(requests, batch_id))
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd, submitted)

    def batch_of(self, custom_id: str) -> str | None:
        """The batch the request ``custom_id`` was last submitted in, or None."""
        return self._submitted.get(custom_id)

    async def record(self, batch_id: str, requests: Mapping[str, str]) -> None:
        """Record a submitted batch (``requests``: custom_id → execution key); returns once it is on disk."""
        line = json.dumps({"batch_id": batch_id, "requests": dict(requests), "v": VERSION}).encode() + b"\n"
        await asyncio.to_thread(self._write, line)
        self._submitted.update(dict.fromkeys(requests, batch_id))
        self.batches += 1

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]
        os.fsync(self._fd)

    def close(self) -> None:
        """Close the file."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _read(line: bytes, path: Path, number: int) -> tuple[str, dict[str, Any]]:
    try:
        record: Any = json.loads(line)
        fields = cast("dict[str, Any]", record)
        batch_id, requests = fields["batch_id"], fields["requests"]
        if not isinstance(batch_id, str) or not isinstance(requests, dict):
            raise TypeError("batch_id must be a string and requests an object")
    except (ValueError, KeyError, TypeError) as exc:
        raise JournalError(
            f"{path}:{number} is not a line of a typedagent batch ledger ({exc!r}): fix or remove that line, or "
            "move the file away (its batches are then submitted again)."
        ) from None
    return batch_id, cast("dict[str, Any]", requests)

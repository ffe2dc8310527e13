"""``FakeAnthropicServerProcess``: ``FakeAnthropicServer`` in a child process, for benchmarks."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Iterable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from .._shared.numbers import check_non_negative
from ._items import ScriptItem
from ._ratelimit import ServerRateLimits
from ._script_json import script_to_json
from ._server import sdk_client

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

__all__ = ["FakeAnthropicServerProcess"]


class FakeAnthropicServerProcess:
    """``FakeAnthropicServer`` running in its own Python process (``python -m typedagent.testing.fake_server``).

    Use it when the server must not share the client's CPU or GIL, e.g. to measure client overhead.
    Same script and options as ``FakeAnthropicServer``; requests are not recorded, only counted.

    Example:
        ``with FakeAnthropicServerProcess(script, per_conversation=True, latency_ms=50) as server:``
        ``    client = server.client()``

    Args:
        script: The items to serve (they are written to a temporary JSON file).
        per_conversation: Replay the script independently for every conversation.
        latency_ms: Added before every reply.
        host: Interface to bind.
        port: Port to bind; 0 picks a free one.
        python: The interpreter to run; default: this one.
        rate_limits: The API's rate limits to enforce (see ``ServerRateLimits``).
    """

    __test__ = False  # not a test class, whatever pytest's name patterns say

    def __init__(
        self,
        script: Iterable[ScriptItem],
        *,
        per_conversation: bool = False,
        latency_ms: float = 0,
        host: str = "127.0.0.1",
        port: int = 0,
        python: str | None = None,
        rate_limits: ServerRateLimits | None = None,
    ) -> None:
        self.script = list(script)
        self.per_conversation = per_conversation
        self.latency_ms = check_non_negative(latency_ms, "latency_ms")
        self.host = host
        self.port = port
        self.python = python or sys.executable
        self.rate_limits = rate_limits
        self.process: subprocess.Popen[str] | None = None
        self.stderr = ""
        """What the process printed on stderr (its ``requests served`` line and problems), after ``stop()``."""
        self.returncode: int | None = None
        """The process's exit status, after ``stop()``."""
        self._base_url: str | None = None
        self._script_path: str | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` of the running process."""
        if self._base_url is None:
            raise RuntimeError("FakeAnthropicServerProcess is not started: use it as a context manager, or start().")
        return self._base_url

    @property
    def requests_served(self) -> int:
        """``POST /v1/messages`` requests the process has handled (asked over HTTP)."""
        return int(self.stats()["requests_served"])

    def stats(self) -> dict[str, Any]:
        """The process's counters (asked over HTTP): ``requests_served``, ``rate_limited`` and ``problems``."""
        with urllib.request.urlopen(f"{self.base_url}/_fake/stats", timeout=10) as reply:
            stats: dict[str, Any] = json.load(reply)
        return stats

    def client(self, *, keep_alive: bool = False, **kwargs: Any) -> AsyncAnthropic:
        """An ``AsyncAnthropic`` pointed at this server, ``api_key="test"``; ``kwargs`` go to the client.

        By default its connections close after each response, so a test that never closes the client
        leaves no open socket behind (an unclosed one is a ``ResourceWarning``). Pass ``keep_alive=True``
        for the SDK's usual pooled connections (benchmarks), and close the client yourself.
        """
        return sdk_client(self.base_url, keep_alive=keep_alive, **kwargs)

    def start(self) -> FakeAnthropicServerProcess:
        """Start the process; returns once it serves."""
        if self.process is not None:
            raise RuntimeError("FakeAnthropicServerProcess is already running.")
        fd, self._script_path = tempfile.mkstemp(prefix="fake-anthropic-", suffix=".json")
        with os.fdopen(fd, "w") as file:
            json.dump(script_to_json(self.script), file)
        command = [self.python, "-m", "typedagent.testing.fake_server", "--script", self._script_path]
        command += ["--host", self.host, "--port", str(self.port), "--latency-ms", str(self.latency_ms)]
        if self.per_conversation:
            command.append("--per-conversation")
        limits = self.rate_limits
        if limits is not None:
            for flag, value in (
                ("--requests-per-minute", limits.requests_per_minute),
                ("--input-tokens-per-minute", limits.input_tokens_per_minute),
                ("--output-tokens-per-minute", limits.output_tokens_per_minute),
            ):
                if value is not None:
                    command += [flag, str(value)]
            command += ["--rate-limit-capacity-s", str(limits.capacity_s)]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        if not line.startswith("http://"):
            self.stop()
            raise RuntimeError(f"the fake server process did not start (exit status {self.returncode}):\n{self.stderr}")
        self._base_url = line
        return self

    def stop(self) -> None:
        """Terminate the process and collect its stderr (no-op when not running)."""
        process, self.process = self.process, None
        if process is not None:
            if process.poll() is None:
                process.terminate()
            _, self.stderr = process.communicate(timeout=30)
            self.returncode = process.returncode
        self._cleanup()

    def _cleanup(self) -> None:
        self._base_url = None
        if self._script_path is not None:
            os.unlink(self._script_path)
            self._script_path = None

    def __enter__(self) -> FakeAnthropicServerProcess:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> FakeAnthropicServerProcess:
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)

"""``FakeAnthropicServerProcess`` and ``python -m typedagent.testing.fake_server``."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from toolkit_support import PARIS, PROMPT, geo_agent, lookup_then_answer

from typedagent import execute_agent
from typedagent.testing import (
    FakeAnthropicServerProcess,
    api_error,
    conversation,
    output_call,
    script_to_json,
    tool_call,
)
from typedagent.testing.fake_server import main

PROBLEM = (
    "FakeAnthropicServer: request 2 arrived but the script has only 1 item(s). Add a response for it "
    "(the client asked for more turns or retries than the script provides)."
)
SCENARIO = [tool_call("lookup", {"query": "Paris"}), output_call(PARIS)]


async def test_server_process_serves_the_script() -> None:
    """The child process serves the script to the SDK, counts requests, and reports on exit."""
    async with FakeAnthropicServerProcess(SCENARIO) as server:
        assert server.base_url.startswith("http://127.0.0.1:")
        async with server.client() as client:
            result = await execute_agent(geo_agent(), PROMPT, client=client)
        assert server.requests_served == 2
    assert conversation(result) == lookup_then_answer()
    assert server.returncode == 0
    assert server.stderr == "requests served: 2\n"


async def test_server_process_per_conversation_with_latency() -> None:
    """Options reach the process: every concurrent conversation replays the scenario, retries included."""
    script = [SCENARIO[0], api_error(529, retry_after=0.001), SCENARIO[1]]
    async with FakeAnthropicServerProcess(script, per_conversation=True, latency_ms=5) as server:
        client = server.client(keep_alive=True, max_retries=1)
        results = await asyncio.gather(*(execute_agent(geo_agent(), PROMPT, client=client) for _ in range(10)))
        await client.close()
        assert server.requests_served == 30
    assert [result.ok for result in results] == [True] * 10


def test_server_process_reports_a_failed_start() -> None:
    """A process that exits instead of printing its URL is reported with its exit status."""
    server = FakeAnthropicServerProcess(SCENARIO, python="/bin/false")
    with pytest.raises(RuntimeError, match=r"^the fake server process did not start \(exit status 1\):"):
        server.start()
    with pytest.raises(RuntimeError, match="not started"):
        _ = server.base_url


def test_server_process_start_twice_and_stop_twice() -> None:
    """Starting a running process fails; stopping is idempotent."""
    with FakeAnthropicServerProcess(["hi"]) as server, pytest.raises(RuntimeError, match="already running"):
        server.start()
    server.stop()
    assert server.returncode == 0


def test_fake_server_main_serves_until_sigterm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The command line prints its URL, serves, and stops cleanly on SIGTERM with a summary."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps(script_to_json(["hello"])))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    replies: list[dict[str, object]] = []

    def client() -> None:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/messages", data=b'{"messages": []}', method="POST"
        )
        for _ in range(500):
            try:
                with urllib.request.urlopen(request, timeout=5) as reply:
                    replies.append(json.load(reply))
                break
            except OSError:
                threading.Event().wait(0.01)
        else:
            return  # the server never came up: main() has failed, and must not be sent a signal
        try:
            urllib.request.urlopen(request, timeout=5)
        except urllib.error.HTTPError as exc:
            replies.append(json.load(exc))
        os.kill(os.getpid(), signal.SIGTERM)  # main() handles it: it answered, so its handler is installed

    thread = threading.Thread(target=client)
    thread.start()
    code = main(["--script", str(script), "--port", str(port), "--latency-ms", "1"])
    thread.join()
    assert code == 0
    assert replies[0]["content"] == [{"type": "text", "text": "hello"}]
    out, err = capsys.readouterr()
    assert out == f"http://127.0.0.1:{port}\n"
    assert replies[1]["error"] == {"type": "invalid_request_error", "message": PROBLEM}
    assert err == f"requests served: 2\nproblem: {PROBLEM}\n"
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_fake_server_main_rejects_unreadable_scripts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A missing or invalid script file is a usage error (exit 2) saying what is wrong."""
    with pytest.raises(SystemExit) as missing:
        main(["--script", str(tmp_path / "nope.json")])
    assert missing.value.code == 2
    assert "fake_server: cannot read the script" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('[{"kind": "mystery"}]')
    with pytest.raises(SystemExit):
        main(["--script", str(bad)])
    assert "is not a script item" in capsys.readouterr().err

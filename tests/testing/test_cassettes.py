"""Cassettes: ``RecordingClient`` writes readable, secret-free JSON; ``ReplayClient`` replays it strictly."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anthropic
import pytest
from toolkit_support import PARIS, PROMPT, geo_agent, lookup_then_answer

from typedagent import AgentErrorCode, ApiErrorContext, execute_agent
from typedagent.testing import (
    CassetteError,
    FakeAnthropicServer,
    FunctionClient,
    RecordingClient,
    ReplayClient,
    ScriptedClient,
    api_error,
    conversation,
    malformed_body,
    output_call,
    redact,
    tool_call,
)

SCENARIO = [tool_call("lookup", {"query": "Paris"}), output_call(PARIS)]
SECRET = "sk-ant-api03-very-secret-key-0123456789"
# A response as the API sends it: nulls, a web search, and blocks and fields newer than the installed SDK.
WEB_SEARCH = json.loads((Path(__file__).parent.parent / "data" / "web_search_response.json").read_text())


async def record(path: Path, script: list[Any], **client_options: Any) -> Any:
    """Run the geo agent against a fake server through the real SDK, recording a cassette."""
    async with FakeAnthropicServer(script) as server:
        recorder = RecordingClient(server.client(api_key=SECRET, **client_options), path)
        return await execute_agent(geo_agent(), PROMPT, client=recorder)


async def test_recording_writes_one_entry_per_call(tmp_path: Path) -> None:
    """The cassette is indented JSON with each call's request params and response JSON."""
    path = tmp_path / "deep" / "geo.json"
    result = await record(path, SCENARIO)
    assert result.ok
    text = path.read_text()
    assert text.startswith('{\n  "version": 1,\n  "calls": [\n    {\n      "request": {\n')
    data = json.loads(text)
    assert [sorted(call) for call in data["calls"]] == [["request", "response"], ["request", "response"]]
    first = data["calls"][0]
    assert first["request"]["messages"] == [{"role": "user", "content": PROMPT}]
    assert first["request"]["model"] == "claude-haiku-4-5"
    assert first["response"] == {
        "id": "msg_fake_000001",
        "content": [{"id": "toolu_01_001", "input": {"query": "Paris"}, "name": "lookup", "type": "tool_use"}],
        "model": "claude-haiku-4-5",
        "role": "assistant",
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "type": "message",
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    assert data["calls"][1]["request"]["messages"] == lookup_then_answer()[:3]


async def test_recording_keeps_exactly_what_the_api_sent(tmp_path: Path) -> None:
    """A real response is recorded field for field: its nulls, newer block types and fields the SDK does not know."""
    path = tmp_path / "search.json"
    result = await record(path, [malformed_body(json.dumps(WEB_SEARCH)), output_call(PARIS)])
    assert result.ok
    calls = json.loads(path.read_text())["calls"]
    assert calls[0]["response"] == WEB_SEARCH
    assert calls[1]["request"]["messages"][1] == {"role": "assistant", "content": WEB_SEARCH["content"]}


async def test_replay_of_a_real_response_does_not_drift(tmp_path: Path) -> None:
    """An unchanged agent replays a recording with nulls and newer block types without drift or validation errors."""
    path = tmp_path / "search.json"
    recorded = await record(path, [malformed_body(json.dumps(WEB_SEARCH)), output_call(PARIS)])
    replay = ReplayClient(path)
    result = await execute_agent(geo_agent(), PROMPT, client=replay)
    assert result.ok, result
    assert result.output == PARIS
    assert conversation(result) == conversation(recorded)
    assert conversation(result)[1] == {"role": "assistant", "content": WEB_SEARCH["content"]}
    replay.assert_all_played()


async def test_replay_reproduces_the_run_offline(tmp_path: Path) -> None:
    """Replaying gives the same result and conversation with no server at all."""
    path = tmp_path / "geo.json"
    recorded = await record(path, SCENARIO)
    replay = ReplayClient(path)
    result = await execute_agent(geo_agent(), PROMPT, client=replay)
    assert result.ok
    assert result.output == PARIS
    assert conversation(result) == conversation(recorded) == lookup_then_answer()
    assert replay.remaining == 0
    replay.assert_all_played()
    assert len(replay.requests) == 2


async def test_secrets_never_reach_the_cassette(tmp_path: Path) -> None:
    """API keys and auth headers are redacted wherever they appear, in requests and responses."""
    path = tmp_path / "secret.json"
    settings = {
        "extra_headers": {"X-Api-Key": SECRET, "Authorization": f"Bearer {SECRET}", "x-trace": "keep-me"},
        "metadata": {"user_id": f"user with {SECRET}"},
    }
    script = [output_call(PARIS)]
    async with FakeAnthropicServer(script) as server:
        recorder = RecordingClient(server.client(api_key=SECRET), path)
        result = await execute_agent(geo_agent(model_settings=settings), f"my key is {SECRET}", client=recorder)
    assert result.ok
    assert server.request_headers[0]["x-api-key"] == SECRET  # it was really sent
    text = path.read_text()
    assert SECRET not in text
    assert "sk-ant-" not in text
    request = json.loads(text)["calls"][0]["request"]
    assert request["extra_headers"] == {"X-Api-Key": "[REDACTED]", "Authorization": "[REDACTED]", "x-trace": "keep-me"}
    assert request["metadata"] == {"user_id": "user with [REDACTED]"}
    assert request["messages"] == [{"role": "user", "content": "my key is [REDACTED]"}]
    replay = await execute_agent(geo_agent(model_settings=settings), f"my key is {SECRET}", client=ReplayClient(path))
    assert replay.ok  # the live request is redacted the same way before comparing


async def test_mcp_server_credentials_never_reach_the_cassette(tmp_path: Path) -> None:
    """An MCP server's authorization_token, URL credentials and secret-looking headers are redacted, even echoed."""
    path = tmp_path / "mcp.json"
    token = "mcp-connector-token-4f9a2c7e"
    url_password, url_token = "url-password-8e1d", "query-token-77b3a"
    server_entry = {
        "type": "url",
        "name": "wiki",
        "url": f"https://svc:{url_password}@mcp.example.com/mcp?access_token={url_token}&region=eu",
        "authorization_token": token,
    }
    settings = {
        "mcp_servers": [server_entry],
        "extra_headers": {"X-Custom-Token": "hdr-secret-5521a", "X-Session-Id": "sess-secret-ae41", "x-trace": "keep"},
    }
    echoed = PARIS.model_copy(update={"city": f"echo {token}"})
    async with FakeAnthropicServer([output_call(echoed)]) as server:
        recorder = RecordingClient(server.client(api_key=SECRET), path)
        result = await execute_agent(geo_agent(model_settings=settings), PROMPT, client=recorder)
    assert result.ok, result
    assert server.requests[0]["mcp_servers"][0]["authorization_token"] == token  # it was really sent
    text = path.read_text()
    for secret in (token, url_password, url_token, "hdr-secret-5521a", "sess-secret-ae41"):
        assert secret not in text
    request = json.loads(text)["calls"][0]["request"]
    assert request["mcp_servers"] == [
        {
            "type": "url",
            "name": "wiki",
            "url": "https://svc:[REDACTED]@mcp.example.com/mcp?access_token=[REDACTED]&region=eu",
            "authorization_token": "[REDACTED]",
        }
    ]
    assert request["extra_headers"] == {
        "X-Custom-Token": "[REDACTED]",
        "X-Session-Id": "[REDACTED]",
        "x-trace": "keep",
    }
    replay = ReplayClient(path)
    replayed = await execute_agent(geo_agent(model_settings=settings), PROMPT, client=replay)
    assert replayed.ok, replayed  # the live request is redacted the same way before comparing
    replay.assert_all_played()


def test_recording_client_refuses_a_path_it_cannot_write(tmp_path: Path) -> None:
    """A cassette path under a regular file, or naming a folder, is refused when the client is made."""
    (tmp_path / "file").write_text("x")
    for path in (tmp_path / "file" / "c.json", tmp_path):
        with pytest.raises(ValueError, match=f"RecordingClient cannot write the cassette {str(path)!r}"):
            RecordingClient(ScriptedClient(["ok"]), path)


async def test_recording_keeps_the_response_when_the_cassette_cannot_be_written(tmp_path: Path) -> None:
    """A cassette that cannot be written mid-run warns; the paid response still reaches the run, kept in entries."""
    path = tmp_path / "c.json"
    recorder = RecordingClient(ScriptedClient([tool_call("lookup", {"query": "Paris"}), output_call(PARIS)]), path)
    path.mkdir()  # the path turns into a folder after the client was made
    with pytest.warns(RuntimeWarning, match="RecordingClient could not write the cassette") as warned:
        result = await execute_agent(geo_agent(), PROMPT, client=recorder)
    assert result.ok, result
    assert result.output == PARIS
    assert len(warned) == 2
    assert [sorted(entry) for entry in recorder.entries] == [["request", "response"], ["request", "response"]]
    path.rmdir()
    recorder.save()
    assert len(json.loads(path.read_text())["calls"]) == 2


def test_redact_rules() -> None:
    """Credential keys (any case), Anthropic keys, bearer tokens and given secrets are replaced."""
    value = {
        "API_KEY": "abc",
        "nested": [{"authorization": "Basic xyz", "Cookie": "c=1", "note": "Bearer tok.en-1 and sk-ant-xyz_1"}],
        "custom": "password hunter2",
        "count": 3,
    }
    assert redact(value, ["hunter2", ""]) == {
        "API_KEY": "[REDACTED]",
        "nested": [{"authorization": "[REDACTED]", "Cookie": "[REDACTED]", "note": "[REDACTED] and [REDACTED]"}],
        "custom": "password [REDACTED]",
        "count": 3,
    }
    assert redact((1, None, True, 2.5, object.__name__)) == [1, None, True, 2.5, "object"]


async def test_replay_reports_drift_with_call_and_field(tmp_path: Path) -> None:
    """A request that differs names the call, the recorded entry and each field, expected vs got."""
    path = tmp_path / "geo.json"
    await record(path, SCENARIO)

    @__import__("typedagent").tool
    def lookup(query: str) -> str:
        """Look up a fact."""
        return f"FACTS about {query}"

    with pytest.raises(CassetteError) as caught:
        await execute_agent(geo_agent(helpers=[lookup]), PROMPT, client=ReplayClient(path))
    assert str(caught.value) == (
        f"ReplayClient: call 2 does not match recorded call 2 of {str(path)!r}:\n"
        '  messages[2].content[0].content: expected "facts about Paris", got "FACTS about Paris"\n'
        "The request drifted from the recording: fix the agent, or re-record the cassette if the change is intended."
    )


async def test_replay_reports_every_kind_of_difference(tmp_path: Path) -> None:
    """Missing and extra keys, list lengths and type changes are all listed (at most ten)."""
    path = tmp_path / "c.json"
    recorder = RecordingClient(ScriptedClient(["ok"]), path)
    await recorder.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "a"}], top_k=1)
    replay = ReplayClient(path)
    with pytest.raises(CassetteError) as caught:
        await replay.messages.create(
            model="m",
            max_tokens="5",
            messages=[{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
            x=2,
        )
    assert str(caught.value).splitlines()[1:6] == [
        '  max_tokens: expected 5, got "5"',
        "  messages: expected 1 item(s), got 2",
        "  top_k: expected 1, got nothing",
        "  x: expected nothing, got 2",
        "The request drifted from the recording: fix the agent, or re-record the cassette if the change is intended.",
    ]
    many = {f"k{i}": i for i in range(12)}
    with pytest.raises(CassetteError, match=r"\n  … and 6 more\nThe request drifted"):
        await ReplayClient(path).messages.create(**many)


async def test_replay_ignore_paths(tmp_path: Path) -> None:
    """Ignored fields are not compared, whether changed, added or removed."""
    path = tmp_path / "c.json"
    recorder = RecordingClient(ScriptedClient(["ok"]), path)
    await recorder.messages.create(model="m", metadata={"run": 1}, messages=[{"role": "user", "content": "a"}])
    replay = ReplayClient(path, ignore=["metadata", "messages[0].content", "temperature"])
    message = await replay.messages.create(model="m", temperature=0.5, messages=[{"role": "user", "content": "z"}])
    assert message.content[0].type == "text"
    replay = ReplayClient(path, ignore=["metadata.run"])
    assert (await replay.messages.create(model="m", metadata={}, messages=[{"role": "user", "content": "a"}])).id


async def test_replay_extra_and_missing_calls(tmp_path: Path) -> None:
    """More calls than recorded fail at the call; fewer fail ``assert_all_played``."""
    path = tmp_path / "geo.json"
    await record(path, SCENARIO)
    replay = ReplayClient(path)
    await replay.messages.create(**replay.calls[0]["request"])
    with pytest.raises(CassetteError, match=r"recorded call\(s\) of .* were never requested \(entries \[2\]\)"):
        replay.assert_all_played()
    await replay.messages.create(**replay.calls[1]["request"])
    with pytest.raises(CassetteError, match=r"^ReplayClient: call 3 has no recorded call left in .* \(2 recorded\)"):
        await replay.messages.create(**replay.calls[1]["request"])


async def test_replay_matches_concurrent_requests_in_any_order(tmp_path: Path) -> None:
    """Identical requests are matched to unused recordings, so concurrent runs replay in any order."""
    path = tmp_path / "c.json"
    recorder = RecordingClient(FunctionClient(lambda request: request["messages"][0]["content"].upper()), path)
    for prompt in ("a", "b", "c"):
        await recorder.messages.create(model="m", messages=[{"role": "user", "content": prompt}])
    replay = ReplayClient(path)
    answers = await asyncio.gather(
        *(replay.messages.create(model="m", messages=[{"role": "user", "content": p}]) for p in ("c", "a", "b"))
    )
    assert [answer.content[0].text for answer in answers] == ["C", "A", "B"]  # type: ignore[union-attr]


async def test_recorded_api_errors_are_replayed(tmp_path: Path) -> None:
    """An API error is recorded (status, type, message, request id) and raised again on replay."""
    path = tmp_path / "err.json"
    result = await record(path, [api_error(529, "Overloaded")], max_retries=0)
    assert not result.ok
    assert json.loads(path.read_text())["calls"][0]["error"] == {
        "status": 529,
        "type": "overloaded_error",
        "message": "Overloaded",
        "request_id": "req_fake_000001",
    }
    replayed = await execute_agent(geo_agent(), PROMPT, client=ReplayClient(path))
    assert replayed.error.code == AgentErrorCode.API_ERROR
    assert (
        replayed.error.context
        == result.error.context
        == ApiErrorContext(
            status_code=529, error_type="overloaded_error", request_id="req_fake_000001", attempt=1, iteration=1
        )
    )


@pytest.mark.parametrize(
    ("item", "status"), [(api_error("timeout"), "timeout"), (api_error("connection"), "connection")]
)
async def test_recorded_connection_errors(tmp_path: Path, item: Any, status: str) -> None:
    """Timeouts and connection errors are recorded too, and replayed as the SDK's exceptions."""
    path = tmp_path / "err.json"
    recorder = RecordingClient(ScriptedClient([item]), path)
    with pytest.raises(anthropic.APIConnectionError):
        await recorder.messages.create(model="m", messages=[])
    assert json.loads(path.read_text())["calls"][0]["error"]["status"] == status
    with pytest.raises(anthropic.APIConnectionError):
        await ReplayClient(path).messages.create(model="m", messages=[])


async def test_recording_lets_other_exceptions_through_unrecorded(tmp_path: Path) -> None:
    """An exception that is not the SDK's is re-raised and leaves no entry."""
    path = tmp_path / "x.json"
    recorder = RecordingClient(FunctionClient(lambda request: 1 / 0), path)
    with pytest.raises(ZeroDivisionError):
        await recorder.messages.create(model="m", messages=[])
    assert recorder.entries == []
    assert not path.exists()


def test_replay_without_a_cassette(tmp_path: Path) -> None:
    """A missing or foreign file says how to record a cassette."""
    with pytest.raises(CassetteError, match=r"no cassette at .*nope.json'\. Record it first: .*--record-cassettes"):
        ReplayClient(tmp_path / "nope.json")
    foreign = tmp_path / "foreign.json"
    foreign.write_text('{"interactions": []}')
    with pytest.raises(CassetteError, match=r"is not a version-1 typedagent cassette; re-record it"):
        ReplayClient(foreign)


KILLED_MID_SAVE = """
import asyncio, os, signal, sys
sys.path.insert(0, {support!r})
from toolkit_support import PARIS, PROMPT, geo_agent
from typedagent import execute_agent
from typedagent.testing import RecordingClient, ScriptedClient, output_call

FOLDER = {folder!r}
writes = {{"opened": 0, "armed": False}}


def audit(event, args):
    # Count the files opened for writing in the cassette's folder; arm the kill on the third save.
    if event != "open" or not isinstance(args[0], (str, bytes, os.PathLike)):
        return
    if os.path.dirname(os.path.abspath(os.fsdecode(args[0]))) != FOLDER:
        return
    mode, flags = args[1], args[2] or 0
    if (mode is not None and any(c in mode for c in "wax+")) or flags & (os.O_WRONLY | os.O_RDWR):
        writes["opened"] += 1
        writes["armed"] = writes["opened"] == 3


def profile(frame, event, arg):
    # The first C call to return once armed is the open itself: killed with the file just opened, nothing written.
    if event == "c_return" and writes["armed"]:
        os.kill(os.getpid(), signal.SIGKILL)


async def main():
    recorder = RecordingClient(ScriptedClient([output_call(PARIS)] * 5), {path!r})
    sys.addaudithook(audit)
    sys.setprofile(profile)
    for _ in range(5):
        await execute_agent(geo_agent(), PROMPT, client=recorder)

asyncio.run(main())
"""


def test_recording_survives_a_kill_mid_save(tmp_path: Path) -> None:
    """A recording process SIGKILLed while it saves the cassette leaves every earlier call on disk, readable."""
    import signal
    import subprocess
    import sys

    path = tmp_path / "cassettes" / "geo.json"
    path.parent.mkdir()
    code = KILLED_MID_SAVE.format(support=str(Path(__file__).parent), folder=str(path.parent), path=str(path))
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert child.returncode == -signal.SIGKILL, child.stderr
    replay = ReplayClient(path)
    assert len(replay.calls) == 2  # the third save was killed: the two before it are intact
    assert [call["response"]["content"][0]["input"] for call in replay.calls] == [PARIS.model_dump()] * 2


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"version": 1}', r"has no 'calls' list"),
        ('{"version": 1, "calls": {"request": {}}}', r"has no 'calls' list"),
        ('{"version": 1, "calls": [["request"]]}', r"call 1 is not an object with 'request' and 'response'"),
        ('{"version": 1, "calls": [{"request": {}}]}', r"call 1 is not an object with 'request' and 'response'"),
    ],
)
def test_replay_of_a_cassette_without_usable_calls(tmp_path: Path, content: str, message: str) -> None:
    """A cassette whose ``calls`` is missing, not a list, or holds entries that are not calls is a CassetteError."""
    path = tmp_path / "broken.json"
    path.write_text(content)
    with pytest.raises(CassetteError, match=message):
        ReplayClient(path)


def test_recording_that_cannot_be_saved_leaves_the_cassette_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save that fails (a full disk at the rename) raises, keeps the previous cassette and removes its temporary."""
    import os

    path = tmp_path / "geo.json"
    recorder = RecordingClient(ScriptedClient([output_call(PARIS)] * 2), path)
    asyncio.run(execute_agent(geo_agent(), PROMPT, client=recorder))
    saved = path.read_bytes()

    def full_disk(source: object, target: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left on device"):
        recorder.save()
    assert path.read_bytes() == saved
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["geo.json"]

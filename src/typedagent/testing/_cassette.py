"""Cassettes: ``RecordingClient`` saves real request/response pairs as JSON, ``ReplayClient`` replays them."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import warnings
from collections.abc import Awaitable, Coroutine, Iterable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

from ._cassette_toolsets import ToolsetRecorder, ToolsetReplayer
from ._items import ApiErrorSpec
from ._redact import client_secrets, redact, secrets_in
from ._scripted import _InProcessClient
from ._stream_script import RecordedStream

if TYPE_CHECKING:
    from anthropic.types import Message

    from .._agent.remote import Toolset, ToolsetConnection
    from .._api.client import MessagesClient

__all__ = ["CassetteError", "RecordingClient", "ReplayClient"]

CASSETTE_VERSION: Final = 1
_MAX_DIFFERENCES: Final = 10


class CassetteError(AssertionError):
    """A replayed run does not match its cassette (drift, extra or missing calls, no cassette).

    An ``AssertionError``, so it fails the test instead of becoming an ``API_ERROR`` result.
    """

    __module__ = "typedagent.testing"  # shown in tracebacks: the name users import


def _error_entry(exc: Exception) -> dict[str, Any] | None:
    """An SDK exception as cassette data (None for exceptions the SDK did not raise)."""
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        body = cast("dict[str, Any]", exc.body) if isinstance(exc.body, dict) else {}
        error = cast("dict[str, Any]", body["error"]) if isinstance(body.get("error"), dict) else {}
        message = error.get("message")
        return {
            "status": exc.status_code,
            "type": exc.type,
            "message": message or str(exc),
            "request_id": exc.request_id,
        }
    if isinstance(exc, anthropic.APITimeoutError):
        return {"status": "timeout", "message": str(exc)}
    if isinstance(exc, anthropic.APIConnectionError):
        return {"status": "connection", "message": str(exc)}
    return None


class _Forwarding:
    def __init__(self, client: RecordingClient, *, beta: bool = False) -> None:
        self._client = client
        self._beta = beta

    def create(self, **params: Any) -> Coroutine[Any, Any, Message]:
        return self._client._create(params, beta=self._beta)


class _ForwardingBeta:
    def __init__(self, client: RecordingClient) -> None:
        self.messages = _Forwarding(client, beta=True)


class RecordingClient:
    """Wraps a real client and saves every request/response pair to a JSON cassette.

    The file is written again after every call (indented JSON, one entry per call with ``request`` and
    ``response`` — or ``error`` for an API error, which is re-raised), atomically: the new content goes
    to a temporary file beside it, is flushed to disk, and then replaces the cassette in one rename.
    A run killed at any moment, mid-save included, leaves the cassette as it was after the previous
    call: what it recorded is never lost. Credentials never reach the file (see ``redact``). The agent's
    toolsets (MCP servers) are recorded too, under ``toolsets``: each tool listing and each call's input and
    result, so that ``ReplayClient`` replays the run without the servers.

    Example:
        ``client = RecordingClient(AsyncAnthropic(), "tests/cassettes/triage.json")``

    A cassette that cannot be written is refused when the client is made, before any (paid) call. If
    writing fails later (the disk filled up, the folder went away), the response still reaches the run: a
    ``RuntimeWarning`` says so, the call stays in ``entries``, and the next call (or ``save()``) writes
    the file again.

    Args:
        client: The real client (``AsyncAnthropic()`` or anything with an async ``messages.create``).
        path: Where the cassette is written (parent folders are created; an existing file is replaced).

    Raises:
        ValueError: ``path`` cannot be written (a folder, under a regular file, or in a read-only folder).
    """

    __test__ = False  # not a test class, whatever pytest's name patterns say

    def __init__(self, client: MessagesClient, path: str | Path) -> None:
        self.client = client
        self.path = _writable(Path(path))
        self.entries: list[dict[str, Any]] = []
        """The recorded calls, as written to the file."""
        self.messages = _Forwarding(self)
        self.beta = _ForwardingBeta(self)
        """``client.beta.messages.create`` (requests with beta parameters), forwarded to the wrapped client's."""
        self._secrets = client_secrets(client)
        self._toolsets = ToolsetRecorder(self._save_or_warn)

    def _open_toolset(self, toolset: Toolset) -> AbstractAsyncContextManager[ToolsetConnection]:
        """How an execution through this client connects a toolset: for real, recording what it lists and answers."""
        return self._toolsets.open(toolset)

    def _create(self, params: dict[str, Any], *, beta: bool) -> Coroutine[Any, Any, Message]:
        # The wrapped client is called now, not when the call is awaited, so that what it raises as it is
        # called (a test double's ScriptError) still reaches execute_agent as it is called.
        resource: Any = getattr(getattr(self.client, "beta", None), "messages", None) if beta else self.client.messages
        if resource is None:
            raise TypeError(
                f"RecordingClient: the request has beta parameters, but the wrapped {type(self.client).__name__} "
                "has no beta.messages to send them through: wrap an AsyncAnthropic (or a testing client)."
            )
        call = resource.create(**params)
        return self._record(params, call, beta=beta)

    async def _record(self, params: dict[str, Any], call: Awaitable[Message], *, beta: bool = False) -> Message:
        # A credential the request carries (an MCP server's token) is cut from its response too, if echoed.
        self._secrets += [secret for secret in secrets_in(params) if secret not in self._secrets]
        entry: dict[str, Any] = {"request": redact(params, self._secrets)}
        self.entries.append(entry)
        try:
            message = await call
        except Exception as exc:
            self._finish(entry, None, exc)
            raise
        if params.get("stream"):
            # The response is recorded whole once it has streamed in; the replay streams it again.
            return cast("Message", RecordedStream(message, lambda data, exc: self._finish(entry, data, exc), beta=beta))
        self._finish(entry, message, None)
        return message

    def _finish(self, entry: dict[str, Any], response: object, exc: Exception | None) -> None:
        if exc is not None:
            error = _error_entry(exc)
            if error is None:
                self.entries.remove(entry)
                return
            entry["error"] = redact(error, self._secrets)
        else:
            entry["response"] = redact(response, self._secrets)
        self._save_or_warn()

    def _save_or_warn(self) -> None:
        try:
            self.save()
        except OSError as exc:  # the call was paid for: its response goes on to the run, kept in entries
            warnings.warn(
                f"RecordingClient could not write the cassette {str(self.path)!r} ({type(exc).__name__}: "
                f"{exc.strerror or exc}); its {len(self.entries)} call(s) are kept in .entries and written again "
                "after the next call, or by save()",
                RuntimeWarning,
                stacklevel=2,
            )

    def save(self) -> None:
        """Write the cassette (done after every call): to a temporary file, flushed, then renamed over it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data: dict[str, Any] = {"version": CASSETTE_VERSION, "calls": self.entries}
        if self._toolsets.logs:
            data["toolsets"] = redact(self._toolsets.logs, self._secrets)
        write_atomically(self.path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so that a crash at any moment leaves either the old file or the new one whole.

    The text goes to a temporary file in the same folder (``.<name>.<random>.tmp``), is ``fsync``-ed, and is
    renamed over ``path``; the folder is ``fsync``-ed too, so the rename itself is durable. A process killed
    before the rename leaves the old file untouched (and the temporary file behind).
    """
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o644
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    with contextlib.suppress(OSError):  # Windows cannot open a folder; there the rename is the best there is
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def _writable(path: Path) -> Path:
    """``path``, once it is known a cassette can be written there (its parent folders are created now)."""

    def refuse(why: str) -> ValueError:
        return ValueError(
            f"RecordingClient cannot write the cassette {str(path)!r}: {why}. Pass a file path in a "
            "folder you can write to."
        )

    if path.is_dir():
        raise refuse("it is a folder")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise refuse(f"its folder cannot be created ({exc.strerror or exc})") from None
    if not os.access(path if path.exists() else path.parent, os.W_OK):
        raise refuse("it is not writable" if path.exists() else "its folder is not writable")
    return path


class ReplayClient(_InProcessClient):
    """Answers from a cassette written by ``RecordingClient`` and fails clearly when the run drifts.

    A request is matched to the first unused recorded call whose request is identical (so concurrent
    executions replay in any order). When none is, the call fails with a ``CassetteError`` naming the
    call, the cassette entry it was compared with (the next unused one), and each differing field
    with the recorded and the actual value. Requests are compared after the same redaction as when
    recording. Toolsets (MCP servers) are replayed from the cassette without their servers: a call with
    no unused recording of the same tool and input fails the next request with a ``CassetteError``.

    Args:
        path: The cassette file.
        ignore: Request fields not compared, as paths like ``"metadata"`` or ``"messages[0].content"``.
    """

    _source = "ReplayClient"
    _message_prefix = "msg_replay"

    def __init__(self, path: str | Path, *, ignore: Iterable[str] = ()) -> None:
        super().__init__()
        self.path = Path(path)
        self.ignore = frozenset(ignore)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CassetteError(
                f"ReplayClient: no cassette at {str(self.path)!r}. Record it first: wrap a real client in "
                "RecordingClient, or run pytest with --record-cassettes (and ANTHROPIC_API_KEY set)."
            ) from None
        if not isinstance(data, dict) or cast("dict[str, Any]", data).get("version") != CASSETTE_VERSION:
            raise CassetteError(
                f"ReplayClient: {str(self.path)!r} is not a version-{CASSETTE_VERSION} typedagent cassette; "
                "re-record it."
            )
        self.calls: list[dict[str, Any]] = _calls(self.path, cast("dict[str, Any]", data).get("calls"))
        """The recorded calls."""
        self._used = [False] * len(self.calls)
        self._drifts: list[str] = []
        toolsets: object = cast("dict[str, Any]", data).get("toolsets") or {}
        if not isinstance(toolsets, dict):
            raise CassetteError(f"ReplayClient: {str(self.path)!r} has a malformed 'toolsets' entry; re-record it.")
        logs = cast("dict[str, Any]", toolsets)
        self._toolsets = ToolsetReplayer(logs, str(self.path), self._drifts.append, CassetteError)

    def _open_toolset(self, toolset: Toolset) -> AbstractAsyncContextManager[ToolsetConnection]:
        """How an execution through this client connects a toolset: from the cassette, without its server."""
        return self._toolsets.open(toolset)

    @property
    def remaining(self) -> int:
        """Recorded calls not replayed yet."""
        return self._used.count(False)

    def assert_all_played(self) -> None:
        """Raise ``CassetteError`` when recorded calls were never requested (the run now makes fewer calls)."""
        unused = [index + 1 for index, used in enumerate(self._used) if not used]
        if unused:
            raise CassetteError(
                f"ReplayClient: {len(unused)} recorded call(s) of {str(self.path)!r} were never requested "
                f"(entries {unused}). The agent now makes fewer API calls than when recorded; re-record if intended."
            )

    def _respond(self, request: dict[str, Any], call: int) -> Coroutine[Any, Any, Message]:
        if self._drifts:
            raise CassetteError(self._drifts.pop(0))
        # Streaming is how the answer travels, not what is asked: a call recorded streamed replays unstreamed
        # and the other way round.
        actual = _unstreamed(redact(request))
        unused = [index for index, used in enumerate(self._used) if not used]
        if not unused:
            raise CassetteError(
                f"ReplayClient: call {call} has no recorded call left in {str(self.path)!r} "
                f"({len(self.calls)} recorded). The agent now makes more API calls than when recorded; "
                "re-record if intended."
            )
        for index in unused:
            if not _differences(_unstreamed(self.calls[index]["request"]), actual, "", self.ignore):
                break
        else:
            index = unused[0]
            differences = _differences(_unstreamed(self.calls[index]["request"]), actual, "", self.ignore)
            listing = "\n".join(f"  {line}" for line in differences[:_MAX_DIFFERENCES])
            more = len(differences) - _MAX_DIFFERENCES
            raise CassetteError(
                f"ReplayClient: call {call} does not match recorded call {index + 1} of {str(self.path)!r}:\n"
                f"{listing}{f'{chr(10)}  … and {more} more' if more > 0 else ''}\n"
                "The request drifted from the recording: fix the agent, or re-record the cassette if the change "
                "is intended."
            )
        self._used[index] = True
        entry = self.calls[index]
        if "error" in entry:
            error = entry["error"]
            recorded = ApiErrorSpec(
                status=error["status"],
                message=error.get("message") or "recorded API error",
                error_type=error.get("type"),
                request_id=error.get("request_id"),
            )
            return self._serve_item(recorded, request, call)
        return self._serve_item(entry["response"], request, call)


def _calls(path: Path, calls: object) -> list[dict[str, Any]]:
    """A cassette's ``calls``, each checked to be a recorded call (a request, and a response or an error)."""
    if not isinstance(calls, list):
        raise CassetteError(
            f"ReplayClient: {str(path)!r} has no 'calls' list: it was not written by RecordingClient, or it was "
            "edited; re-record it."
        )
    checked: list[dict[str, Any]] = []
    for number, call in enumerate(cast("list[object]", calls), start=1):
        entry = cast("dict[str, Any]", call) if isinstance(call, dict) else {}
        if not isinstance(entry.get("request"), dict) or not (
            "response" in entry or isinstance(entry.get("error"), dict)
        ):
            raise CassetteError(
                f"ReplayClient: {str(path)!r}: call {number} is not an object with 'request' and 'response' (or "
                "'error'): the cassette was edited or cut short; re-record it."
            )
        checked.append(entry)
    return checked


def _unstreamed(request: Any) -> Any:
    if not isinstance(request, dict):
        return request
    fields = cast("dict[str, Any]", request)
    return {key: value for key, value in fields.items() if key != "stream"}


def _differences(expected: object, actual: object, path: str, ignore: frozenset[str]) -> list[str]:
    """Every field where ``actual`` differs from ``expected``, as ``path: expected …, got …`` lines."""
    if path in ignore:
        return []
    # Taken before isinstance() narrows the two apart (and only rendered for a difference).
    same_type = type(expected) is type(actual)
    was, now = expected, actual
    if isinstance(expected, dict) and isinstance(actual, dict):
        left, right = cast("dict[str, Any]", expected), cast("dict[str, Any]", actual)
        found: list[str] = []
        for key in [*left, *(key for key in right if key not in left)]:
            where = f"{path}.{key}" if path else key
            if key not in right:
                found += [] if where in ignore else [f"{where}: expected {_show(left[key])}, got nothing"]
            elif key not in left:
                found += [] if where in ignore else [f"{where}: expected nothing, got {_show(right[key])}"]
            else:
                found += _differences(left[key], right[key], where, ignore)
        return found
    if isinstance(expected, list) and isinstance(actual, list):
        before, after = cast("list[object]", expected), cast("list[object]", actual)
        found = []
        for index, (old, new) in enumerate(zip(before, after, strict=False)):
            found += _differences(old, new, f"{path}[{index}]", ignore)
        if len(before) != len(after):
            found.append(f"{path}: expected {len(before)} item(s), got {len(after)}")
        return found
    if was != now or not same_type:
        return [f"{path or '(request)'}: expected {_show(was)}, got {_show(now)}"]
    return []


def _show(value: object, width: int = 200) -> str:
    shown = json.dumps(value, ensure_ascii=False)
    return shown if len(shown) <= width else f"{shown[: width - 1]}…"

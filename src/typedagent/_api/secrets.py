"""Credentials: whether a client's key can be sent at all, and their removal from the exceptions a failure keeps."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, Iterator
from typing import Any, Final, cast

__all__ = ["REDACTED", "SENSITIVE_HEADERS", "attribute", "credential_problem", "credentials", "scrub"]

REDACTED: Final = "[redacted]"

SENSITIVE_HEADERS: Final = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "cookie",
        "set-cookie",
        "x-goog-api-key",
        "x-amz-security-token",
    }
)
"""Headers whose values are credentials (compared in lower case)."""

_CREDENTIALS: Final = (
    ("api_key", "The API key (ANTHROPIC_API_KEY, or the client's api_key)"),
    ("auth_token", "The auth token (ANTHROPIC_AUTH_TOKEN, or the client's auth_token)"),
)
"""The SDK client's public credential attributes, and how a message names each."""

_LINE_BREAKS: Final = "\r\n"


def credentials(client: object) -> list[str]:
    """The API key and auth token ``client`` holds, if it exposes them as the SDK's clients do."""
    found: list[str] = []
    for name, _ in _CREDENTIALS:
        value = attribute(client, name)
        if isinstance(value, str) and value.strip():
            found.append(value)
    return found


def credential_problem(client: object) -> str | None:
    """Why the client's key or token cannot go into an HTTP header, if it cannot; the value is never quoted."""
    for name, label in _CREDENTIALS:
        value = attribute(client, name)
        if isinstance(value, str):
            problem = _format_problem(value)
            if problem is not None:
                return f"{label} {problem}"
    return None


@functools.lru_cache(maxsize=64)  # checked before every call: a key is checked once
def _format_problem(value: str) -> str | None:
    if not value.strip():
        return "is empty: set it to the key itself."
    ends, starts = value != value.rstrip(), value != value.lstrip()
    if ends and value[-1] in _LINE_BREAKS:
        return (
            "ends with a line break: a trailing newline is common when the key is read from a file or a mounted "
            "secret. Strip the whitespace from the key."
        )
    if ends or starts:
        what = _character(value[-1] if ends else value[0])
        return f"{'ends' if ends else 'starts'} with {what}. Strip the whitespace from the key."
    for position, character in enumerate(value, start=1):
        if not "\x21" <= character <= "\x7e":
            return (
                f"contains {_character(character)} (character {position} of {len(value)}), which no API key has: "
                "check that the key, and only the key, was copied."
            )
    return None


def _character(character: str) -> str:
    if character == " ":
        return "a space"
    if character in _LINE_BREAKS:
        return "a line break"
    if character == "\t":
        return "a tab"
    if ord(character) < 32 or ord(character) == 127:
        return "a control character"
    return "a non-ASCII character" if ord(character) > 127 else "whitespace"


def scrub(exc: BaseException, secrets: Iterable[str] = ()) -> None:
    """Remove credentials from ``exc`` and the exceptions chained to it, in place.

    The SDK's exceptions keep the request they failed on, and its response: their sensitive headers hold the
    key, which printing the exception's attributes or pickling a failure would otherwise write out. Those
    values become ``[redacted]``, and wherever one of them, or one of ``secrets``, is quoted in an exception's
    message or text attributes (an HTTP library refusing a header quotes its value), it is cut out too. Never
    raises: whatever an odd exception object refuses is left as it is.
    """
    chain = list(_chain(exc))
    found = {part for secret in secrets for part in _parts(secret)}
    for item in chain:
        for headers in _headers_of(item):
            with contextlib.suppress(Exception):
                for name in list(headers.keys()):
                    if str(name).lower() in SENSITIVE_HEADERS:
                        found.update(_parts(str(headers[name])))
                        headers[name] = REDACTED
    tokens = sorted(found, key=len, reverse=True)
    if tokens:
        for item in chain:
            with contextlib.suppress(Exception):
                _cut(item, tokens)


def _parts(secret: str) -> set[str]:
    """The secret, and each word of it long enough to be one (``Bearer sk-…`` quotes the key after a scheme)."""
    words = {secret.strip(), *secret.split()}
    return {word for word in words if len(word) >= 8}


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    while pending:
        item = pending.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        pending += [item.__cause__, item.__context__]


def _headers_of(item: BaseException) -> Iterator[Any]:
    """The header maps of the requests and responses an exception holds (an httpx-style ``headers`` each)."""
    for name in ("request", "response"):
        holder = attribute(item, name)
        for owner in (holder, attribute(holder, "request")):
            headers = attribute(owner, "headers")
            if hasattr(headers, "keys") and hasattr(headers, "__setitem__"):
                yield headers


def attribute(owner: object, name: str) -> Any:
    """``getattr(owner, name, None)``, but None when reading it raises anything (a property of a foreign object).

    httpx's ``Request``/``Response`` properties, for one, raise ``RuntimeError`` when what they read was never set.
    """
    try:
        return getattr(owner, name, None)
    except Exception:
        return None


def _cut(item: BaseException, tokens: list[str]) -> None:
    """Cut ``tokens`` out of the exception's message and attributes, and the bodies its request and response hold.

    An error ``body`` that echoes the request's headers (a proxy or gateway does) is copied without them, and a
    response keeps the text it read: that is cut too.
    """
    cleaned = tuple(_cleaned(arg, tokens) for arg in item.args)
    if any(new is not old for new, old in zip(cleaned, item.args, strict=True)):
        item.args = cleaned
    for name, value in list(getattr(item, "__dict__", {}).items()):
        with contextlib.suppress(Exception):  # an attribute that refuses the change keeps its value; the rest go on
            new = _cleaned(value, tokens)
            if new is not value:
                setattr(item, name, new)
    for holder in _http_messages_of(item):
        state = getattr(holder, "__dict__", {})
        for name in ("_content", "_text"):
            with contextlib.suppress(Exception):
                if name in state and (new := _cleaned(state[name], tokens)) is not state[name]:
                    state[name] = new


def _http_messages_of(item: BaseException) -> Iterator[object]:
    for name in ("request", "response"):
        holder = attribute(item, name)
        for owner in (holder, attribute(holder, "request")):
            if owner is not None:
                yield owner


_MAX_DEPTH: Final = 20


def _cleaned(value: object, tokens: list[str], depth: int = 0) -> Any:
    """``value`` with ``tokens`` cut out of its text: the same object when there is none (a container is copied)."""
    if isinstance(value, str):
        new = value
        for token in tokens:
            new = new.replace(token, REDACTED)
        return value if new == value else new
    if isinstance(value, bytes):
        raw = value
        for token in tokens:
            raw = raw.replace(token.encode(), REDACTED.encode())
        return value if raw == value else raw
    if depth >= _MAX_DEPTH:
        return value
    if isinstance(value, dict):
        mapping = cast("dict[object, object]", value)
        items = {key: _cleaned(item, tokens, depth + 1) for key, item in mapping.items()}
        return mapping if all(items[key] is mapping[key] for key in mapping) else items
    if isinstance(value, list | tuple):
        sequence = cast("list[object] | tuple[object, ...]", value)
        members = [_cleaned(item, tokens, depth + 1) for item in sequence]
        same = all(new is old for new, old in zip(members, sequence, strict=True))
        return sequence if same else (members if isinstance(sequence, list) else tuple(members))
    if hasattr(type(value), "__pydantic_fields__"):  # the SDK's error details: cleaned in place
        for name, item in list(getattr(value, "__dict__", {}).items()):
            new = _cleaned(item, tokens, depth + 1)
            if new is not item:
                object.__setattr__(value, name, new)
    return value

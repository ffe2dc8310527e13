"""Redaction of what a cassette must not hold: credentials, wherever a request or a response carries them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final, cast

from ._conversation import to_plain

__all__ = ["REDACTED", "client_secrets", "redact", "secrets_in"]

REDACTED: Final = "[REDACTED]"
_SECRET_KEYS: Final = frozenset(
    {
        "api_key",
        "api-key",
        "x-api-key",
        "anthropic_api_key",
        "auth_token",
        "authorization",
        "authorization_token",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-goog-api-key",
        "aws_secret_access_key",
        "aws_session_token",
        "x-amz-security-token",
    }
)
"""Keys whose value is a credential wherever they appear (compared in lower case)."""

_SECRET_PATTERN: Final = re.compile(r"sk-ant-[A-Za-z0-9_\-]+|Bearer\s+[A-Za-z0-9._~+/=\-]+")

_SECRET_NAME: Final = re.compile(
    r"token|secret|passw|auth|cookie|session|credential|signature|(^|[-_])(sig|key|code)($|[-_])", re.IGNORECASE
)
"""A header, MCP server field or URL query parameter named like a credential (``X-Custom-Token``, ``sig``)."""

_HEADER_MAPS: Final = frozenset({"headers", "extra_headers"})
"""Keys holding HTTP headers: any header named like a credential is one."""

_URL_PASSWORD: Final = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*://[^/?#@:]*):([^/?#@]*)@")
_URL_QUERY_VALUE: Final = re.compile(r"([?&;])([^=&#;]+)=([^&#;]*)")

_MIN_ECHOED: Final = 8
"""Credentials found at their place are also cut wherever else they appear, from this length (no false hits)."""


def redact(value: Any, secrets: Iterable[str] = ()) -> Any:
    """``value`` as JSON data with secrets replaced by ``"[REDACTED]"``.

    Redacted: the value of any key named like a credential (``api_key``, ``x-api-key``,
    ``authorization``, an MCP server's ``authorization_token``, cookies, cloud credentials; any
    letter case); in header maps (``extra_headers``) and ``mcp_servers`` entries, any field named like
    one (``X-Custom-Token``, ``X-Session-Id``), and the password and credential-like query parameters
    of an MCP server's URL; anything that looks like an Anthropic key (``sk-ant-…``) or a bearer
    token; and every string in ``secrets``, or found at one of those places, wherever it appears
    (an MCP token echoed in a message is cut too). Pydantic models are dumped to JSON first.
    """
    plain = to_plain(value)
    found = [*(secret for secret in secrets if secret), *secrets_in(plain)]
    return _redact(plain, sorted(set(found), key=len, reverse=True))


def secrets_in(value: Any) -> list[str]:
    """The credentials ``value`` (JSON data) holds at the places ``redact`` knows them by, long enough to search."""
    found: list[str] = []
    _collect(value, found, in_headers=False)
    return [secret for secret in found if len(secret) >= _MIN_ECHOED]


def client_secrets(client: object) -> list[str]:
    """Credentials the wrapped client holds, so they are redacted even where no pattern catches them."""
    found: list[str] = []
    for name in ("api_key", "auth_token"):
        value = getattr(client, name, None)
        if isinstance(value, str) and len(value) >= _MIN_ECHOED:
            found.append(value)
    return found


def _collect(value: Any, found: list[str], *, in_headers: bool) -> None:
    if isinstance(value, list):
        for item in cast("list[object]", value):
            _collect(item, found, in_headers=in_headers)
        return
    if not isinstance(value, dict):
        return
    for key, item in cast("dict[str, Any]", value).items():
        if isinstance(item, str) and (_secret_key(key) or (in_headers and _SECRET_NAME.search(key))):
            found.append(item)
        elif key == "mcp_servers" and isinstance(item, list):
            for server in cast("list[object]", item):
                _collect_server(server, found)
        else:
            _collect(item, found, in_headers=key.lower() in _HEADER_MAPS)


def _collect_server(server: object, found: list[str]) -> None:
    if not isinstance(server, dict):
        return
    for key, item in cast("dict[str, Any]", server).items():
        if key == "url" and isinstance(item, str):
            password = _URL_PASSWORD.match(item)
            found += [] if password is None else [password.group(2)]
            found += [match.group(3) for match in _URL_QUERY_VALUE.finditer(item) if _SECRET_NAME.search(match[2])]
        elif isinstance(item, str) and _SECRET_NAME.search(key):
            found.append(item)
        else:
            _collect(item, found, in_headers=key.lower() in _HEADER_MAPS)


def _secret_key(key: str) -> bool:
    return key.lower() in _SECRET_KEYS


def _redact(value: Any, secrets: list[str], *, place: str = "") -> Any:
    if isinstance(value, dict):
        mapping = cast("dict[str, Any]", value)
        return {key: _redact_field(key, item, secrets, place) for key, item in mapping.items()}
    if isinstance(value, list):
        inner = "server" if place == "mcp_servers" else place
        return [_redact(item, secrets, place=inner) for item in cast("list[object]", value)]
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return _SECRET_PATTERN.sub(REDACTED, value)
    return value


def _redact_field(key: str, item: Any, secrets: list[str], place: str) -> Any:
    """One field of a mapping at ``place`` (``"headers"``, ``"server"`` for an MCP server entry, or ``""``)."""
    if _secret_key(key):
        return REDACTED
    if isinstance(item, str) and place in ("headers", "server") and _SECRET_NAME.search(key):
        return REDACTED
    if place == "server" and key == "url" and isinstance(item, str):
        item = _URL_PASSWORD.sub(rf"\1:{REDACTED}@", item)
        item = _URL_QUERY_VALUE.sub(
            lambda match: f"{match[1]}{match[2]}={REDACTED}" if _SECRET_NAME.search(match[2]) else match[0], item
        )
    if key.lower() in _HEADER_MAPS:
        return _redact(item, secrets, place="headers")
    return _redact(item, secrets, place=key if key == "mcp_servers" else "")

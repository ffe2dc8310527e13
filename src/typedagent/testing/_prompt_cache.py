"""Anthropic's prompt cache, simulated from its documented rules: the usage a request would report, and its 400s.

The rules (https://platform.claude.com/docs/en/build-with-claude/prompt-caching): the prompt is ``tools``, then
``system``, then ``messages``, one position per top-level block; a breakpoint is a block with ``cache_control`` or
the last cacheable block when the request has a top-level ``cache_control``; a request writes one entry per
breakpoint (a hash of the prompt up to it) and reads the longest entry an earlier request wrote that it finds
looking back at most 20 positions from each breakpoint; a prefix shorter than the model's minimum is not cached;
entries live 5 minutes or 1 hour from the start of the last request that wrote or read them. Changing
``tool_choice``, the thinking settings or whether images are present starts the messages' cache afresh; the web
search and web fetch tools' presence, the system prompt's. Tokens are estimated from the JSON of each block
(``BYTES_PER_TOKEN`` bytes a token), the way typedagent estimates a prefix.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, cast

from .._run.caching import BYTES_PER_TOKEN, LOOKBACK_BLOCKS, MAX_BREAKPOINTS, minimum_cacheable_tokens

__all__ = ["CacheRefusal", "PromptCacheSimulator"]

TTL_SECONDS: Final = {"5m": 300.0, "1h": 3600.0}
_UNCACHEABLE: Final = frozenset({"thinking", "redacted_thinking"})


class CacheRefusal(Exception):
    """A request the API refuses for its breakpoints (HTTP 400 ``invalid_request_error``)."""


@dataclass(slots=True)
class _Position:
    digest: bytes
    tokens: float
    """Tokens up to and including this block."""
    marker: str | None
    """The TTL of this block's ``cache_control``, if it has one."""
    cacheable: bool
    kind: str


@dataclass(slots=True)
class _Entry:
    expires: float
    ttl: str


@dataclass(slots=True)
class PromptCacheSimulator:
    """The cache of one workspace: its entries, and the usage each request reports.

    ``clock`` gives the time in seconds (monotonic by default); ``minimum_tokens`` the minimum cacheable length of
    a model.
    """

    clock: Callable[[], float] = time.monotonic
    minimum_tokens: Callable[[str], int] = minimum_cacheable_tokens
    entries: dict[bytes, _Entry] = field(default_factory=dict[bytes, _Entry])

    def usage(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The input side of the usage the API would report for ``params``; the cache is updated as it would be.

        Raises:
            CacheRefusal: the request's breakpoints break the API's rules.
        """
        now = self.clock()
        positions = _positions(params)
        breakpoints = _breakpoints(positions, params.get("cache_control"))
        total = positions[-1].tokens if positions else 0.0
        minimum = self.minimum_tokens(str(params.get("model", "")))
        hit: int | None = None
        for index, _ttl in breakpoints:
            for back in range(index, max(index - LOOKBACK_BLOCKS, -1), -1):
                entry = self.entries.get(positions[back].digest)
                if entry is not None and entry.expires > now:
                    hit = back if hit is None else max(hit, back)
                    break
        read = positions[hit].tokens if hit is not None else 0.0
        eligible = [(index, ttl) for index, ttl in breakpoints if positions[index].tokens >= minimum]
        written = max(read, positions[eligible[-1][0]].tokens) if eligible else read
        hours = [positions[index].tokens for index, ttl in eligible if ttl == "1h" and positions[index].tokens > read]
        one_hour_end = max(hours) if hours else read
        if hit is not None:
            entry = self.entries[positions[hit].digest]
            entry.expires = max(entry.expires, now + TTL_SECONDS[entry.ttl])
        for index, ttl in eligible:
            old = self.entries.get(positions[index].digest)
            kept = "1h" if ttl == "1h" or (old is not None and old.ttl == "1h") else "5m"
            expires = max(now + TTL_SECONDS[ttl], old.expires if old is not None else 0.0)
            self.entries[positions[index].digest] = _Entry(expires=expires, ttl=kept)
        one_hour = round(one_hour_end) - round(read)
        five_minutes = round(written) - round(one_hour_end)
        return {
            "input_tokens": round(total) - round(written),
            "cache_creation_input_tokens": one_hour + five_minutes,
            "cache_read_input_tokens": round(read),
            "cache_creation": {"ephemeral_5m_input_tokens": five_minutes, "ephemeral_1h_input_tokens": one_hour},
        }


def _positions(params: Mapping[str, Any]) -> list[_Position]:
    """The request's prompt, one position per top-level block, each with the hash of the prompt up to it."""
    positions: list[_Position] = []
    state = {"digest": _hash(b"model", str(params.get("model")).encode(), str(params.get("speed")).encode())}
    tokens = 0.0

    def add(kind: str, block: Mapping[str, Any], cacheable: bool) -> None:
        nonlocal tokens
        canonical = _canonical(block)
        state["digest"] = _hash(state["digest"], kind.encode(), canonical)
        tokens += len(canonical) / BYTES_PER_TOKEN
        marker = block.get("cache_control")
        ttl = cast("Mapping[str, Any]", marker).get("ttl", "5m") if isinstance(marker, Mapping) else None
        positions.append(_Position(state["digest"], tokens, ttl, cacheable, kind))

    tools = [cast("Mapping[str, Any]", tool) for tool in params.get("tools") or () if isinstance(tool, Mapping)]
    for tool in tools:
        if not tool.get("defer_loading"):
            add("tool", tool, True)
    searches = sorted(str(tool.get("type")) for tool in tools if str(tool.get("type", "")).startswith("web_"))
    state["digest"] = _hash(state["digest"], b"system", json.dumps(searches).encode())
    for block in _blocks(params.get("system")):
        add("system", block, True)
    messages = [cast("Mapping[str, Any]", m) for m in params.get("messages") or () if isinstance(m, Mapping)]
    images = any(block.get("type") == "image" for message in messages for block in _blocks(message.get("content")))
    config: object = params.get("output_config")
    effort: object = cast("Mapping[str, Any]", config).get("effort") if isinstance(config, Mapping) else None
    salt: list[object] = [params.get("tool_choice"), params.get("thinking"), effort, images]
    state["digest"] = _hash(state["digest"], b"messages", json.dumps(salt, sort_keys=True).encode())
    for message in messages:
        for block in _blocks(message.get("content")):
            kind = str(block.get("type"))
            cacheable = kind not in _UNCACHEABLE and not (kind == "text" and not block.get("text"))
            add(str(message.get("role")), block, cacheable)
    return positions


def _breakpoints(positions: Sequence[_Position], automatic: object) -> list[tuple[int, str]]:
    """The request's breakpoints (position, TTL), the automatic one included, checked as the API checks them.

    Raises:
        CacheRefusal: more than four, a 1-hour one after a 5-minute one, or one on a thinking block.
    """
    found = [(index, position.marker) for index, position in enumerate(positions) if position.marker is not None]
    for index, _ttl in found:
        if not positions[index].cacheable:
            raise CacheRefusal(f"cache_control cannot be set on a {positions[index].kind} thinking block.")
    breakpoints: list[tuple[int, str]] = found
    if isinstance(automatic, Mapping):
        ttl = str(cast("Mapping[str, Any]", automatic).get("ttl", "5m"))
        target = next((i for i in range(len(positions) - 1, -1, -1) if positions[i].cacheable), None)
        explicit = dict(breakpoints).get(target) if target is not None else None
        if target is not None and explicit is None:
            if len(breakpoints) >= MAX_BREAKPOINTS:
                raise CacheRefusal(
                    f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided, and the request "
                    "already has 4: no slots left for automatic caching."
                )
            breakpoints = sorted([*breakpoints, (target, ttl)])
        elif explicit is not None and explicit != ttl:
            raise CacheRefusal("The automatic cache_control's ttl differs from the ttl of the last block's own.")
    if len(breakpoints) > MAX_BREAKPOINTS:
        raise CacheRefusal(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {len(breakpoints)}."
        )
    ttls = [ttl for _, ttl in breakpoints]
    if "1h" in ttls and "5m" in ttls[: len(ttls) - ttls[::-1].index("1h")]:
        raise CacheRefusal("A cache_control with ttl '1h' cannot come after one with ttl '5m'.")
    return breakpoints


def _blocks(content: object) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if not isinstance(content, list):
        return []
    return [cast("Mapping[str, Any]", block) for block in cast("list[object]", content) if isinstance(block, Mapping)]


def _canonical(value: object) -> bytes:
    """The block as sent (keys in their order), without ``cache_control``: markers are not part of the prefix."""
    return json.dumps(_unmarked(value), separators=(",", ":"), ensure_ascii=False).encode()


def _unmarked(value: object) -> object:
    if isinstance(value, Mapping):
        items = cast("Mapping[str, object]", value).items()
        return {key: _unmarked(item) for key, item in items if key != "cache_control"}
    if isinstance(value, list):
        return [_unmarked(item) for item in cast("list[object]", value)]
    return value


def _hash(*parts: bytes) -> bytes:
    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.digest()

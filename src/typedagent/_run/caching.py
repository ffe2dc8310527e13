"""Prompt caching: where a request's cache breakpoints go, within the API's four.

Two breakpoints by default (https://platform.claude.com/docs/en/build-with-claude/prompt-caching):

- the **static prefix**: ``cache_control`` on the system prompt's last text block, which caches the tools and the
  system prompt together, so every run of the agent reads them (``prompt_caching="1h"`` gives it the 1-hour TTL);
  a prefix a little under the model's minimum cacheable length (three quarters of it or more) is padded up to the
  minimum with lines that say they carry no instruction, since the API caches nothing shorter; a shorter one is
  left unmarked;
- the **conversation**: the top-level ``cache_control`` (automatic caching), which the API puts on the last block,
  so each call reads what the call before it wrote.

Per request (``placed``) a third one marks the previous call's last block when a call added more blocks than
the API looks back over (20), so that call's entry is still found; a request that changes ``tool_choice`` (the
forced last iteration) drops the conversation's breakpoint, whose entry nothing could read again; and the
user's own breakpoints (in the prompt, the history, a tool or server tool definition) count against the four:
ours give way, the static prefix's TTL follows theirs (1-hour entries must come before 5-minute ones).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

from .breakpoints import MarkerMemo, ttl_of, user_markers

if TYPE_CHECKING:
    from .._agent.definition import PromptCaching

__all__ = [
    "BYTES_PER_TOKEN",
    "LOOKBACK_BLOCKS",
    "MAX_BREAKPOINTS",
    "PAD_FROM",
    "cache_padding",
    "cached_request",
    "estimated_tokens",
    "minimum_cacheable_tokens",
    "placed",
    "within_breakpoints",
]

MAX_BREAKPOINTS: Final = 4
"""Blocks with ``cache_control`` the API accepts in one request, the automatic breakpoint included."""
LOOKBACK_BLOCKS: Final = 20
"""Positions the API checks, back from a breakpoint (itself included), for an entry an earlier request wrote."""
BYTES_PER_TOKEN: Final = 3.5
"""JSON bytes per token, for estimates: a prefix estimated at the minimum or more is marked."""

PAD_FROM: Final = 0.75
"""A static prefix estimated at this share of the model's minimum cacheable length or more, but under it, is padded
up to the minimum and marked: every later request and run then reads it at a tenth of the input price, which pays
for the padding (written once at 1.25x) from the second request on. A shorter prefix is left unmarked."""
PADDING_HEADER: Final = (
    "(The numbered lines below carry no instruction: they only make this system prompt long enough for the prompt "
    "cache, so that every request reads it from the cache instead of paying for it again.)"
)

DEFAULT_MINIMUM_TOKENS: Final = 1024
"""The minimum cacheable length of a model the table below does not know (most current models' minimum)."""
MINIMUM_TOKENS: Final[tuple[tuple[re.Pattern[str], int], ...]] = (
    (re.compile(r"(opus|fable|mythos)-5(?!\d)"), 512),
    (re.compile(r"(opus-4-(8|1)|sonnet-(5|4-6|4-5))(?!\d)|(opus|sonnet)-4(?!-\d(?!\d))"), 1024),
    (re.compile(r"opus-4-7(?!\d)|mythos-preview|3-5-haiku|haiku-3-5"), 2048),
    (re.compile(r"(opus-4-(6|5)|haiku-4-5)(?!\d)"), 4096),
)
"""The minimum cacheable prompt length per model family, from the prompt-caching page's table (checked
2026-11-26); matched anywhere in the id, so dated ids and the Bedrock and Vertex spellings find their family."""

_CACHEABLE: Final = frozenset(
    {
        "text",
        "image",
        "document",
        "search_result",
        "tool_use",
        "tool_result",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "mcp_tool_use",
        "mcp_tool_result",
        "container_upload",
    }
)
"""Block types that can carry ``cache_control`` (thinking blocks cannot)."""


@functools.lru_cache(maxsize=1024)  # every execution asks
def minimum_cacheable_tokens(model: str) -> int:
    """The shortest prompt prefix ``model`` caches, in tokens (``DEFAULT_MINIMUM_TOKENS`` for an unknown model)."""
    return next((minimum for pattern, minimum in MINIMUM_TOKENS if pattern.search(model)), DEFAULT_MINIMUM_TOKENS)


def estimated_tokens(*parts: object) -> int:
    """Tokens estimated from the compact JSON of ``parts`` (``BYTES_PER_TOKEN`` bytes each)."""
    return int(sum(_json_size(part) for part in parts) / BYTES_PER_TOKEN)


def _prefix_tokens(tools: object, system: str, origin: object) -> int:
    """``estimated_tokens(tools, system)``, the tools' size remembered by their ``origin`` when there is one."""
    if origin is None:
        return estimated_tokens(tools, system)
    known = _TOOL_SIZES.get(id(origin))
    if known is None or known[0] is not origin:
        known = (origin, _json_size(tools))
        if len(_TOOL_SIZES) >= 256:
            _TOOL_SIZES.clear()
        _TOOL_SIZES[id(origin)] = known
    return int((known[1] + _json_size(system)) / BYTES_PER_TOKEN)


_TOOL_SIZES: dict[int, tuple[object, int]] = {}
"""The JSON size of each agent's tool definitions, by the ``id`` of the agent's own (kept, so it is not reused)."""


def _json_size(part: object) -> int:
    return len(json.dumps(part, separators=(",", ":"), ensure_ascii=False).encode())


def ephemeral(ttl: str | None = None) -> dict[str, str]:
    """A ``cache_control`` value: the default 5-minute TTL unless ``ttl`` is ``"1h"``."""
    return {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}


def cached_request(params: dict[str, Any], caching: PromptCaching, origin: object = None) -> dict[str, Any]:
    """``params`` (built once per execution) with the two default breakpoints, as ``caching`` says.

    Called again once connected toolsets have put their tools in ``params``: a prefix their tools bring to the
    minimum is then marked (a system prompt marked already stays as it is).

    The static prefix is marked when tools and system prompt are estimated at the model's minimum cacheable
    length or more: the system prompt then goes as one text block carrying ``cache_control`` (a plain string
    cannot carry it). The conversation's breakpoint is the top-level ``cache_control``. ``origin``: the agent's
    own (immutable) tool definitions, of which ``params``' tools are a copy, so their size is measured once.
    """
    if caching is False:
        return params
    system = params.get("system")
    tools: object = params.get("tools") or []
    minimum = minimum_cacheable_tokens(str(params.get("model", "")))
    if isinstance(system, str) and system:
        estimate = _prefix_tokens(tools, system, origin)
        if minimum * PAD_FROM <= estimate < minimum:
            system += cache_padding(minimum - estimate)
        if estimate >= minimum * PAD_FROM:
            params["system"] = [{"type": "text", "text": system, "cache_control": ephemeral(_ttl(caching))}]
    params["cache_control"] = ephemeral()
    return params


def cache_padding(tokens: int) -> str:
    """Text that brings a static prefix ``tokens`` short of the model's minimum up to it (with a 10% margin).

    Numbered lines, which tokenize about as the estimate counts (some 3.5 bytes a token), after a header telling
    the model they carry no instruction. The same shortfall gives the same text, so every run reads the same prefix.
    """
    needed = tokens * BYTES_PER_TOKEN * 1.1
    lines = [PADDING_HEADER]
    size = len(PADDING_HEADER)
    while size < needed:
        lines.append(f"Cache padding line {len(lines)}.")
        size += len(lines[-1]) + 1
    return "\n\n" + "\n".join(lines)


def _ttl(caching: PromptCaching) -> str | None:
    return caching if isinstance(caching, str) else None


def placed(sent: dict[str, Any], usual: Mapping[str, Any], memo: MarkerMemo | None = None) -> dict[str, Any]:
    """This call's breakpoints: ``sent`` as is, or a copy with its markers moved (the conversation stays unchanged).

    ``usual`` is the execution's request: a call whose ``tool_choice`` differs from it (the forced last iteration)
    writes no conversation entry, since the change invalidates the messages' cache for this call only. ``memo``
    keeps what earlier calls found in the conversation's messages, so each message is looked through once; it is
    used only when ``sent`` holds the conversation's own list (history processors send copies).
    """
    auto = "cache_control" in sent
    static = _static_marker(sent)
    if not (auto or static):
        return sent
    messages = cast("list[dict[str, Any]]", sent.get("messages") or [])
    if memo is not None and messages is not usual.get("messages"):
        memo = None
    others = user_markers(sent.get("tools"), messages) if memo is None else memo.markers(sent.get("tools"), messages)
    marked_messages = bool(others) and any(where == "messages" for where, _ in others)
    keep_auto = auto and sent.get("tool_choice") == usual.get("tool_choice")
    keep_auto = keep_auto and not (marked_messages and _last_marked(messages))
    tail = _tail_needing_marker(messages) if keep_auto else None
    if not others and keep_auto == auto and tail is None:
        return sent  # no breakpoint but typedagent's, the usual case: all of them fit, as they are
    budget = MAX_BREAKPOINTS - len(others)
    keep_auto = keep_auto and budget >= 1
    keep_static = static is not None and budget >= 1 + keep_auto
    tail = tail if budget >= 1 + keep_auto + keep_static else None
    ttl = _static_ttl(static, others) if keep_static else None
    if keep_auto == auto and keep_static == (static is not None) and tail is None and ttl == ttl_of(static):
        return sent
    changed = dict(sent)
    if not keep_auto:
        changed.pop("cache_control", None)
    if static is not None and not (keep_static and ttl == ttl_of(static)):
        block = {key: value for key, value in sent["system"][-1].items() if key != "cache_control"}
        if keep_static:
            block["cache_control"] = ephemeral(ttl)
        changed["system"] = [*sent["system"][:-1], block]
    if tail is not None:
        changed["messages"] = _marked(messages, tail)
    return changed


def _static_marker(sent: Mapping[str, Any]) -> Mapping[str, Any] | None:
    system = sent.get("system")
    if isinstance(system, list) and system:
        last = cast("list[object]", system)[-1]
        if type(last) is dict or isinstance(last, Mapping):
            marker = cast("Mapping[str, Any]", last).get("cache_control")
            return cast("Mapping[str, Any]", marker) if marker is not None and isinstance(marker, Mapping) else None
    return None


def _static_ttl(static: Mapping[str, Any] | None, others: Sequence[tuple[str, str | None]]) -> str | None:
    """The static prefix's TTL: the one asked for, made to fit the API's order (1-hour entries before 5-minute ones).

    A 1-hour breakpoint after it (in the messages) makes it 1-hour too; a 5-minute one before it (on a tool) makes
    it 5-minute.
    """
    if any(where == "messages" and ttl == "1h" for where, ttl in others):
        return "1h"
    if any(where == "tools" and ttl is None for where, ttl in others):
        return None
    return ttl_of(static)


def _last_marked(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the block the automatic breakpoint would go on carries ``cache_control`` already.

    The API ignores the automatic breakpoint there when the TTLs agree and refuses the request when they differ:
    either way the explicit one is enough.
    """
    for message in reversed(messages):
        content = message.get("content")
        if isinstance(content, str):
            return False
        for block in reversed(cast("list[Any]", content or [])):
            if (type(block) is dict or isinstance(block, Mapping)) and _cacheable(cast("Mapping[str, Any]", block)):
                marker = cast("Mapping[str, Any]", block).get("cache_control")
                return isinstance(marker, Mapping)  # a breakpoint, as ``breakpoints.block_markers`` counts them
    return False


def _cacheable(block: Mapping[str, Any]) -> bool:
    return block.get("type") in _CACHEABLE and not (block.get("type") == "text" and not block.get("text"))


def _tail_needing_marker(messages: Sequence[Mapping[str, Any]]) -> tuple[int, int] | None:
    """The previous call's last block (message, block index) when this call added too many blocks to look back to.

    The previous call ended before the last assistant turn; this call adds that turn and what follows. When those
    are ``LOOKBACK_BLOCKS`` blocks or more, the automatic breakpoint's lookback cannot reach the previous call's
    entry: a breakpoint on its last block reads it.
    """
    added = 0
    for index in range(len(messages) - 1, -1, -1):
        content = messages[index].get("content")
        added += 1 if isinstance(content, str) else len(cast("list[Any]", content or []))
        if messages[index].get("role") == "assistant":
            break
    else:
        return None
    if added < LOOKBACK_BLOCKS:
        return None
    for previous in range(index - 1, -1, -1):
        content = messages[previous].get("content")
        if isinstance(content, str):
            return None  # a string turn cannot carry the marker; no call of typedagent's ends in one
        blocks = cast("list[Any]", content or [])
        for position in range(len(blocks) - 1, -1, -1):
            block = blocks[position]
            if (type(block) is dict or isinstance(block, Mapping)) and _cacheable(cast("Mapping[str, Any]", block)):
                return previous, position
    return None


def _marked(messages: list[dict[str, Any]], where: tuple[int, int]) -> list[dict[str, Any]]:
    """A copy of ``messages`` (sharing every untouched message) whose block at ``where`` carries a breakpoint."""
    index, position = where
    blocks = list(messages[index]["content"])
    blocks[position] = {**blocks[position], "cache_control": ephemeral()}
    copied = list(messages)
    copied[index] = {**messages[index], "content": blocks}
    return copied


def within_breakpoints(messages: list[Any], tools: object) -> tuple[list[Any], int]:
    """``messages`` with their earliest breakpoints taken off until the user's (tools', messages') fit in four.

    For a history a processor rewrote: the API refuses a request with more than ``MAX_BREAKPOINTS``. The latest
    breakpoints stay (they cover the longest prefixes); the messages given are not changed. Also returns how many
    were taken off.
    """
    excess = len(user_markers(tools, messages)) - MAX_BREAKPOINTS
    if excess <= 0:
        return messages, 0
    left = [excess]
    kept = [
        _unmarked(cast("Mapping[str, Any]", message), left) if isinstance(message, Mapping) else message
        for message in messages
    ]
    return kept, excess


def _unmarked(entry: Mapping[str, Any], left: list[int]) -> dict[str, Any]:
    """A copy of ``entry`` (a message or a block) without its first ``left[0]`` breakpoints (``left`` counts down)."""
    copied = dict(entry)
    if left[0] and isinstance(copied.get("cache_control"), Mapping):
        del copied["cache_control"]
        left[0] -= 1
    content = copied.get("content")
    if left[0] and isinstance(content, list | tuple):
        blocks = cast("list[object]", content)
        copied["content"] = [
            _unmarked(cast("Mapping[str, Any]", block), left) if isinstance(block, Mapping) else block
            for block in blocks
        ]
    return copied

"""The response check: every field the loop reads has the right shape, and no content is too deep to send back."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

import pydantic

from .._shared.results import TokenUsage

if TYPE_CHECKING:
    from anthropic.types import Message

__all__ = ["MAX_CONTENT_DEPTH", "MalformedResponse", "check_response", "readable_usage"]

MAX_CONTENT_DEPTH: Final = 100
"""How deep a content block may nest, the block itself counting as the first level.

Far more than any real answer needs, and far less than what handles content afterwards can take: pydantic
serialises about 255 levels, and ``copy.deepcopy`` and the SDK's JSON encoder stop at Python's recursion limit.
"""

_CALLS: Final = ("tool_use", "server_tool_use", "mcp_tool_use")
"""The blocks of a tool call: the loop (or the tool hooks, for the calls the API carried out) reads their id,
name and input."""

_COUNTERS: Final = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


_UNTRUSTED: Final = (
    "The model's content cannot be sent back to the API, so nothing of this response was kept. Text the model read "
    "(the prompt, a document, a tool result) can steer it into such output: treat those inputs as untrusted."
)


class MalformedResponse(Exception):
    """The client returned something the loop cannot read as an ``anthropic.types.Message``, or send back.

    Args:
        message: What is wrong, as a sentence about the response.
        advice: What to do, when it differs from the advice for a body that is not a Messages API response.
    """

    def __init__(self, message: str, advice: str | None = None) -> None:
        super().__init__(message)
        self.advice = advice


def check_response(response: object) -> Message:
    """Return ``response`` if the loop can read it and send its content back, else raise ``MalformedResponse``.

    The SDK builds responses without validating them, so a body that is JSON but not a Message (a proxy's
    error page, a truncated or foreign payload, a hostile one) arrives as a half-filled object. Checked here,
    before anything else touches it: the content blocks (each a content block object with a type; a
    ``tool_use`` with an id, a name and an input object, its id unique in the response; a ``text`` with a text
    string), the stop reason, the usage, and that no block nests deeper than ``MAX_CONTENT_DEPTH`` or holds
    what JSON cannot carry.
    Block types the loop does not know pass: newer APIs add them.

    Raises:
        MalformedResponse: a field the loop reads is missing or has the wrong type, or content cannot be sent back.
    """
    content = getattr(response, "content", None)
    if not isinstance(content, list):
        raise MalformedResponse(
            f"the client returned a {type(response).__name__} without a list of content blocks, "
            "not a Messages API response."
        )
    # Any, not the list[Unknown] isinstance leaves: each block is checked field by field below.
    blocks: list[Any] = content  # pyright: ignore[reportUnknownVariableType]
    for index, block in enumerate(blocks):
        _check_block(index, block)
    if len(blocks) > 1:
        _check_unique_tool_use_ids(blocks)
    stop_reason = getattr(response, "stop_reason", None)
    if stop_reason is not None and not isinstance(stop_reason, str):
        raise MalformedResponse(f"the response's stop_reason is a {type(stop_reason).__name__}, not a string.")
    if not _usage_readable(getattr(response, "usage", None)):
        raise MalformedResponse("the response's usage is not a set of token counts (integers).")
    return cast("Message", response)


def readable_usage(response: object) -> TokenUsage | None:
    """The response's token counts, or None when its usage has the wrong shape (a missing usage counts nothing)."""
    usage = getattr(response, "usage", None)
    if not _usage_readable(usage):
        return None
    return TokenUsage.from_usage(usage)


def _usage_readable(usage: Any) -> bool:
    """Whether a response's usage is a set of token counts (a missing usage is: it counts nothing)."""
    if usage is None:
        return True
    found: object = getattr(usage, "__dict__", None)
    if type(found) is dict:
        # The SDK's Usage, as almost every response has it: two int counters, two optional ones.
        get = cast("dict[str, object]", found).get
        writes, reads = get("cache_creation_input_tokens"), get("cache_read_input_tokens")
        if (
            type(get("input_tokens")) is int
            and type(get("output_tokens")) is int
            and (writes is None or type(writes) is int)
            and (reads is None or type(reads) is int)
        ):
            return True
    if not (hasattr(usage, "input_tokens") and hasattr(usage, "output_tokens")):
        return False
    for name in _COUNTERS:
        value = getattr(usage, name, None)
        if value is not None and (type(value) is not int and (not isinstance(value, int) or isinstance(value, bool))):
            return False
    return True


def _check_unique_tool_use_ids(content: Sequence[Any]) -> None:
    # Each tool_use must be answered by exactly one tool_result, and the API refuses a turn that repeats an
    # id: a response that does cannot be kept or answered, so none of its calls runs.
    seen: set[str] = set()
    for block in content:
        if block.type in _CALLS:
            if block.id in seen:
                raise MalformedResponse(
                    f"two {block.type} blocks have the id {block.id!r}; tool call ids must be unique in a response."
                )
            seen.add(block.id)


def _check_block(index: int, block: object) -> None:
    kind = getattr(block, "type", None)
    if not isinstance(kind, str):
        raise MalformedResponse(f"content block {index} of the response has no type.")
    if not _is_model(type(block)):
        raise MalformedResponse(f"content block {index} of the response is a {type(block).__name__}, not a block.")
    if kind in _CALLS and not (
        isinstance(getattr(block, "id", None), str)
        and isinstance(getattr(block, "name", None), str)
        and isinstance(getattr(block, "input", None), dict)
    ):
        raise MalformedResponse(f"{kind} block {index} of the response lacks an id, a name or an input object.")
    if kind == "text" and not isinstance(getattr(block, "text", None), str):
        raise MalformedResponse(f"text block {index} of the response has no text string.")
    problem = None if _plainly_sendable(block) else _content_problem(block)
    if problem is not None:
        raise MalformedResponse(f"content block {index} of the response {problem}.", _UNTRUSTED)


def _is_model(kind: type) -> bool:
    """Whether ``kind`` is a pydantic model class, remembered per class (``isinstance`` goes through ``ABCMeta``)."""
    known = _MODEL_CLASSES.get(kind)
    if known is None:
        known = _MODEL_CLASSES[kind] = issubclass(kind, pydantic.BaseModel)
    return known


_MODEL_CLASSES: dict[type, bool] = {}
"""Content block classes seen: a response's blocks are of a handful of SDK classes."""


def _plainly_sendable(block: object) -> bool:
    """Whether the block surely has nothing to report, found by the JSON encoder (in C), without the walk.

    The encoder refuses a non-finite number (``allow_nan=False``) and anything that is not data; pydantic models
    (the block, the models it holds) are opened into their fields and extras, as the walk does. Its text then
    fails to encode as UTF-8 if it holds a lone surrogate, and a value nests no deeper than the text has
    brackets. So a block that encodes, and whose text has fewer brackets than ``MAX_CONTENT_DEPTH``, can be
    sent back; anything else goes to ``_content_problem``'s walk, which says what is wrong, or passes it.
    """
    try:
        text = _STRICT_JSON.encode(block)
        text.encode("utf-8")
    except (TypeError, ValueError, RecursionError):  # not data, not finite, not valid Unicode: the walk tells which
        return False
    return text.count("{") + text.count("[") <= MAX_CONTENT_DEPTH


def _fields(value: object) -> dict[str, object]:
    """A pydantic model's fields and extras, for the encoder; anything else it cannot encode is refused."""
    if not _is_model(type(value)):
        raise TypeError(type(value).__name__)
    fields: dict[str, object] = vars(value)
    extra: dict[str, object] | None = getattr(value, "__pydantic_extra__", None)
    return {**fields, **extra} if extra else fields


_STRICT_JSON: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=_fields)


def _content_problem(block: object) -> str | None:
    """Why the block's content cannot be sent back, if it cannot; walked without recursion, however deep it is."""
    pending: list[tuple[object, int]] = [(block, 1)]
    pop, push = pending.pop, pending.append
    while pending:
        value, depth = pop()
        kind = type(value)
        if kind is str:  # the common case first: this walk runs on every response
            if not cast("str", value).isascii() and not _encodable(cast("str", value)):
                return "holds text with an unpaired surrogate (an escape like \\ud800), which is not valid Unicode"
            continue
        if value is None or kind is int or kind is bool:
            continue
        if isinstance(value, float):
            if not math.isfinite(value):
                return "holds a number that is not finite (NaN or infinity), which JSON cannot carry"
            continue
        children = _children(value)
        if children is None:
            continue
        if depth > MAX_CONTENT_DEPTH:
            return f"is nested more than {MAX_CONTENT_DEPTH} levels deep, deeper than typedagent sends back to the API"
        for child in children:
            push((child, depth + 1))
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _children(value: object) -> Iterable[object] | None:
    if isinstance(value, dict):
        mapping = cast("dict[object, object]", value)
        return [*mapping.keys(), *mapping.values()]
    if isinstance(value, list | tuple):
        return cast("Sequence[object]", value)
    if isinstance(value, pydantic.BaseModel):
        extra: dict[str, object] = getattr(value, "__pydantic_extra__", None) or {}
        return [*vars(value).values(), *extra.values()]
    return None

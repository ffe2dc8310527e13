"""JSON read from the model's text: the answer of a native or prompted agent, whole or still streaming.

Native output is the JSON document itself; prompted output may come in a Markdown fence or with prose around it.
Both are read the same way: the whole text, else the first fenced block, else the first JSON object in the text.
A text that holds no JSON object is a problem the model is told about, never an exception.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, cast

from .._agent.output import WRAPPER_KEY

__all__ = ["MAX_STARTS", "ReadJson", "complete_object", "json_start", "read_json", "turn_text"]

MAX_STARTS: Final = 16
"""Opening braces tried as the start of the JSON object in prose: reading stays linear in the text's length."""
_FENCE: Final = "```"
_OPENS_OBJECT: Final = re.compile(r'\{[ \t\n\r]*(?:["}]|\Z)')
"""A brace that opens a JSON object: a key or the closing brace comes next, or nothing yet (still streaming)."""
_NOT_ANSWER: Final = frozenset({"thinking", "redacted_thinking"})
"""Blocks that may come before the answer's text without being part of the turn's tool work."""


@dataclass(frozen=True, slots=True)
class ReadJson:
    """What a text holds: a JSON object, or the problem with it (phrased for the model)."""

    value: dict[str, Any] | None
    problem: str | None = None


def turn_text(content: Iterable[Any]) -> str | None:
    """The text a response ends its turn with: its text blocks after its last block of another kind, joined.

    Thinking before the text is no part of it; a tool call or a server tool's result before it ends what came
    earlier. None when the response ends with no text but whitespace.
    """
    texts: list[str] = []
    for block in content:
        if block.type == "text":
            texts.append(block.text)
        elif block.type not in _NOT_ANSWER:
            texts = []
    text = "".join(texts)
    return text if text.strip() else None


def read_json(text: str, *, wrapped: bool = False) -> ReadJson:
    """The JSON object ``text`` holds: the whole text, its first fenced block, or the first object in its prose.

    ``wrapped``: the output is not an object, and its value goes in the answer's ``"value"`` (said when the answer is
    a bare value).
    """
    stripped = text.strip()
    value, error = _loads(stripped)
    if error is None:
        return _object(value, wrapped)
    fenced = _fenced(text)
    if fenced is not None:
        value, fenced_error = _loads(fenced)
        if fenced_error is None:
            return _object(value, wrapped)
    found = _first_object(text)
    if found is not None:
        return found
    if stripped.startswith(("{", "[")):
        return ReadJson(None, f"the answer is not valid JSON ({error}): send the complete answer as one JSON object")
    if "{" in text:
        return ReadJson(None, "the JSON object in the answer is not valid JSON: send the answer as one JSON object")
    return ReadJson(None, "the answer holds no JSON object: send the output as one JSON object matching the schema")


def json_start(text: str) -> int | None:
    """Where the JSON object of an answer still being written starts, if it has started.

    Its first ``{`` that can open an object: followed by ``"`` or ``}`` (past whitespace), or by nothing yet. A brace
    in prose (``{curly}``) is skipped; of the first ``MAX_STARTS`` braces, so that reading stays linear.
    """
    start = text.find("{")
    for _ in range(MAX_STARTS):
        if start < 0:
            return None
        if _OPENS_OBJECT.match(text, start) is not None:
            return start
        start = text.find("{", start + 1)
    return None


def complete_object(text: str, start: int) -> dict[str, Any] | None:
    """The JSON object that starts at ``start`` when it is complete, whatever follows it (a closing fence, prose)."""
    try:
        value, _ = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant)


def _loads(text: str) -> tuple[Any, str | None]:
    try:
        return _DECODER.decode(text), None
    except RecursionError:
        return None, "nested too deeply"
    except ValueError as exc:
        return None, str(exc)


def _object(value: Any, wrapped: bool) -> ReadJson:
    if isinstance(value, dict):
        return ReadJson(cast("dict[str, Any]", value))
    kinds: dict[type[object], str] = {list: "array", str: "string", bool: "boolean", type(None): "null"}
    kind = kinds.get(type(cast("object", value)), "number")
    problem = f"the answer is a JSON {kind}, not an object: send the output as one JSON object"
    return ReadJson(None, f'{problem} whose "{WRAPPER_KEY}" is the {kind}' if wrapped else problem)


def _fenced(text: str) -> str | None:
    """The content of the first Markdown fence (its info string, such as ``json``, left out)."""
    opening = text.find(_FENCE)
    if opening < 0:
        return None
    line_end = text.find("\n", opening)
    if line_end < 0:
        return None
    closing = text.find(_FENCE, line_end)
    return text[line_end + 1 : closing if closing >= 0 else len(text)]


def _first_object(text: str) -> ReadJson | None:
    """The first of the first ``MAX_STARTS`` opening braces that starts a complete JSON object."""
    start = text.find("{")
    for _ in range(MAX_STARTS):
        if start < 0:
            return None
        found = complete_object(text, start)
        if found is not None:
            return ReadJson(found)
        start = text.find("{", start + 1)
    return None

"""User text (case names, model output, evaluator reasons) made safe to show in a terminal and to write as XML."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["visible"]

_INVISIBLE: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
"""Control characters (tab and newline excepted), lone surrogates and the two non-characters: what XML 1.0
cannot hold, and what a terminal would act on (an escape sequence) instead of showing."""


def visible(text: str) -> str:
    r"""``text`` with each control character written as a visible escape (``\x1b``, ``\x00``); the rest kept."""
    return _INVISIBLE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

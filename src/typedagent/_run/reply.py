"""The tool_result being built for one tool_use block: its text or content blocks, its error flag, its timing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._shared.events import ToolKind, ToolResult
from .._shared.pausing import PendingKind
from .rendering import truncate
from .result_blocks import blocks_text, cap_blocks

__all__ = ["CallBlock", "Reply"]


@dataclass(frozen=True, slots=True)
class CallBlock:
    """A ``tool_use`` block read back from a paused execution's state (the SDK's block has the same fields)."""

    id: str
    name: str
    input: dict[str, Any]
    type: str = "tool_use"


@dataclass(slots=True)
class Reply:
    """The ``tool_result`` being built for one ``tool_use`` block."""

    block: Any
    kind: ToolKind
    content: str = ""
    is_error: bool = False
    duration_ms: float = 0.0
    started: bool = False
    """Its work began (an interrupted call that had started was abandoned, not skipped)."""
    done: bool = False
    blocks: list[dict[str, Any]] | None = None
    """The result's content blocks, when the helper returned some (``content`` is then their text)."""
    server: str | None = None
    """The toolset whose tool was called, for a toolset's tool."""
    hold: PendingKind | None = None
    """The call waits for a decision from outside the execution: its approval, or its (external) result."""
    edited: dict[str, Any] | None = None
    """The arguments a person approved the call with, instead of the model's."""

    @property
    def tool_input(self) -> dict[str, Any]:
        """The arguments the tool runs with: the approved edit, else the model's."""
        return self.edited if self.edited is not None else self.block.input

    def answer(self, content: str | list[dict[str, Any]], *, is_error: bool = False) -> None:
        """Settle the result: a text, or content blocks."""
        if isinstance(content, list):
            self.blocks, content = content, blocks_text(content)
        self.content, self.is_error, self.done = content, is_error, True

    def cap(self, limit: int) -> None:
        """Cap the result at ``limit`` characters of text, with a visible marker where it was cut."""
        if self.blocks is None:
            self.content = truncate(self.content, limit)
        else:
            self.blocks = cap_blocks(self.blocks, limit)
            self.content = blocks_text(self.blocks)

    def event(self) -> ToolResult:
        """The ``on_tool_result`` event for this result."""
        block = self.block
        return ToolResult(
            id=block.id,
            name=block.name,
            content=self.content,
            is_error=self.is_error,
            duration_ms=self.duration_ms,
            kind=self.kind,
            server=self.server,
        )

    def param(self) -> dict[str, Any]:
        """The ``tool_result`` block."""
        content = self.blocks if self.blocks is not None else self.content
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": self.block.id, "content": content}
        if self.is_error:
            result["is_error"] = True
        return result

"""The one place a tool call runs: a helper's handler, an output preview, or the validation behind output and submit."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from . import _feedback as feedback
from ._callbacks import ToolKind, ToolResult
from ._context import RunContext
from ._failures import describe
from ._limits import Overran, within
from ._output import OutputTool, preview_text
from ._rendering import render_off_loop, truncate
from ._result_blocks import blocks_text, cap_blocks, content_blocks
from ._tools import Helper, InvalidToolInput, call_maybe_async
from ._tracing import traced_tool_call
from ._validation import Verdict, parse_candidate, validate_candidate

__all__ = ["Reply", "call_tool", "judge", "preview_output", "run_helper"]

T = TypeVar("T")


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
            id=block.id, name=block.name, content=self.content, is_error=self.is_error, duration_ms=self.duration_ms
        )

    def param(self) -> dict[str, Any]:
        """The ``tool_result`` block."""
        content = self.blocks if self.blocks is not None else self.content
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": self.block.id, "content": content}
        if self.is_error:
            result["is_error"] = True
        return result


async def call_tool(reply: Reply, work: Callable[[], Awaitable[T]]) -> T:
    """Run one tool call's work (``run_helper``, ``preview_output`` or ``judge``) for ``reply``, timing it.

    Every tool call goes through here: the place for what wraps each call (its duration, a span, an event).
    ``work`` is started here, so a call that never runs leaves no coroutine behind.
    """
    reply.started = True
    started = time.perf_counter()
    try:
        return await traced_tool_call(reply, work)
    finally:
        reply.duration_ms += (time.perf_counter() - started) * 1000


async def run_helper(reply: Reply, helper: Helper[Any] | None, ctx: RunContext[Any], limit: int) -> None:
    """A helper call: run its handler and render what it returned, both within the tool's own ``timeout_s``."""
    block = reply.block
    if helper is None:
        reply.answer(f"Error: Unknown tool {block.name}", is_error=True)
        return
    try:
        work = _invoke_and_render(helper, block.input, ctx, limit)
        reply.answer(await (work if helper.timeout_s is None else within(work, helper.timeout_s)))
    except InvalidToolInput as exc:
        reply.answer(f"Error: {exc}", is_error=True)
    except Overran:
        reply.answer(
            f"Error: tool {block.name!r} did not finish within {helper.timeout_s} s and was abandoned.", is_error=True
        )
    except Exception as exc:
        reply.answer(f"Error: {describe(exc)}", is_error=True)


async def _invoke_and_render(
    helper: Helper[Any], tool_input: dict[str, Any], ctx: RunContext[Any], limit: int
) -> str | list[dict[str, Any]]:
    value = await helper.invoke(tool_input, ctx)
    blocks = content_blocks(value)
    return blocks if blocks is not None else await render_off_loop(value, limit)


async def preview_output(
    reply: Reply, output: OutputTool[Any], raw: dict[str, Any], warn: Callable[[str], None]
) -> Verdict:
    """Reflection mode: parse an output call; a valid one is previewed by the reflection handler.

    Returns the parse: a crash of the output model's own validation code is the caller's to report. A
    preview that is not a ``str`` is shown as text and reported to ``warn``.
    """
    parsed = parse_candidate(output, raw)
    if parsed.crash is not None:
        return parsed
    if not parsed.valid:
        reply.answer(feedback.rejection_early(output.name, parsed.problems), is_error=True)
        return parsed
    try:
        preview = await call_maybe_async(output.reflection_handler, parsed.output)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    except Exception as exc:
        reply.answer(feedback.reflection_failed(describe(exc)), is_error=True)
        return parsed
    text, warning = preview_text(output.name, preview)
    if warning is not None:
        warn(warning)
    reply.answer(text)
    return parsed


async def judge(
    reply: Reply,
    output: OutputTool[Any],
    validators: tuple[Any, ...],
    takes_ctx: tuple[bool, ...],
    candidate: dict[str, Any],
    ctx: RunContext[Any],
) -> Verdict:
    """Validate the candidate (schema, then every validator); the call that handed it over carries the verdict.

    A crash is the caller's to report.
    """
    verdict = await validate_candidate(output, validators, takes_ctx, candidate, ctx)
    if verdict.crash is None:
        if not verdict.valid:
            reply.answer(feedback.rejection(output, verdict.problems), is_error=True)
        else:
            reply.answer(feedback.ACCEPTED)
    return verdict

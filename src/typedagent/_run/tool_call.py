"""The one place a tool call runs: a helper's handler, an output preview, or the validation behind output and submit.

The reflection handler and the validators run here only, for a JSON answer (native and prompted modes) too:
``reflect`` and ``validate`` are what ``text_answer`` calls.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from .._agent.calling import InvalidToolInput
from .._agent.context import RunContext
from .._agent.output import OutputTool, preview_text
from .._agent.remote import RemoteTool, ToolsetFailed
from .._agent.tools import Helper
from .._agent.validation import Verdict, parse_candidate, validate_candidate
from .._shared.determinism import runtime
from .._shared.limits import Overran, within
from .._shared.threads import call_maybe_async
from . import feedback
from .failures import describe
from .observe import observers
from .rendering import render_off_loop
from .reply import Reply
from .result_blocks import content_blocks

__all__ = ["call_tool", "deliver_external", "judge", "preview_output", "reflect", "run_helper", "validate"]

T = TypeVar("T")


async def call_tool(reply: Reply, work: Callable[[], Awaitable[T]]) -> T:
    """Run one tool call's work (``run_helper``, ``preview_output`` or ``judge``) for ``reply``, timing it.

    Every tool call goes through here: the place for what wraps each call (its duration, a span, an event).
    ``work`` is started here, so a call that never runs leaves no coroutine behind.
    """
    reply.started = True
    started = runtime().clock()
    try:
        return await observers.tool_call(reply, work)
    finally:
        reply.duration_ms += (runtime().clock() - started) * 1000


async def run_helper(reply: Reply, helper: Helper[Any] | RemoteTool | None, ctx: RunContext[Any], limit: int) -> None:
    """A helper call: run its handler and render what it returned, both within the tool's own ``timeout_s``.

    A toolset's tool (an MCP server's) runs the same way; an error result it reports is sent as it is.
    """
    block = reply.block
    if helper is None:
        reply.answer(f"Error: Unknown tool {block.name}", is_error=True)
        return
    try:
        work = _invoke_and_render(helper, reply.tool_input, ctx, limit)
        reply.answer(await (work if helper.timeout_s is None else within(work, helper.timeout_s)))
    except InvalidToolInput as exc:
        reply.answer(f"Error: {exc}", is_error=True)
    except ToolsetFailed as exc:
        reply.answer(exc.content, is_error=True)
    except Overran:
        reply.answer(
            f"Error: tool {block.name!r} did not finish within {helper.timeout_s} s and was abandoned.", is_error=True
        )
    except Exception as exc:
        reply.answer(f"Error: {describe(exc)}", is_error=True)


async def deliver_external(reply: Reply, value: object, limit: int) -> None:
    """An external tool's call: the result handed over from outside, rendered as a helper's return value is."""
    try:
        blocks = content_blocks(value)
        reply.answer(blocks if blocks is not None else await render_off_loop(value, limit))
    except Exception as exc:
        reply.answer(f"Error: the external result could not be rendered: {describe(exc)}", is_error=True)


async def _invoke_and_render(
    helper: Helper[Any] | RemoteTool, tool_input: dict[str, Any], ctx: RunContext[Any], limit: int
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
        preview = await reflect(output, parsed.output)
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
    verdict = await validate(output, validators, takes_ctx, candidate, ctx)
    if verdict.crash is None:
        if not verdict.valid:
            reply.answer(feedback.rejection(output, verdict.problems), is_error=True)
        else:
            reply.answer(feedback.ACCEPTED)
    return verdict


async def reflect(output: OutputTool[Any], candidate: object) -> object:
    """The reflection handler's preview of a parsed candidate (what it raises propagates)."""
    return await call_maybe_async(output.reflection_handler, candidate)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


async def validate(
    output: OutputTool[Any],
    validators: tuple[Any, ...],
    takes_ctx: tuple[bool, ...],
    candidate: dict[str, Any],
    ctx: RunContext[Any],
) -> Verdict:
    """The schema, then every validator, on a candidate: its verdict."""
    return await validate_candidate(output, validators, takes_ctx, candidate, ctx)

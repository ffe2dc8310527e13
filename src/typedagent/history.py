"""History processors: what the model is sent of a long conversation, trimmed or summarised before each call.

An agent's ``define_agent(history_processors=[...])`` are applied in order before every model call, each to the
messages the previous one returned; the first gets a copy of the conversation, and the conversation itself (what
``metadata.messages`` reports, and what the next call starts from) never changes. A processor is a function,
sync or async, taking ``(messages)`` or ``(ctx, messages)`` (the run context first, as tools take it) and
returning the messages to send. The built-ins here never part a ``tool_use`` from its ``tool_result``:

- ``keep_last_turns(n)``: the first user message and the last ``n`` user→assistant exchanges.
- ``drop_thinking_before(n)``: thinking blocks out of every assistant message but the last ``n``.
- ``summarize_older(agent, keep_last=n)``: the exchanges before the last ``n`` replaced by the output of a
  summariser agent, run inside the execution (its client, limits and metadata).

A processor that raises, or returns a history the API would refuse (a ``tool_use`` without its ``tool_result``,
an assistant turn first, the current turn dropped or changed), ends the execution with
``HISTORY_PROCESSOR_ERROR`` naming it; nothing is sent. See docs/history.md.
"""

from __future__ import annotations

import collections
import hashlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast, overload

import pydantic_core
from typing_extensions import TypeVar

from ._agent.context import RunContext
from ._agent.delegation import MAX_DEPTH, STOPPED_BY_PARENT, SubRunStopped
from ._agent.processors import HistoryProcessor
from ._shared.errors import AgentDefinitionError
from ._shared.results import ExecuteFailure

if TYPE_CHECKING:
    from anthropic.types import MessageParam

    from ._agent.definition import AgentDefinition

__all__ = ["HistoryProcessor", "drop_thinking_before", "keep_last_turns", "summarize_older"]

DepsT = TypeVar("DepsT")

SUMMARY_HEADER: Final = "Summary of the earlier conversation (its older turns were replaced by this summary):"
_CACHED_SUMMARIES: Final = 16
_THINKING: Final = frozenset({"thinking", "redacted_thinking"})


def keep_last_turns(n: int) -> Callable[[list[MessageParam]], list[MessageParam]]:
    """A processor that keeps the first user message and the last ``n`` user→assistant exchanges.

    The current turn (the last message) is always kept, and so is the assistant turn its ``tool_result`` blocks
    answer: a ``tool_use`` is never parted from its ``tool_result``. A conversation with no more than ``n``
    exchanges is sent whole.

    Args:
        n: How many exchanges before the current turn to keep (0: only the first message and the current turn).

    Raises:
        AgentDefinitionError: ``n`` is not an int >= 0.
    """
    _check_count(n, "keep_last_turns(n)", 0)

    def keep_last(messages: list[MessageParam]) -> list[MessageParam]:
        start = _kept_from(messages, n)
        return messages if not start else [messages[0], *messages[start:]]

    keep_last.__qualname__ = keep_last.__name__ = f"keep_last_turns({n})"
    return keep_last


def drop_thinking_before(n: int) -> Callable[[list[MessageParam]], list[MessageParam]]:
    """A processor that removes thinking blocks from every assistant message but the last ``n``.

    The last assistant message keeps its thinking (``n`` >= 1): the API needs it back while the model uses
    tools. A message that held nothing but thinking is kept whole (an empty turn cannot be sent).

    Args:
        n: How many of the last assistant messages keep their thinking blocks.

    Raises:
        AgentDefinitionError: ``n`` is not an int >= 1.
    """
    _check_count(n, "drop_thinking_before(n)", 1)

    def drop_thinking(messages: list[MessageParam]) -> list[MessageParam]:
        assistant = [index for index, message in enumerate(messages) if message["role"] == "assistant"]
        kept = list(messages)
        for index in assistant[:-n]:
            blocks = _blocks(messages[index])
            remaining = [block for block in blocks if block.get("type") not in _THINKING]
            if remaining and len(remaining) < len(blocks):
                kept[index] = cast("MessageParam", {"role": "assistant", "content": remaining})
        return kept

    drop_thinking.__qualname__ = drop_thinking.__name__ = f"drop_thinking_before({n})"
    return drop_thinking


@overload
def summarize_older(
    agent: AgentDefinition[Any, None], *, keep_last: int
) -> Callable[[RunContext[object], list[MessageParam]], Awaitable[list[MessageParam]]]: ...
@overload
def summarize_older(
    agent: AgentDefinition[Any, DepsT], *, keep_last: int
) -> Callable[[RunContext[DepsT], list[MessageParam]], Awaitable[list[MessageParam]]]: ...
def summarize_older(
    agent: AgentDefinition[Any, Any], *, keep_last: int
) -> Callable[[RunContext[Any], list[MessageParam]], Awaitable[list[MessageParam]]]:
    """A processor that replaces the exchanges before the last ``keep_last`` with a summary made by ``agent``.

    The first user message stays, followed by the summariser's output (as JSON) and the last ``keep_last``
    exchanges, kept as ``keep_last_turns`` keeps them. The summariser runs inside the execution: on its client,
    within its limits, its tokens, cost and API calls counted in the execution's metadata (and against
    ``max_requests``), and recorded in ``metadata.sub_executions``. A summary is made once for each distinct older
    part and reused; when the older part grows, the summariser gets the previous summary and the newer messages.
    A summariser that fails ends the execution with ``HISTORY_PROCESSOR_ERROR``.

    Args:
        agent: The summariser: any agent, its output type being the summary's (e.g. a model with a ``summary``
            field); it gets the execution's deps when it declares a ``deps_type``.
        keep_last: How many exchanges before the current turn stay as they are.

    Raises:
        AgentDefinitionError: ``keep_last`` is not an int >= 0.
    """
    _check_count(keep_last, "summarize_older(keep_last=...)", 0)
    summaries: collections.OrderedDict[str, str] = collections.OrderedDict()

    async def summarize(ctx: RunContext[Any], messages: list[MessageParam]) -> list[MessageParam]:
        start = _kept_from(messages, keep_last)
        if not start:
            return messages
        summary = await _summary(agent, ctx, messages[1:start], summaries)
        note = {"type": "text", "text": f"{SUMMARY_HEADER}\n{summary}"}
        first = cast("MessageParam", {"role": "user", "content": [*_blocks(messages[0]), note]})
        return [first, *messages[start:]]

    summarize.__qualname__ = summarize.__name__ = f"summarize_older({agent.name}, keep_last={keep_last})"
    return summarize


async def _summary(
    agent: AgentDefinition[Any, Any],
    ctx: RunContext[Any],
    older: Sequence[MessageParam],
    summaries: collections.OrderedDict[str, str],
) -> str:
    """The summary of ``older``: remembered, or made by the summariser from the longest part summarised before."""
    lines = _transcript(older)
    digests = _digests(lines)
    known = next((count for count in range(len(lines), 0, -1) if digests[count] in summaries), 0)
    if known == len(lines):
        summaries.move_to_end(digests[known])
        return summaries[digests[known]]
    delegator = ctx._delegator
    if delegator is None:
        raise RuntimeError(
            "summarize_older runs inside an execution: pass it in define_agent(history_processors=[...])."
        )
    newer = "\n".join(line for message in lines[known:] for line in message)
    if known:
        prompt = (
            f"You summarised the beginning of a conversation before:\n<summary>\n{summaries[digests[known]]}\n"
            f"</summary>\nHere is what came after it:\n<conversation>\n{newer}\n</conversation>\nSummarise the "
            "whole conversation, keeping every fact, decision, result and open question needed to go on with it."
        )
    else:
        prompt = (
            f"Summarise the beginning of this conversation between a user and an assistant that uses tools, "
            f"keeping every fact, decision, result and open question needed to go on with it:\n<conversation>\n"
            f"{newer}\n</conversation>"
        )
    deps = ctx.deps if agent.deps_type is not None else None
    result = await delegator.run_sub_agent(agent, prompt, deps, max_depth=MAX_DEPTH)
    if isinstance(result, ExecuteFailure):
        if result.error.code in STOPPED_BY_PARENT:
            raise SubRunStopped(result.error)
        raise RuntimeError(f"the summariser agent {agent.name!r} failed ({result.error.code}): {result.error.message}")
    summary = pydantic_core.to_json(agent.output.to_json(result.output)).decode()
    summaries[digests[-1]] = summary
    while len(summaries) > _CACHED_SUMMARIES:
        summaries.popitem(last=False)
    return summary


def _kept_from(messages: Sequence[MessageParam], n: int) -> int:
    """Where the kept tail starts (the assistant turn ending the exchange before it), or 0 to keep everything.

    An exchange starts at the first message and at each user turn that follows an assistant turn and says something
    of its own (a block other than ``tool_result``): a round of tool calls (a ``tool_use`` and the turn of
    ``tool_result`` blocks answering it) stays inside the exchange it belongs to. The tail starts at the assistant
    turn before an exchange, so it never parts a ``tool_use`` from its ``tool_result``. The exchange going on now
    (the last one: the current turn, with the tool rounds and paused turns that followed it) is always kept and not
    counted.
    """
    starts = [
        index
        for index in range(1, len(messages))
        if messages[index]["role"] == "user"
        and messages[index - 1]["role"] == "assistant"
        and any(block.get("type") != "tool_result" for block in _blocks(messages[index]))
    ]
    if not starts:
        return 0
    finished = [0, *starts[:-1]]
    if n >= len(finished):
        return 0
    start = finished[len(finished) - n] if n else starts[-1]
    # From the assistant's turn before it (with the tool_use its tool_result blocks answer, if it has any): after
    # the first message, the user's, turns still alternate.
    return start - 1 if start > 2 else 0


def _blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else [dict(block) for block in content]


def _transcript(messages: Sequence[MessageParam]) -> list[list[str]]:
    """Each message as lines of plain text a summariser reads: text, tool calls and their results."""
    names: dict[object, object] = {}
    lines: list[list[str]] = []
    for message in messages:
        role = message["role"]
        said: list[str] = []
        for block in _blocks(message):
            kind = block.get("type")
            if kind == "text":
                said.append(f"{role}: {block.get('text')}")
            elif kind == "tool_use":
                names[block.get("id")] = block.get("name")
                said.append(f"{role} called tool {block.get('name')} with {_json(block.get('input'))}")
            elif kind == "tool_result":
                error = " (an error)" if block.get("is_error") else ""
                content = _result_text(block.get("content"))
                said.append(f"result of tool {names.get(block.get('tool_use_id'), '?')}{error}: {content}")
            elif kind not in _THINKING:
                said.append(f"{role}: [{kind} block] {_json(block)}")
        lines.append(said)
    return lines


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        blocks = cast("list[object]", content)
        return " ".join(
            str(cast("Mapping[str, object]", block).get("text", "")) if isinstance(block, Mapping) else str(block)
            for block in blocks
        )
    return _json(content)


def _json(value: object) -> str:
    return pydantic_core.to_json(value, fallback=str).decode()


def _digests(lines: list[list[str]]) -> list[str]:
    """The digest of each prefix of the transcript (``[0]`` for the empty one), computed in one pass."""
    running = hashlib.sha256()
    digests = [running.hexdigest()]
    for message in lines:
        for line in message:
            running.update(line.encode("utf-8", "surrogatepass"))
            running.update(b"\n")
        running.update(b"\x00")
        digests.append(running.hexdigest())
    return digests


def _check_count(value: object, label: str, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise AgentDefinitionError(f"{label} must be an int >= {least}, got {value!r}.")

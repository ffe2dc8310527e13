"""History processors, applied in one place: on a copy of the conversation, right before each model call.

The conversation itself (``metadata.messages``) never changes: each processor gets the previous one's messages (the
first gets a deep copy), and what the last returns is sent instead. A processor that raises, or returns a history
the Messages API would refuse, ends the execution with ``HISTORY_PROCESSOR_ERROR`` before anything is sent.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from .._agent.delegation import SubRunStopped
from .._agent.processors import processor_name
from .._shared.limits import Interrupted
from .._shared.threads import call_maybe_async
from . import failures
from .arguments import HISTORY_SHAPE
from .attempt import Failed
from .caching import MAX_BREAKPOINTS, within_breakpoints
from .subrun import delegating

if TYPE_CHECKING:
    from .execution import Execution

__all__ = ["history_problem", "process_history"]


async def process_history(execution: Execution, params: dict[str, Any]) -> dict[str, Any] | Failed:
    """The request to send: ``params`` with its messages processed by the agent's history processors.

    A failed (or interrupted) processing takes the iteration's API call back: nothing was sent.
    """
    if not execution.agent.history_processors:
        return params
    try:
        processed = await execution.guard.run(_processed(execution, params["messages"]))
    except Interrupted as interruption:
        failed: Failed = execution.interrupted(interruption, "iteration")
    else:
        if not isinstance(processed, Failed):
            fitted, removed = within_breakpoints(processed, params.get("tools"))
            if removed:
                execution.warn(
                    f"the history processors left {removed} cache_control breakpoint(s) more than the API's "
                    f"{MAX_BREAKPOINTS} (with the tools'): the earliest were left out of this call's messages."
                )
            return {**params, "messages": fitted}
        failed = processed
    execution.take_back_iteration()
    return failed


async def _processed(execution: Execution, messages: list[dict[str, Any]]) -> list[Any] | Failed:
    agent = execution.agent
    current = messages[-1]
    ctx = delegating(execution)
    history: Any = copy.deepcopy(messages)
    for processor, takes_ctx in zip(agent.history_processors, agent._processor_takes_ctx, strict=True):
        name = processor_name(processor)
        try:
            arguments = (ctx, history) if takes_ctx else (history,)
            history = await call_maybe_async(processor, *arguments)
        except SubRunStopped as stopped:
            return Failed(stopped.error)
        except Exception as exc:
            return Failed(failures.history_processor(execution.where(), name, "", exc))
        problem = history_problem(history, current)
        if problem is not None:
            return Failed(failures.history_processor(execution.where(), name, problem, None))
    return cast("list[Any]", history)


def history_problem(messages: object, current: Mapping[str, Any]) -> str | None:
    """Why the Messages API would refuse ``messages`` as the history of a call whose current turn is ``current``.

    Checked: a list of messages, starting with the user's turn, ending with the current turn unchanged, each
    ``tool_use`` answered by a ``tool_result`` in the next turn and each ``tool_result`` answering a ``tool_use``
    of the turn before. None when it would be sent.
    """
    if not isinstance(messages, list):
        return f"it returned {type(messages).__name__}, not a list of messages"
    found = cast("list[object]", messages)
    if not found:
        return "it returned no messages, dropping the current turn"
    for index, message in enumerate(found):
        if not _is_message(message):
            return f"message {index} is {message!r:.100}, not a message ({HISTORY_SHAPE})"
    history = cast("list[Mapping[str, Any]]", found)
    if history[0]["role"] != "user":
        return "it starts with an assistant turn (the first turn must be the user's)"
    if history[-1] != current:
        return "it drops or changes the current turn (the last message, which the model answers now)"
    for index, message in enumerate(history):
        previous = history[index - 1] if index else None
        answered = _ids(previous, "tool_use", "id") if previous is not None and previous["role"] == "assistant" else []
        stray = [use_id for use_id in _ids(message, "tool_result", "tool_use_id") if use_id not in answered]
        if message["role"] == "user" and stray:
            return f"message {index} has a tool_result for {stray}, which answers no tool_use of the turn before it"
        if message["role"] == "assistant" and index + 1 < len(history):
            following = history[index + 1]
            results = _ids(following, "tool_result", "tool_use_id") if following["role"] == "user" else []
            missing = [use_id for use_id in _ids(message, "tool_use", "id") if use_id not in results]
            if missing:
                return f"message {index} has a tool_use {missing} whose tool_result is not in the next turn"
    return None


def _is_message(message: object) -> bool:
    if not isinstance(message, Mapping):
        return False
    entry = cast("Mapping[str, object]", message)
    content = entry.get("content")
    return entry.get("role") in ("user", "assistant") and isinstance(content, str | list | tuple)


def _ids(message: Mapping[str, Any], kind: str, key: str) -> list[object]:
    content = message["content"]
    if isinstance(content, str):
        return []
    blocks = cast("Sequence[object]", content)
    return [
        cast("Mapping[str, object]", block).get(key)
        for block in blocks
        if isinstance(block, Mapping) and cast("Mapping[str, object]", block).get("type") == kind
    ]

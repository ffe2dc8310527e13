"""Checks and views of a run's conversation: API validity, plain data, a compact transcript."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias, cast

from .._shared.results import ExecuteFailure, ExecuteSuccess, ExecutionMetadata

__all__ = [
    "Conversation",
    "ConversationError",
    "assert_valid_conversation",
    "conversation",
    "conversation_problems",
    "format_conversation",
    "to_plain",
]

Conversation: TypeAlias = "ExecuteSuccess[Any] | ExecuteFailure | ExecutionMetadata | Sequence[Mapping[str, Any]]"
"""A run's conversation: an execution result, its metadata, or the messages themselves."""


class ConversationError(AssertionError):
    """The conversation would be rejected by the Messages API."""

    __module__ = "typedagent.testing"  # shown in tracebacks: the name users import


def to_plain(value: Any) -> Any:
    """``value`` as plain JSON data, tuples as lists, pydantic models dumped as the SDK sends them.

    A model keeps exactly the fields that were set — for a response, the ones the API sent, ``null``
    values included — under their API names (the SDK's own request-body dump).
    """
    if hasattr(value, "model_dump"):
        exclude = getattr(value, "__api_exclude__", None)
        # No serializer warnings: a response built without validation may hold blocks newer than its model.
        value = value.model_dump(mode="json", exclude_unset=True, by_alias=True, exclude=exclude, warnings=False)
    if isinstance(value, Mapping):
        return {str(key): to_plain(item) for key, item in cast("Mapping[object, object]", value).items()}
    if isinstance(value, list | tuple):
        return [to_plain(item) for item in cast("Sequence[Any]", value)]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return repr(value)


def _messages(run: Conversation) -> Sequence[Mapping[str, Any]]:
    if isinstance(run, ExecuteSuccess | ExecuteFailure):
        return run.metadata.messages
    if isinstance(run, ExecutionMetadata):
        return run.messages
    return run


def conversation(run: Conversation) -> list[dict[str, Any]]:
    """The whole conversation of a run as plain data, to compare with ``==`` in a test.

    Every message is a ``{"role": ..., "content": ...}`` dict of JSON values (SDK and pydantic
    objects dumped with the fields they were given), exactly what the Messages API would receive.

    Args:
        run: An ``ExecuteResult``, its ``metadata``, or a list of messages.
    """
    return [to_plain(message) for message in _messages(run)]


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or ())


def conversation_problems(run: Conversation) -> list[str]:
    """Every reason the Messages API would reject a run's conversation (empty when valid).

    Checked: the first turn is the user's; roles alternate; every ``tool_use`` of an assistant turn is
    answered by a ``tool_result`` with the same id, in the same order, first in the next user turn;
    no ``tool_result`` answers anything else; tool_use ids are unique. A call the API carries out itself
    (``server_tool_use``, ``mcp_tool_use``) is answered by its result block (``web_search_tool_result``,
    ``mcp_tool_result``, …) later in the same assistant turn — unless that turn is the last, paused one — and
    never by a ``tool_result``.
    """
    messages = conversation(run)
    problems: list[str] = []
    if not messages:
        return ["the conversation is empty"]
    if messages[0].get("role") != "user":
        problems.append("message 0: the first turn must be the user's")
    seen_ids: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role not in ("user", "assistant"):
            problems.append(f"message {index}: role {role!r} is not 'user' or 'assistant'")
            continue
        if index and messages[index - 1].get("role") == role:
            problems.append(f"message {index}: two {role} turns in a row")
        blocks = _blocks(message)
        if not blocks:
            problems.append(f"message {index}: empty content")
        if role == "assistant":
            problems.extend(_server_call_problems(index, blocks, last=index == len(messages) - 1))
            uses = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
            server_ids = [b.get("id") for b in blocks if b.get("type") in _SERVER_CALLS]
            for use_id in [*uses, *server_ids]:
                if use_id in seen_ids:
                    problems.append(f"message {index}: tool_use id {use_id!r} repeats an earlier one")
                seen_ids.add(str(use_id))
            if not uses:
                continue
            if index + 1 >= len(messages):
                problems.append(f"message {index}: tool_use {uses} not answered (the conversation ends)")
                continue
            reply = _blocks(messages[index + 1])
            results = [b.get("tool_use_id") for b in reply if b.get("type") == "tool_result"]
            leading = [b.get("tool_use_id") for b in reply[: len(uses)] if b.get("type") == "tool_result"]
            if results != uses or leading != uses:
                problems.append(f"message {index + 1}: must start with tool_results for {uses} in order, has {results}")
        else:
            answered: list[Any] = []
            if index:
                answered = [b.get("id") for b in _blocks(messages[index - 1]) if b.get("type") == "tool_use"]
            for block in blocks:
                if block.get("type") == "tool_result" and block.get("tool_use_id") not in answered:
                    problems.append(
                        f"message {index}: tool_result for {block.get('tool_use_id')!r} answers no tool_use "
                        "of the previous turn"
                    )
    return problems


_SERVER_CALLS = ("server_tool_use", "mcp_tool_use")


def _server_call_problems(index: int, blocks: list[Mapping[str, Any]], *, last: bool) -> list[str]:
    """Each server or MCP call of an assistant turn answered by its result block after it, in the same turn."""
    problems: list[str] = []
    open_calls: list[Any] = []
    for block in blocks:
        kind = block.get("type")
        if kind in _SERVER_CALLS:
            open_calls.append(block.get("id"))
        elif isinstance(kind, str) and kind != "tool_result" and kind.endswith("_tool_result"):
            answered = block.get("tool_use_id")
            if answered in open_calls:
                open_calls.remove(answered)
            else:
                problems.append(f"message {index}: {kind} for {answered!r} answers no earlier call of its turn")
    if open_calls and not last:
        problems.append(
            f"message {index}: server tool call(s) {open_calls} have no result in their turn (only the last, "
            "paused turn may end with one)"
        )
    return problems


def assert_valid_conversation(run: Conversation) -> None:
    """Raise ``ConversationError`` (an AssertionError) listing every problem, with a transcript.

    Args:
        run: An ``ExecuteResult``, its ``metadata``, or a list of messages.
    """
    problems = conversation_problems(run)
    if problems:
        listing = "\n".join(f"  - {p}" for p in problems)
        raise ConversationError(f"conversation is not API-valid:\n{listing}\n{format_conversation(run)}")


def format_conversation(run: Conversation, *, width: int = 100) -> str:
    """A compact transcript, one line per block (``[index] role: type: detail``), for failure messages.

    Args:
        run: An ``ExecuteResult``, its ``metadata``, or a list of messages.
        width: Each block's detail is cut to this many characters.
    """
    messages = conversation(run)

    def clip(value: object) -> str:
        line = str(value).replace("\n", "\\n")
        return line if len(line) <= width else f"{line[: width - 1]}…"

    lines: list[str] = []
    for index, message in enumerate(messages):
        for block in _blocks(message):
            kind = block.get("type")
            if kind == "text":
                detail = clip(block.get("text"))
            elif kind == "tool_use":
                detail = clip(f"{block.get('name')}#{block.get('id')} {block.get('input')}")
            elif kind == "tool_result":
                flag = " ERROR" if block.get("is_error") else ""
                detail = clip(f"#{block.get('tool_use_id')}{flag} {block.get('content')}")
            elif kind == "thinking":
                detail = clip(block.get("thinking"))
            elif kind in _SERVER_CALLS:
                detail = clip(f"{block.get('name')}#{block.get('id')} {block.get('input')}")
            elif isinstance(kind, str) and kind.endswith("_tool_result"):
                detail = clip(f"#{block.get('tool_use_id')} {block.get('content')}")
            else:
                detail = kind or "?"
            lines.append(f"[{index}] {message.get('role')}: {kind}: {detail}")
    return "\n".join(lines)

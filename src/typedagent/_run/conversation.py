"""The conversation of one execution: assistant turns kept verbatim, one ``tool_result`` message per response."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, cast

from pydantic_core import to_jsonable_python

if TYPE_CHECKING:
    from anthropic.types import Message

__all__ = ["Conversation", "block_param"]


class Conversation:
    """The messages of one execution, as Messages API params, always valid to send.

    Messages are replaced, never mutated in place, once appended: a client may still hold the list of an
    earlier request.
    """

    __slots__ = ("messages",)

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = messages

    def add_response(self, response: Message) -> None:
        """Append the assistant's turn verbatim (every block, in order); a paused turn is extended."""
        content = [block_param(block) for block in response.content]
        if not content:
            # The API now and then answers with no blocks at all (end_turn), but rejects an empty
            # assistant turn sent back: there is nothing to keep, so keep nothing.
            return
        messages = self.messages
        last = messages[-1] if messages else None
        if last is not None and last["role"] == "assistant":
            # A paused turn (or a prefilled history) is continued, not repeated: extend it.
            messages[-1] = {"role": "assistant", "content": [*_blocks(last["content"]), *content]}
        else:
            messages.append({"role": "assistant", "content": content})

    def add_tool_results(self, results: list[dict[str, Any]]) -> None:
        """Answer every ``tool_use`` of the last response in one user message, in block order."""
        self.messages.append({"role": "user", "content": results})

    def add_user_text(self, text: str) -> None:
        """Tell the model something: added to the last user turn, or as a new one after the assistant's."""
        messages = self.messages
        last = messages[-1]
        if last["role"] == "user":
            # A plain-string prompt is still last when the model's turn was empty (nothing appended).
            messages[-1] = {"role": "user", "content": [*_blocks(last["content"]), {"type": "text", "text": text}]}
        else:
            messages.append({"role": "user", "content": [{"type": "text", "text": text}]})


def block_param(block: Any) -> dict[str, Any]:
    """A response content block as a request param, verbatim (only the fields the API sent)."""
    flat = _flat_param(block)
    if flat is not None:
        return flat
    to_dict = getattr(block, "to_dict", None)
    if to_dict is not None:
        return to_dict(mode="json")  # type: ignore[no-any-return]
    return dict(block.model_dump(mode="json", exclude_unset=True))


_SCALARS: Final = frozenset({str, int, bool, type(None)})


def _flat_param(block: Any) -> dict[str, Any] | None:
    """``block_param`` of the usual shapes (text, a tool call and its input) read from the model's fields.

    What ``to_dict(mode="json")`` gives for them (the fields the API sent, in the model's order), without pydantic's
    serializer for the block: scalars as they are, a dict field (a tool's input, JSON data as parsed) copied by
    pydantic-core. None for anything else: a list, a nested model, an extra field, another kind of value.
    """
    fields: object = getattr(block, "__dict__", None)
    sent: object = getattr(block, "__pydantic_fields_set__", None)
    if type(fields) is not dict or not isinstance(sent, set) or getattr(block, "__pydantic_extra__", None):
        return None
    param: dict[str, Any] = {}
    for name, value in cast("dict[str, object]", fields).items():
        if name not in sent:
            continue
        kind = type(value)
        if kind in _SCALARS:
            param[name] = value
        elif kind is dict:  # an input (``Dict[str, object]``): JSON data as parsed, no model inside
            try:
                param[name] = to_jsonable_python(value)
            except Exception:  # something pydantic-core cannot serialize on its own: to_dict decides
                return None
        else:  # a list (of citations, of results: models, whose unset fields ``to_dict`` leaves out), a model
            return None
    return param


def _blocks(content: Any) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)

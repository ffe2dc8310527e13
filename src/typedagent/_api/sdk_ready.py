"""Hand the SDK's own Messages resource the request's big values ready to send, so it need not copy them.

Before sending, the SDK copies every request's parameters (``anthropic._utils._prepare.copy_tree``): it walks
each dict and list in Python, drops ``Omit`` entries, dumps pydantic models, formats dates, turns tuples and
iterators into lists and reads the files to send base64-encoded. typedagent's tool definitions and conversation
are plain JSON data that walk changes in nothing, yet it is the largest part of the Python work of a model call:
the tool schemas and the whole conversation are walked again at every call.

A value is handed over ready only when a strict JSON encoder (in C: no ``NaN``, no object it does not know,
which takes in files, models, dates, ``Omit``) accepts it: then the SDK's copy would have been equal to it,
and the body sent is byte for byte the same. Anything else is passed as it is, for the SDK to copy. Only the
SDK's own resource classes get it (another client receives its parameters unchanged), and the SDK takes a
pydantic model's ``model_dump`` as its copy (every SDK release typedagent supports does).
"""

from __future__ import annotations

import json
from typing import Any, Final

import pydantic

__all__ = ["for_the_sdk"]

_READY: Final[dict[str, tuple[str, ...]]] = {
    "anthropic.resources.messages.messages": ("tools", "messages"),
    "anthropic.resources.beta.messages.messages": ("messages",),
}
"""The parameters handed over ready, by the module of the SDK's ``AsyncMessages`` resource (plain, beta; Bedrock's
and Vertex's plain one is the SDK's too): the tool definitions (their JSON schemas) and the conversation, the large
ones. The beta resource reads its ``tools`` itself (it turns runnable tools into params), so they go as they are."""


class SdkReady(pydantic.RootModel[Any]):
    """JSON data the SDK would copy unchanged: its copy (``model_dump``) is the data itself."""

    def model_dump(self, **_: Any) -> Any:  # the SDK's request copy asks for this
        return self.root


def _refuse(value: object) -> object:
    raise TypeError(f"not JSON data: {type(value).__name__}")


_STRICT: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=_refuse)


def plain_json(value: object) -> bool:
    """Whether ``value`` is JSON data the SDK's copy leaves as it is (dicts, lists, str, numbers, bools, None)."""
    try:
        _STRICT.encode(value)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


def for_the_sdk(resource: object, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with its tool definitions and conversation handed over ready, when ``resource`` is the SDK's own.

    ``params`` itself is not changed.
    """
    kind = type(resource)
    names = _READY.get(kind.__module__, ()) if kind.__name__ == "AsyncMessages" else ()
    ready = params
    for name in names:
        value: object = params.get(name)
        if type(value) is list and plain_json(params[name]):  # a list, of JSON data only
            if ready is params:
                ready = dict(params)
            ready[name] = SdkReady.model_construct(value)
    return ready

"""The one place a model call happens: send the request, race it against abort and deadline, check the answer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

from ._client import ApiFailure, MessagesClient, check_response, describe_api_error
from ._limits import Guard, Interrupted

if TYPE_CHECKING:
    from anthropic.types import Message

__all__ = ["ModelCallFailure", "call_model"]

ModelCallFailure: TypeAlias = Interrupted | ApiFailure
"""Why a model call produced no response: interrupted (abort, deadline), or the client failed."""


async def call_model(client: MessagesClient, params: dict[str, Any], guard: Guard) -> Message | ModelCallFailure:
    """Make one Messages API call and return the response, or the failure.

    Interruption (the abort event and the deadline), the check that the answer reads as a ``Message``
    and the mapping of the SDK's exceptions all happen here and nowhere else.
    """
    try:
        return check_response(await guard.run(client.messages.create(**params)))
    except Interrupted as interruption:
        return interruption
    except AssertionError:
        raise  # a test double's script disagrees with the run: a test bug, not a run-time failure
    except Exception as exc:
        return describe_api_error(exc)

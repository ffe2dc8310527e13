"""The one place a model call happens: send the request, race it against abort and deadline, check the answer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

from .._shared.limits import Guard, Interrupted
from .api_errors import ApiFailure, RefusedWhenCalled, describe_api_error, malformed_response
from .beta import beta_messages, beta_request, needs_beta
from .client import MessagesClient, configuration_failure, sends_through_the_sdk
from .response import MalformedResponse, check_response, readable_usage
from .secrets import credentials, scrub
from .stream_call import StreamObserver, must_stream, read_stream

if TYPE_CHECKING:
    from anthropic.types import Message

__all__ = ["ModelCallFailure", "call_model"]

ModelCallFailure: TypeAlias = Interrupted | ApiFailure
"""Why a model call produced no response: interrupted (abort, deadline), or the client failed."""


async def call_model(
    client: MessagesClient, params: dict[str, Any], guard: Guard, observer: StreamObserver | None = None
) -> Message | ModelCallFailure:
    """Make one Messages API call and return the response, or the failure.

    A request with beta parameters goes through ``client.beta.messages`` (``beta``). The client's
    configuration check, interruption (the abort event and the deadline), the check that the
    answer reads as a ``Message``, the mapping of the client's exceptions and the removal of credentials from
    them all happen here and nowhere else.

    Whatever is raised while the call is awaited is its outcome: a failure. An exception raised by *calling*
    ``messages.create``, before it returns anything to await and so before anything can have been sent, is
    a programming error and propagates: a keyword the client does not take, or a test double whose script
    disagrees with the run.

    The call streams (``stream_call``) when ``observer`` watches its events, and when the SDK would refuse it
    unstreamed (a ``max_tokens`` that could take more than 10 minutes); the response is the same either way.
    """
    unusable = configuration_failure(client)
    if unusable is not None:
        return unusable
    beta = needs_beta(params)
    if beta:
        # Beta parameters (MCP servers, context management, betas) go through the SDK's beta resource, which
        # takes them and sends the anthropic-beta header; the response is then a BetaMessage.
        resource, params = beta_messages(client), beta_request(params)
    else:
        resource = client.messages
    if observer is not None or must_stream(resource, params):
        call: Any = read_stream(resource.create(**params, stream=True), observer, beta=beta)
    else:
        call = resource.create(**params)
    try:
        response = await guard.run(call)
    except Interrupted as interruption:
        return interruption
    except RefusedWhenCalled as refused:
        # typedagent's own client wrappers call the client they wrap later (after pacing, say): what that
        # call raised is still a programming error, and still propagates.
        raise refused.error from None
    except Exception as exc:
        scrub(exc, credentials(client))
        return describe_api_error(exc, sdk_client=sends_through_the_sdk(client, beta=beta))
    try:
        return check_response(response)
    except MalformedResponse as exc:
        return malformed_response(exc, readable_usage(response))

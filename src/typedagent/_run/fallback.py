"""One model call made through the agent's fallback chain: each model in turn until one answers, the run going on.

Without ``define_agent(fallback=[...])`` the call is the plain model call. With it, the call starts on the model
the execution stays on (the agent's own, or the alternative that last answered while its stay lasts) and, when
that model fails in a way that moves on (``_api.fallback.moves_on``) or refuses (with ``fallback_on_refusal``),
replays the same request on the next model of the chain, and so on, each at most once. Every call made counts
in ``metadata.iterations``; the iteration of the attempt is the same one. The state kept between calls is one
small ``FallbackState`` on the execution (where the calls go, until when).
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from .._api.api_errors import ApiFailure, not_sent
from .._api.fallback import SHARED_BREAKERS, WAIT_CAP, Breakers, moves_on
from .._api.hop import (
    cannot_move,
    credit_token,
    lacks_structured_outputs,
    recommended_model,
    served_by,
    supports_server_fallback,
)
from .._api.model_call import ModelCallFailure
from .._shared.determinism import runtime
from .._shared.errors import AlternativeFailure, safe_str
from .._shared.events import FallbackSwitch
from .._shared.limits import Interrupted
from .accounting import account_failed_call, add_response_usage, answered_by
from .attempt import Failed
from .chain_request import chain_request
from .execution import lineage
from .fallback_state import Link
from .observe import observers
from .steps import OWN_MODEL, ModelCall, steps

if TYPE_CHECKING:
    from anthropic.types import Message

    from .._shared.clients import MessagesClient
    from .execution import Execution

__all__ = ["ChainOutcome", "call_through_chain"]

ChainOutcome: TypeAlias = "Message | ModelCallFailure | Failed"
"""What a call through the chain gives the loop: a response, a failure (interrupted, the last model's), or a
limit reached between two models."""


def call_through_chain(execution: Execution, params: dict[str, Any]) -> Awaitable[ChainOutcome]:
    """Make the iteration's model call with ``params``, through the fallback chain when the agent has one."""
    state = execution.fallback
    state.tried.clear()
    if not execution.agent.fallback:
        return _plain(execution, params)
    if not state.links:
        state.links = _links(execution)
    return _Trip(execution, params).run()


async def _plain(execution: Execution, params: dict[str, Any]) -> Message | ModelCallFailure:
    response = await _observed(execution, OWN_MODEL, params)
    if isinstance(response, ApiFailure):
        account_failed_call(execution, response)
    elif not isinstance(response, Interrupted):
        execution.fallback.answered = params["model"]
        answered_by(execution, response.model, params["model"])
    return response


def _observed(execution: Execution, call: ModelCall, params: dict[str, Any]) -> Awaitable[Message | ModelCallFailure]:
    # Through the steps seam: a durable execution makes (and records) each call of the chain as a step.
    return observers.model_call(execution, params, steps().model_call(execution, params, call))


def _links(execution: Execution) -> tuple[Link, ...]:
    agent = execution.agent
    policy = agent.fallback_policy
    shared = SHARED_BREAKERS.get()
    if shared is not None:
        breakers = shared.breakers_for(policy, policy.breaker_threshold, policy.breaker_cooldown_s)
    else:
        breakers = Breakers(policy.breaker_threshold, policy.breaker_cooldown_s, runtime().clock)
    entries: list[tuple[str, MessagesClient | None, Mapping[str, Any] | None, int | None]]
    entries = [(agent.model, None, None, None)]
    entries += [
        (alternative.model, alternative.client, alternative.model_settings, alternative.max_tokens)
        for alternative in agent.fallback
    ]
    links: list[Link] = []
    for position, (model, given, settings, max_tokens) in enumerate(entries):
        client: Any = execution.client if given is None else (shared.client(given) if shared else given)
        links.append(
            Link(
                position=position,
                model=model,
                client=client,
                own_client=given is None,
                settings=agent.model_settings if settings is None else settings,
                max_tokens=agent.max_tokens if max_tokens is None else max_tokens,
                breaker=breakers.of(client, model),
                server=agent.fallback_on_refusal and supports_server_fallback(client),
            )
        )
    return tuple(links)


class _Trip:
    """One call's way through the chain: the models tried, the switches announced, the counts kept."""

    def __init__(self, execution: Execution, params: dict[str, Any]) -> None:
        self.execution = execution
        self.params = params
        self.state = execution.fallback
        self.links = self.state.links
        self.policy = execution.agent.fallback_policy
        self.calls = 0
        """Calls made (the first is the iteration's own; each later one is one more API call)."""
        self.current = self.state.position
        """The model the execution's calls were going to: a switch is announced when a call goes elsewhere."""
        self.reason: tuple[str, int | None] | None = None
        self.token: tuple[Link, str] | None = None
        """A refusal's fallback credit token, and the model (client) that minted it."""
        self.covered: set[int] = set()
        """Positions a server-side ``fallbacks`` list already tried (they refused with the one asked)."""
        self.refused: Message | None = None
        """A refusal that moved on: answered, but not yet accounted (it is the result if nothing else answers)."""
        self.failure: ApiFailure | None = None

    async def run(self) -> ChainOutcome:
        rotation = self._rotation()
        for index, link in enumerate(rotation):
            if link.position in self.covered:
                continue
            if not link.breaker.allows():
                self._skip(link, "circuit_open", f"skipped: its circuit breaker is open ({link.breaker.last_error})")
                continue
            blocked = None if link.own_client else cannot_move(self.params, self.execution.conversation.messages)
            if blocked is None and link.position:
                blocked = lacks_structured_outputs(self.params, link.model)
            if blocked is not None:
                link.breaker.released()
                self._skip(link, "cannot_move", f"skipped: {blocked}")
                continue
            outcome = await self._try(link, last=index == len(rotation) - 1)
            if outcome is not None:
                return outcome
        return self._exhausted()

    def _rotation(self) -> list[Link]:
        """The order of this call: from where the execution stays (or the agent's own model, its stay over), on."""
        state = self.state
        start = state.position
        if start and state.stay_until is not None and runtime().clock() >= state.stay_until:
            start, self.reason = 0, ("stay_over", None)
        count = len(self.links)
        return [self.links[(start + step) % count] for step in range(count)]

    async def _try(self, link: Link, *, last: bool) -> ChainOutcome | None:
        """Call ``link``'s model; the outcome for the loop, or None to go on to the next model.

        ``last``: no model follows in this call's rotation; before that, a rate limiter does not wait out a 429
        asking for longer than ``max_retry_after_s`` (``WAIT_CAP``): the call moves on.
        """
        execution = self.execution
        if self.calls:
            stop = execution.limit_reached("iteration")
            if stop is not None:
                link.breaker.released()
                return stop
        await self._announce(link)
        self._settle_refusal()
        token = self.token
        redeem = token[1] if token is not None and link.server and token[0].client is link.client else None
        if link.server:
            self.token = None
        request = chain_request(
            self.params,
            link,
            self.links,
            replaced=self.execution.agent.model_settings,
            seams=self.state.seams,
            token=redeem,
        )
        self.calls += 1
        if self.calls > 1:  # one more API call, in the totals of the executions this one is a sub-run of too
            for counted in lineage(execution):
                counted.iterations += 1
        call = _call_of(link, None if last else self.policy.max_retry_after_s)
        cap = WAIT_CAP.set(call.wait_cap)
        try:
            response = await _observed(execution, call, request)
        finally:
            WAIT_CAP.reset(cap)
        if isinstance(response, Interrupted):
            link.breaker.released()
            return response
        if isinstance(response, ApiFailure):
            return self._failed(link, response)
        link.breaker.succeeded()
        return await self._answered(link, request, response)

    def _failed(self, link: Link, failure: ApiFailure) -> ApiFailure | None:
        account_failed_call(self.execution, failure, first=self.calls == 1)
        self._note(link, failure.error_type, failure.status_code, _describe(failure), failure.request_id)
        if not moves_on(failure, self.policy.max_retry_after_s):
            link.breaker.released()
            return failure
        link.breaker.failed(failure.error_type)
        self.failure, self.reason = failure, (failure.error_type, failure.status_code)
        return None

    async def _answered(self, link: Link, request: dict[str, Any], response: Message) -> Message | None:
        execution, state = self.execution, self.state
        served = served_by(response) if "fallbacks" in request else None
        answered = self._served_link(link, served) if served is not None else link
        if answered is not link:
            self.reason = ("refusal", None)
            await self._announce(answered, server_side=True)
        if any(getattr(block, "type", None) == "fallback" for block in response.content):
            state.seams = True
        answered_by(execution, response.model, answered.model)
        if response.stop_reason == "refusal":
            text = "".join(getattr(b, "text", None) or "" for b in response.content if b.type == "text")
            self._note(answered, "refusal", None, f"refused{f': {text!r}' if text else ''}", None)
            if execution.agent.fallback_on_refusal:
                self._refusal(link, request, response)
                return None
        self._stay(answered)
        state.answered = answered.model
        return response

    def _refusal(self, link: Link, request: dict[str, Any], response: Message) -> None:
        """A refusal moves on: kept until the next call (or given to the loop if no other model answers)."""
        self.refused = response
        self.state.answered = link.model
        self.reason = ("refusal", None)
        self.failure = None
        entries = request.get("fallbacks") or ()
        for later in self.links[link.position + 1 : link.position + 1 + len(entries)]:
            self.covered.add(later.position)
            self._note(later, "refusal", None, "refused (the API's server-side fallback)", None)
        recommended = recommended_model(response)
        for later in self.links:
            if later.position in self.covered and later.model == recommended:
                self.covered.discard(later.position)  # its server-side try could not run: try it here
        token = credit_token(response)
        self.token = (link, token) if token is not None else None

    def _settle_refusal(self) -> None:
        """Account for a refusal that moved on, once another call is made (it was billed; it stays out of the turn)."""
        if self.refused is not None:
            add_response_usage(self.execution, self.refused.usage, self.state.answered)
            self.refused = None

    def _served_link(self, link: Link, model: str) -> Link:
        for later in self.links[link.position + 1 :]:
            if later.model == model or model.startswith(f"{later.model}-"):
                return later
        return link

    async def _announce(self, link: Link, *, server_side: bool = False) -> None:
        """Tell the callbacks (and the observers) that the calls move to ``link``'s model."""
        if link.position == self.current:
            return
        reason, status = self.reason or ("stay_over", None)
        event = FallbackSwitch(
            from_model=self.links[self.current].model,
            to_model=link.model,
            position=link.position,
            reason=reason,
            status_code=status,
            server_side=server_side,
        )
        self.current = link.position
        observers.fell_back(self.execution, event)
        await self.execution.hooks.fallback(event)

    def _stay(self, link: Link) -> None:
        state = self.state
        state.position = link.position
        state.stay_until = runtime().clock() + self.policy.stay_s if link.position else None

    def _skip(self, link: Link, error_type: str, message: str) -> None:
        self._note(link, error_type, None, message, None)
        if self.reason is None or self.calls == 0:
            self.reason = (error_type, None)

    def _note(self, link: Link, error_type: str, status: int | None, message: str, request_id: str | None) -> None:
        self.state.tried.append(
            AlternativeFailure(
                model=link.model, error_type=error_type, status_code=status, message=message, request_id=request_id
            )
        )

    def _exhausted(self) -> Message | ApiFailure:
        """No model answered: the last refusal (for the loop to end with), the last failure, or why none was called."""
        if self.refused is not None:
            return self.refused
        if self.failure is not None:
            return self.failure
        # Every model was skipped: nothing was sent, so the iteration is taken back.
        self.execution.take_back_iteration()
        problem = RuntimeError(
            "no model of the fallback chain could be called: "
            + "; ".join(f"{t.model}: {t.message}" for t in self.state.tried)
        )
        return not_sent(problem, "no_model_available")


def _call_of(link: Link, wait_cap: float | None) -> ModelCall:
    """Where the call to ``link``'s model goes: the execution's own client, or the alternative's (by its index)."""
    if link.own_client:
        return ModelCall(wait_cap=wait_cap)
    return ModelCall(client=link.client, alternative=link.position - 1, wait_cap=wait_cap)


def _describe(failure: ApiFailure) -> str:
    return safe_str(failure.cause) or type(failure.cause).__name__

"""The arguments of ``execute_agent``: the "not passed" sentinel and the checks made before anything is sent."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

from .._agent.definition import AgentDefinition
from .._api.beta import check_beta_client
from .._api.pricing import price_for
from .._shared.events import ExecuteCallbacks
from .._shared.limits import ExecutionLimits
from .._shared.pausing import PausedState

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, MessageParam

__all__ = ["MISSING", "check_arguments", "check_client", "check_pausing", "check_tools_can_wait"]


class _Missing:
    def __repr__(self) -> str:
        return "<not passed>"

    def __reduce__(self) -> str:
        # The module global: pickle, copy and deepcopy give back MISSING itself (DBOS pickles a workflow's
        # arguments, and a recovered run must still see "not passed", not a new object).
        return "MISSING"


MISSING: Final = _Missing()
"""``deps`` was not passed (``None`` is a valid value)."""

HISTORY_SHAPE: Final = "{'role': 'user' or 'assistant', 'content': a str or a list of content blocks}"


def check_arguments(
    agent: AgentDefinition[Any, Any],
    prompt: str | Sequence[ContentBlockParam] | None,
    deps: object,
    limits: ExecutionLimits | None,
    callbacks: ExecuteCallbacks | None,
    history: Sequence[MessageParam] | None,
    client: object = None,
    abort_event: object = None,
) -> None:
    """Raise ``TypeError`` (``ValueError`` for a history the API would refuse) before anything is sent.

    ``prompt`` is None only when the execution resumes a paused one (``check_pausing`` checks that).
    """
    if not isinstance(agent, AgentDefinition):
        raise TypeError(f"execute_agent() needs an AgentDefinition from define_agent(), got {type(agent).__name__}.")
    if prompt is not None:
        _check_prompt(prompt, history)
    if agent.deps_type is not None and deps is MISSING:
        raise TypeError(
            f"Agent {agent.name!r} declares deps_type={agent.deps_type.__name__}: pass execute_agent(..., deps=...)."
        )
    if limits is not None and not isinstance(limits, ExecutionLimits):
        raise TypeError(f"limits must be an ExecutionLimits, got {type(limits).__name__}.")
    if limits is not None and limits.max_cost_usd is not None:
        for model in (agent.model, *(alternative.model for alternative in agent.fallback)):
            if price_for(model) is None:
                raise ValueError(
                    f"ExecutionLimits.max_cost_usd needs the price of model {model!r}, which typedagent does not "
                    f"know: call typedagent.register_price({model!r}, ModelPrice(input=..., output=..., "
                    "cache_write=..., cache_read=...)) first, or drop max_cost_usd."
                )
    if callbacks is not None and not isinstance(callbacks, ExecuteCallbacks):
        raise TypeError(f"callbacks must be an ExecuteCallbacks, got {type(callbacks).__name__}.")
    if history is not None and prompt is not None:
        _check_history(history, prompt)
    if client is not None:
        check_client(client)
        check_beta_client(agent.model_settings, client)
    for alternative in agent.fallback:
        if alternative.client is not None:
            check_client(alternative.client)
        if alternative.client is not None or client is not None:
            settings = agent.model_settings if alternative.model_settings is None else alternative.model_settings
            check_beta_client(settings, alternative.client or client)
    if abort_event is not None and not _is_event(abort_event):
        raise TypeError(
            f"abort_event must be a threading.Event or an asyncio.Event, got {type(abort_event).__name__}: "
            "create one, pass it, and call its set() to cancel the execution."
        )


def _check_prompt(prompt: object, history: Sequence[MessageParam] | None) -> None:
    if not isinstance(prompt, str) and not (
        isinstance(prompt, Sequence) and all(isinstance(b, dict) for b in cast("Sequence[object]", prompt))
    ):
        raise TypeError("prompt must be a str or a list of Messages API content blocks (dicts).")
    empty = not prompt.strip() if isinstance(prompt, str) else not prompt
    if empty and not history:
        raise TypeError("prompt is empty: give the model something to work on (or pass message_history).")


def check_pausing(
    agent: AgentDefinition[Any, Any],
    prompt: object,
    history: object,
    pausable: object,
    approve: object,
    resume: object,
    decisions: object,
) -> None:
    """Raise ``TypeError`` for wrong pausing arguments, ``ValueError`` when the agent's tools need one not given."""
    if not isinstance(pausable, bool):
        raise TypeError(f"pausable must be True or False, got {pausable!r}.")
    if approve is not None and not callable(approve):
        raise TypeError(
            "approve must be a callable taking a PendingCall and returning Approve() or Deny(reason), "
            f"got {approve!r:.100}."
        )
    if resume is None:
        if prompt is None:
            raise TypeError("execute_agent() needs a prompt (or resume=state to go on with a paused execution).")
        if decisions is not None:
            raise TypeError("decisions= goes with resume=state: it decides the calls a paused execution waits on.")
    else:
        if not isinstance(resume, PausedState):
            raise TypeError(
                "resume must be a PausedState (PausedState.from_json(text) reads a stored one), "
                f"got {type(resume).__name__}."
            )
        if prompt is not None or history is not None:
            raise TypeError(
                "a resumed execution goes on with the conversation of its state: drop prompt and message_history."
            )
    check_tools_can_wait(agent, pausable or resume is not None, approves=approve is not None)


def check_tools_can_wait(agent: AgentDefinition[Any, Any], pausable: object, *, approves: bool = False) -> None:
    """Raise ``ValueError`` when the agent has tools that wait for a decision and nothing can give it.

    Raises:
        TypeError: ``pausable`` is not a bool.
    """
    if not isinstance(pausable, bool):
        raise TypeError(f"pausable must be True or False, got {pausable!r}.")
    external = [helper.name for helper in agent.helpers if helper.external]
    approval = [helper.name for helper in agent.helpers if helper.requires_approval is not False]
    approval += [f"toolset {toolset.label}" for toolset in agent.toolsets if toolset.requires_approval]
    if external and not pausable:
        raise ValueError(
            f"Agent {agent.name!r} has external tools ({', '.join(map(repr, external))}), whose results come from "
            "outside the execution: pass execute_agent(..., pausable=True) to pause at their calls, then resume "
            "with ExternalResult(...) decisions."
        )
    if approval and not pausable and not approves:
        raise ValueError(
            f"Agent {agent.name!r} has tools that need approval ({', '.join(map(repr, approval))}): pass "
            "execute_agent(..., approve=callback) to decide each call as it comes, or pausable=True to pause at "
            "them and resume later with Approve() / Deny(reason)."
        )


def _is_event(value: object) -> bool:
    # Anything else with an is_set() method (a multiprocessing event) is polled like a threading.Event.
    return isinstance(value, threading.Event | asyncio.Event) or callable(getattr(value, "is_set", None))


def check_client(client: object) -> None:
    """Raise ``TypeError`` when ``client`` cannot be a client: a class, a sync SDK client, no ``messages.create``."""
    if isinstance(client, type):
        raise TypeError(f"client is the class {client.__name__}: pass an instance, e.g. client={client.__name__}(...).")
    messages = getattr(client, "messages", None)
    if not callable(getattr(messages, "create", None)):
        raise TypeError(
            "client must have an async messages.create(...) (an AsyncAnthropic, AsyncAnthropicBedrock, "
            f"AsyncAnthropicVertex or a typedagent.testing client), got {type(client).__name__}."
        )
    if _is_sync_sdk_resource(messages):
        raise TypeError(
            f"client is a synchronous Anthropic SDK client ({type(client).__name__}): use anthropic.AsyncAnthropic "
            "(or the Async variant of your client); execute_agent awaits messages.create."
        )


def _is_sync_sdk_resource(resource: object) -> bool:
    # Only an SDK that is already imported can have made the client: never import it just to check.
    module = sys.modules.get("anthropic._resource")
    sync_resource = getattr(module, "SyncAPIResource", None)
    return isinstance(sync_resource, type) and isinstance(resource, sync_resource)


def _check_history(history: Sequence[MessageParam], prompt: str | Sequence[ContentBlockParam]) -> None:
    if isinstance(history, str) or not isinstance(history, Sequence):
        raise TypeError(f"message_history must be a list of Messages API messages ({HISTORY_SHAPE}).")
    for index, message in enumerate(cast("Sequence[object]", history)):
        if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant"):  # pyright: ignore[reportUnknownMemberType]
            raise TypeError(
                f"message_history must be a list of Messages API messages ({HISTORY_SHAPE}); "
                f"message_history[{index}] is {message!r:.100}."
            )
        entry = cast("Mapping[str, object]", message)
        if "content" not in entry:
            raise TypeError(f"message_history[{index}] has no 'content': each message is {HISTORY_SHAPE}.")
        content = entry["content"]
        if not isinstance(content, str | list | tuple):
            raise TypeError(
                f"message_history[{index}]['content'] must be a str or a list of content blocks, "
                f"got {type(content).__name__}."
            )
    unanswered: set[str] = _tool_use_ids(history[-1]) - _tool_result_ids(prompt) if history else set()
    if unanswered:
        raise ValueError(
            f"message_history ends with an assistant turn whose tool_use {', '.join(map(repr, sorted(unanswered)))} "
            "has no tool_result, which the API refuses. Answer it (pass the tool_result blocks as the prompt, or "
            "append a user message holding them) or drop that turn."
        )


def _blocks(content: object) -> list[Any]:
    return [] if isinstance(content, str) else list(cast("Sequence[Any]", content))


def _field(block: object, name: str) -> object:
    return block.get(name) if isinstance(block, Mapping) else getattr(block, name, None)  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]


def _tool_use_ids(message: MessageParam) -> set[str]:
    if message["role"] != "assistant":
        return set()
    return {str(_field(b, "id")) for b in _blocks(message["content"]) if _field(b, "type") == "tool_use"}


def _tool_result_ids(prompt: str | Sequence[ContentBlockParam]) -> set[str]:
    return {str(_field(b, "tool_use_id")) for b in _blocks(prompt) if _field(b, "type") == "tool_result"}

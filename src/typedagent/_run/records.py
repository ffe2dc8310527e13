"""What a durable engine records of an execution's steps: model calls and helper calls, as JSON.

``typedagent.temporal`` and ``typedagent.dbos`` run each model call and each helper call as a recorded step (an
activity, a DBOS step); what a step returns is kept in the engine's history and handed back, instead of running
the call again, when the execution is replayed. Everything here is JSON through pydantic: a response travels as
the Messages API's own JSON and is rebuilt as the SDK's ``Message``, a failed call as the fields of its
``ApiFailure`` (its exception as a type name and a message), and the deps of a helper call as the agent's
``deps_type``, so a tool gets them typed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import pydantic
import pydantic_core
from anthropic.types import Message
from anthropic.types.beta import BetaMessage

from .._agent.delegation import _AgentTool
from .._api.api_errors import ApiFailure
from .._api.client import CLIENT_IN_CONTEXT, MessagesClient, default_client
from .._api.fallback import WAIT_CAP
from .._api.model_call import call_model
from .._shared.limits import Guard, Interrupted
from .._shared.results import TokenUsage
from .reply import Reply
from .tool_call import run_helper

if TYPE_CHECKING:
    from .._agent.context import RunContext
    from .._agent.definition import AgentDefinition

__all__ = [
    "NO_CLIENT",
    "ClientSource",
    "DurableCallError",
    "FailureData",
    "ModelCallInput",
    "ModelCallOutput",
    "StepClient",
    "ToolCallOutput",
    "refuse_unsupported",
    "run_recorded_helper",
    "run_recorded_model_call",
    "tool_input_type",
]


class DurableCallError(Exception):
    """The exception behind a model call that failed in a recorded step, as the replayed execution sees it."""

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(f"{type_name}: {message}" if message else type_name)
        self.type_name = type_name
        self.detail = message

    def __reduce__(self) -> tuple[type[DurableCallError], tuple[str, str]]:
        return (DurableCallError, (self.type_name, self.detail))


class FailureData(pydantic.BaseModel):
    """An ``ApiFailure`` as JSON."""

    status_code: int | None
    error_type: str
    request_id: str | None
    advice: str
    sent: bool
    usage: dict[str, int] | None
    cause_type: str
    cause_message: str

    @classmethod
    def of(cls, failure: ApiFailure) -> FailureData:
        """The JSON form of ``failure``."""
        return cls(
            status_code=failure.status_code,
            error_type=failure.error_type,
            request_id=failure.request_id,
            advice=failure.advice,
            sent=failure.sent,
            usage=None if failure.usage is None else dataclasses.asdict(failure.usage),
            cause_type=type(failure.cause).__name__,
            cause_message=str(failure.cause),
        )

    def rebuild(self) -> ApiFailure:
        """The ``ApiFailure`` again (its cause a ``DurableCallError``)."""
        return ApiFailure(
            cause=DurableCallError(self.cause_type, self.cause_message),
            status_code=self.status_code,
            error_type=self.error_type,
            request_id=self.request_id,
            advice=self.advice,
            sent=self.sent,
            usage=None if self.usage is None else TokenUsage(**self.usage),
        )


class ModelCallInput(pydantic.BaseModel):
    """One model call's request: the Messages API parameters, as the loop built them."""

    params: dict[str, Any]
    alternative: int | None = None
    """The fallback alternative whose own client makes the call (its index), None for the worker's client."""
    wait_cap: float | None = None
    """The longest a rate limiter may wait out a 429 before the call goes back to the fallback chain."""


class ModelCallOutput(pydantic.BaseModel):
    """One model call's outcome: the response's JSON, or the failure."""

    message: dict[str, Any] | None = None
    failure: FailureData | None = None

    @classmethod
    def of(cls, outcome: object) -> ModelCallOutput:
        """The JSON form of what ``call_model`` returned (a response or an ``ApiFailure``)."""
        if isinstance(outcome, ApiFailure):
            return cls(failure=FailureData.of(outcome))
        return cls(message=pydantic_core.to_jsonable_python(outcome, by_alias=True, exclude_none=False))

    def rebuild(self, *, beta: bool) -> Message | ApiFailure:
        """The response as the SDK's ``Message`` (``BetaMessage`` for a beta request), or the failure."""
        if self.failure is not None:
            return self.failure.rebuild()
        # construct(): the SDK's own lenient build (nested blocks included, block types it does not know kept).
        kind: Any = BetaMessage if beta else Message
        message: Message = kind.construct(**(self.message or {}))
        return message


class ToolCallOutput(pydantic.BaseModel):
    """One helper call's result: its text or content blocks, and whether it is an error."""

    content: str | list[dict[str, Any]]
    is_error: bool


class _ToolCallInput(pydantic.BaseModel):
    tool: str
    tool_use_id: str
    input: dict[str, Any]
    attempt: int
    iteration: int
    tokens: dict[str, int]


def tool_input_type(deps_type: type[Any] | None) -> type[_ToolCallInput]:
    """The input of a helper call's activity, its ``deps`` field of the agent's ``deps_type`` (so they arrive typed)."""
    deps: Any = Any if deps_type is None else deps_type
    model: type[_ToolCallInput] = pydantic.create_model(
        "ToolCallInput",
        __base__=_ToolCallInput,
        deps=(deps, None),
    )
    return model


@dataclass(frozen=True, slots=True)
class _Block:
    """The ``tool_use`` block a helper call answers (what ``run_helper`` reads of it)."""

    id: str
    name: str
    input: dict[str, Any]


async def run_recorded_helper(
    agent: AgentDefinition[Any, Any], name: str, tool_use_id: str, tool_input: dict[str, Any], ctx: RunContext[Any]
) -> ToolCallOutput:
    """Run one helper call as the loop would (``run_helper``) and return its result, to record as a step's output."""
    reply = Reply(_Block(tool_use_id, name, tool_input), "helper")
    await run_helper(reply, agent.helper(name), ctx, agent.max_tool_result_chars)
    return ToolCallOutput(content=reply.blocks if reply.blocks is not None else reply.content, is_error=reply.is_error)


async def run_recorded_model_call(
    agent: AgentDefinition[Any, Any], clients: StepClient, call: ModelCallInput
) -> ModelCallOutput:
    """Make one model call as the loop would (``call_model``), to record its outcome as a step's output.

    The call goes to the worker's client, or to the client of the fallback alternative ``call.alternative``.
    """
    client = clients.get() if call.alternative is None else agent.fallback[call.alternative].client
    cap = WAIT_CAP.set(call.wait_cap)
    try:
        outcome = await call_model(cast("MessagesClient", client), call.params, Guard(None, None))
    finally:
        WAIT_CAP.reset(cap)
    if isinstance(outcome, Interrupted):  # pragma: no cover - no abort event and no deadline here
        raise RuntimeError("typedagent: a model call without a guard was interrupted")
    return ModelCallOutput.of(outcome)


def refuse_unsupported(agent: AgentDefinition[Any, Any], wrapper: str) -> None:
    """Refuse, at wrap time, what a durable execution cannot record as steps yet: toolsets, and sub-agents.

    Raises:
        ValueError: ``agent`` has toolsets (MCP servers), or tools that run another agent (``as_tool``).
    """
    if agent.toolsets:
        raise ValueError(
            f"{wrapper} does not run agents with toolsets (MCP servers) yet: agent {agent.name!r} has "
            f"{len(agent.toolsets)}. Give the durable agent helper tools (which run as recorded steps) instead."
        )
    delegating = [helper.name for helper in agent.helpers if isinstance(helper, _AgentTool)]
    if delegating:
        raise ValueError(
            f"{wrapper} does not run agents that delegate to other agents yet: tool(s) {delegating} of agent "
            f"{agent.name!r} run a sub-agent (as_tool()), whose own model and tool calls would not be recorded steps. "
            "Wrap the sub-agent in a durable agent of its own and call it from your workflow, or from a helper tool "
            "that runs execute_agent (the whole sub-run is then one recorded step)."
        )


ClientSource = MessagesClient | Callable[[], MessagesClient] | None
"""The client a worker's model-call activities use: one, a function that makes one, or None for the default."""


class StepClient:
    """The worker's client, made once when first needed (the default: ``use_client``'s, else ``AsyncAnthropic()``)."""

    def __init__(self, source: ClientSource) -> None:
        self.source = source
        self.made: MessagesClient | None = None

    def get(self) -> MessagesClient:
        source = self.source
        if source is None:
            in_context = CLIENT_IN_CONTEXT.get()
            if in_context is not None:
                return in_context
        made = self.made
        if made is None:
            if source is None:
                made = default_client()
            elif hasattr(source, "messages"):
                made = cast("MessagesClient", source)
            else:
                factory: Any = source  # a function that makes the client
                made = cast("MessagesClient", factory())
            self.made = made
        return made


class _NoClient:
    """The client of an execution whose model calls are recorded steps: the steps call theirs, never this one."""

    class _Messages:
        def create(self, **params: Any) -> Any:  # pragma: no cover - the steps never call it
            raise RuntimeError("typedagent: a durable execution's model calls run as recorded steps")

    messages = _Messages()


NO_CLIENT: Any = _NoClient()
"""The ``client=`` of an execution inside a durable workflow (a workflow makes no calls of its own)."""

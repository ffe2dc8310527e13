"""A paused execution: the calls it waits on, its state as a storable value, and the result that hands both over."""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

from typing_extensions import TypeVar

from .decisions import Approve, Deny
from .limits import ExecutionLimits
from .paused_json import StateData, read_state
from .results import ExecuteFailure, ExecuteSuccess, ExecutionMetadata, TokenUsage

if TYPE_CHECKING:
    from anthropic.types import MessageParam

__all__ = ["Approver", "ExecutePaused", "PausableResult", "PausedState", "PendingCall", "PendingKind"]

OutputT_co = TypeVar("OutputT_co", covariant=True)

PendingKind: TypeAlias = Literal["approval", "external"]
"""Why a tool call waits: a person must approve it, or its result comes from outside."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PendingCall:
    """A tool call the execution paused at, waiting for a decision."""

    id: str
    """The ``tool_use`` id: the key of its decision in ``decisions={...}``."""
    name: str
    """The tool's name."""
    input: dict[str, Any]
    """The arguments as the model wrote them (a copy)."""
    kind: PendingKind
    """``approval`` (decide with ``Approve()`` or ``Deny(reason)``) or ``external`` (``ExternalResult(...)``)."""


@dataclass(frozen=True, slots=True)
class PausedState:
    """Everything a paused execution needs to go on, as a value: store it with ``to_json()``, resume from it.

    It holds the conversation, the attempt and iteration counters, token usage, cost, the running time, tool-call
    counts, the reflection candidate, the pending calls, the execution's limits and a fingerprint of the agent
    (model, tools, output) it was paused with. It holds no API key, client or deps. Resume with
    ``execute_agent(agent, resume=state, decisions={...}, deps=...)``.
    """

    _data: StateData = field(repr=False)

    def __repr__(self) -> str:
        names = ", ".join(f"{call.name}:{call.kind}" for call in self.pending)
        return f"PausedState(id={self.id!r}, agent_name={self.agent_name!r}, pending=[{names}])"

    @property
    def id(self) -> str:
        """The execution's id, the same through every pause (a good key to store the state under)."""
        return self._data["id"]

    @property
    def agent_name(self) -> str:
        """The name of the agent that was running."""
        return self._data["agent"]

    @property
    def pending(self) -> tuple[PendingCall, ...]:
        """The tool calls waiting for a decision, in the order the model made them."""
        return tuple(
            PendingCall(id=call["id"], name=call["name"], input=copy.deepcopy(call["input"]), kind=call["hold"])
            for call in self._data["batch"]
            if call["hold"] is not None
        )

    @property
    def messages(self) -> list[MessageParam]:
        """The conversation so far (a copy), ending with the model's turn that made the pending calls."""
        return cast("list[MessageParam]", copy.deepcopy(self._data["conversation"]))

    @property
    def tokens(self) -> TokenUsage:
        """Tokens used so far."""
        return TokenUsage(**self._data["totals"]["tokens"])

    @property
    def limits(self) -> ExecutionLimits:
        """The execution's limits (``execute_agent(resume=..., limits=...)`` replaces them)."""
        return ExecutionLimits(**self._data["limits"])

    @property
    def elapsed_s(self) -> float:
        """Running time so far, in seconds (the time spent paused is not counted)."""
        return self._data["elapsed_s"]

    @property
    def pauses(self) -> int:
        """How many times the execution has paused, this pause included."""
        return self._data["pauses"]

    def to_json(self) -> str:
        """The state as JSON text (versioned by its top-level ``"version"``), to store anywhere text goes."""
        return json.dumps(self._data, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> PausedState:
        """The state ``to_json()`` wrote.

        Raises:
            ValueError: the text is not a paused state, was written by a newer typedagent (a higher format
                ``"version"``), or is damaged.
        """
        return cls(read_state(text))


@dataclass(frozen=True, kw_only=True, slots=True)
class ExecutePaused:
    """An execution that paused at tool calls waiting for a decision (``execute_agent(..., pausable=True)``).

    Store ``state`` (``state.to_json()``), decide each of ``pending``, then resume:
    ``execute_agent(agent, resume=state, decisions={call.id: Approve(), ...})``.
    """

    ok: Literal[False] = False
    """Always False: only a success is ``ok``."""
    status: Literal["paused"] = field(default="paused", init=False)
    """Always ``"paused"``: ``if result.status == "paused":`` narrows to this class."""
    pending: tuple[PendingCall, ...]
    """The calls waiting, in the order the model made them."""
    state: PausedState
    """The execution's state, to store and resume from."""
    metadata: ExecutionMetadata
    """Tokens, attempts, conversation, … so far."""


PausableResult: TypeAlias = ExecuteSuccess[OutputT_co] | ExecuteFailure | ExecutePaused
"""What ``execute_agent(..., pausable=True)`` returns, and a resumed execution: ``result.status`` discriminates."""


Approver: TypeAlias = Callable[[PendingCall], Approve | Deny | Awaitable[Approve | Deny]]
"""``execute_agent(approve=...)``: decides each call that needs approval as it comes; sync or async."""

"""The JSON format of a paused execution's state, version 1: its shape, and the check of a text read back.

A state is read from a database, a file or a workflow's history, so ``read_state`` trusts nothing: the text must
be JSON, of a format version this typedagent reads, with every field of the right type, and a conversation that
ends with the tool calls the state says are waiting.
"""

from __future__ import annotations

import functools
import json
from typing import Annotated, Any, Final, Literal, NotRequired, cast

import pydantic
from typing_extensions import TypedDict

from .errors import AgentDefinitionError, AgentErrorCode
from .limits import ExecutionLimits

__all__ = ["FORMAT", "VERSION", "StateData", "read_state"]

VERSION: Final = 1
"""The format version this typedagent writes (and the newest it reads)."""
FORMAT: Final = "typedagent.paused_state"
"""The ``format`` field: says what the JSON document is."""

Count = Annotated[int, pydantic.Field(ge=0)]
_OUTCOMES: Final = frozenset(code.value for code in AgentErrorCode)


class Usage(TypedDict):
    """``TokenUsage``'s counters."""

    input_tokens: Count
    output_tokens: Count
    cache_creation_input_tokens: Count
    cache_read_input_tokens: Count
    web_search_requests: Count
    web_fetch_requests: Count
    cache_creation_1h_input_tokens: NotRequired[Count]
    """Part of ``cache_creation_input_tokens`` (absent from states written before it was counted)."""


class Message(TypedDict):
    """One Messages API message."""

    role: Literal["user", "assistant"]
    content: str | list[dict[str, Any]]


class Result(TypedDict):
    """The ``tool_result`` settled for a call before the pause."""

    content: str | list[dict[str, Any]]
    is_error: bool
    duration_ms: Annotated[float, pydantic.Field(ge=0)]


class Call(TypedDict):
    """One ``tool_use`` of the paused response: settled (``result``), waiting (``hold``), or handled on resume."""

    id: Annotated[str, pydantic.Field(min_length=1)]
    name: str
    input: dict[str, Any]
    kind: Literal["helper", "output", "submit", "unknown"]
    hold: Literal["approval", "external"] | None
    result: Result | None


class Attempt(TypedDict):
    """The attempt the pause interrupted."""

    number: Annotated[int, pydantic.Field(ge=1)]
    iteration: Count
    tokens: Usage
    candidate: dict[str, Any] | None
    schema_problems: list[str]
    output_forced: bool


class Record(TypedDict):
    """An attempt that ended before the pause (``AttemptRecord``)."""

    number: Annotated[int, pydantic.Field(ge=1)]
    iterations: Count
    tokens: Usage
    outcome: str
    candidate: dict[str, Any] | None
    validation_errors: list[str]
    output_forced: bool


class Fallback(TypedDict):
    """Where the execution's model calls go in the agent's fallback chain (``define_agent(fallback=...)``)."""

    position: Count
    """0 for the agent's own model, 1 for the first alternative, …"""
    stay_until_unix: float | None
    """Wall-clock time (``time.time()``) until which the calls stay on that alternative; None on the own model."""
    seams: bool
    """The conversation holds ``fallback`` blocks (a server-side fallback served a response)."""
    answered: str | None
    """The model whose price the last response has."""


class Totals(TypedDict):
    """What the execution has used and produced so far."""

    tokens: Usage
    cost_usd: Annotated[float, pydantic.Field(ge=0)]
    cache_savings_usd: NotRequired[float]
    """What prompt caching saved so far (negative when writes cost more; absent from older states)."""
    cost_complete: NotRequired[bool]
    """False once a sub-run's model had no price: the cost is then unknown (absent from older states)."""
    iterations: Count
    tool_calls: Count
    response_model: str | None
    last_output: dict[str, Any] | None
    models_used: NotRequired[list[str]]
    """The model that answered each call so far (absent from older states)."""
    fallback: NotRequired[Fallback]
    """Where the calls go in the fallback chain (absent from older states and agents without one)."""


class Limits(TypedDict):
    """``ExecutionLimits``' fields."""

    max_total_tokens: int | None
    timeout_s: float | None
    max_requests: int | None
    max_tool_calls: int | None
    max_cost_usd: float | None


class Fingerprint(TypedDict):
    """What the state's conversation assumes of the agent: its model, its tools' schemas, its output."""

    model: str
    tools: dict[str, str]
    output: str


class CallbackError(TypedDict):
    """A callback that raised (``CallbackError``)."""

    callback: str
    error_type: str
    message: str


class Request(TypedDict):
    """What the requests send besides the conversation: the system prompt, the container, forcing."""

    system: str
    can_force: bool
    container: str | dict[str, Any] | None


class StateData(TypedDict):
    """A paused execution, version 1."""

    version: int
    format: Literal["typedagent.paused_state"]
    id: str
    agent: str
    fingerprint: Fingerprint
    limits: Limits
    elapsed_s: Annotated[float, pydantic.Field(ge=0)]
    pauses: Annotated[int, pydantic.Field(ge=1)]
    request: Request
    conversation: list[Message]
    attempt: Attempt
    totals: Totals
    records: list[Record]
    warnings: list[str]
    callback_errors: list[CallbackError]
    batch: list[Call]
    trace: str | None


@functools.cache
def _adapter() -> pydantic.TypeAdapter[StateData]:
    """Built on first use: most programs never read a state back."""
    return pydantic.TypeAdapter(StateData)


def read_state(text: str | bytes) -> StateData:
    """Parse and check a state's JSON text.

    Raises:
        ValueError: the text is not JSON, not a typedagent state, of a newer format version, or damaged.
    """
    if not isinstance(text, str | bytes | bytearray):
        raise TypeError(f"PausedState.from_json() takes the text to_json() wrote, got {type(text).__name__}.")
    try:
        raw: object = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"not a paused execution's state: the text is not JSON ({exc}).") from None
    fields = cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}
    if fields.get("format") != FORMAT:
        raise ValueError(f'not a paused execution\'s state: its JSON has no "format": "{FORMAT}".')
    version = fields.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(f'the paused state is damaged: its "version" is {version!r}, not a format version.')
    if version > VERSION:
        raise ValueError(
            f"the paused state was written in format version {version} by a newer typedagent; this one reads up to "
            f"version {VERSION}: upgrade typedagent to resume it."
        )
    try:
        _adapter().validate_python(fields, strict=True)
    except pydantic.ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "(root)"
        raise ValueError(
            f"the paused state is damaged ({exc.error_count()} problem(s)); first, at {where}: {first['msg']}."
        ) from None
    data = cast("StateData", fields)  # checked; kept as read, so that writing it again gives the same text
    _check_batch(data)
    for record in data["records"]:
        if record["outcome"] not in _OUTCOMES:
            raise ValueError(f"the paused state is damaged: an attempt's outcome is {record['outcome']!r}.")
    try:
        ExecutionLimits(**data["limits"])
    except AgentDefinitionError as exc:
        raise ValueError(f"the paused state is damaged: its limits are not limits ({exc})") from None
    return data


def _check_batch(data: StateData) -> None:
    """The conversation must end with the paused response, whose tool calls are the batch's, in order."""
    batch = data["batch"]
    if not any(call["hold"] is not None for call in batch):
        raise ValueError("the paused state is damaged: none of its tool calls waits for a decision.")
    for call in batch:
        later = call["kind"] in ("output", "submit")  # handled once the waiting calls are decided
        settled, waiting = call["result"] is not None, call["hold"] is not None
        wrong_hold = waiting and call["kind"] != "helper"
        if wrong_hold or (settled == waiting and not later) or (later and settled):
            raise ValueError(f"the paused state is damaged: tool call {call['id']!r} is in no state it can be in.")
    conversation = data["conversation"]
    last = conversation[-1] if conversation else None
    content = last["content"] if last is not None and last["role"] == "assistant" else []
    uses = [block.get("id") for block in content if isinstance(block, dict) and block.get("type") == "tool_use"]
    if uses != [call["id"] for call in batch] or len(set(uses)) != len(uses):
        raise ValueError(
            "the paused state is damaged: its conversation does not end with the tool calls it says are waiting."
        )

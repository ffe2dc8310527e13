"""The decisions that resume a paused execution: approve or deny a tool call, or hand over an external tool's result.

Each decision is plain data (a dict of arguments, a text, a JSON-able value), so a decision made in another
process — a web request, a workflow signal — travels as JSON: ``decision_to_json`` and ``decision_from_json``
are its wire form.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Final, TypeAlias, cast

__all__ = [
    "DEFAULT_DENIAL",
    "Approve",
    "Decision",
    "Deny",
    "ExternalResult",
    "decision_from_json",
    "decision_to_json",
]

DEFAULT_DENIAL: Final = "The user did not approve this tool call."


@dataclass(frozen=True, kw_only=True, slots=True)
class Approve:
    """Run a tool call that waited for approval: as the model wrote it, or with edited arguments.

    Edited arguments (``Approve(input={...})``) are validated as the model's are: input that does not fit the
    tool's signature goes back to the model as that call's error, and the tool does not run.
    """

    input: Mapping[str, Any] | None = None
    """The arguments to run the tool with instead of the model's (None: the model's own)."""

    def __post_init__(self) -> None:
        if self.input is not None:
            if not isinstance(self.input, Mapping):
                raise TypeError(f"Approve(input=...) must be a dict of the tool's arguments, got {self.input!r:.100}.")
            object.__setattr__(self, "input", copy.deepcopy(dict(self.input)))


@dataclass(frozen=True, slots=True)
class Deny:
    """Do not run a tool call that waited for approval; the model reads ``reason`` as the tool's error."""

    reason: str = DEFAULT_DENIAL
    """Why, for the model (it may try another way): "not outside the sandbox", "ask the user first"."""

    def __post_init__(self) -> None:
        if not isinstance(self.reason, str):
            raise TypeError(f"Deny(reason) must be a str, got {type(self.reason).__name__}.")


@dataclass(frozen=True, slots=True)
class ExternalResult:
    """The result of an external tool call, made outside the execution: ``ExternalResult(value)``, or an error.

    ``value`` is rendered as a helper's return value is (a ``str`` as it is, models, dicts and lists as JSON);
    ``ExternalResult(error="...")`` goes back to the model as the tool's error instead.
    """

    value: object = None
    """What the tool returned."""
    _: KW_ONLY
    error: str | None = field(default=None)
    """The tool failed: the model reads this as its error (``value`` must then be left out)."""

    def __post_init__(self) -> None:
        if self.error is not None:
            if not isinstance(self.error, str):
                raise TypeError(f"ExternalResult(error=...) must be a str, got {type(self.error).__name__}.")
            if self.value is not None:
                raise ValueError("ExternalResult takes a value or an error, not both.")


Decision: TypeAlias = Approve | Deny | ExternalResult
"""What ``execute_agent(resume=..., decisions={call_id: decision})`` takes for each pending call."""


def decision_to_json(decision: Decision) -> dict[str, Any]:
    """A decision as JSON data: ``{"approve": true}`` (and ``"input"``), ``{"deny": ...}``, ``{"result": ...}`` etc."""
    if isinstance(decision, Approve):
        return {"approve": True} if decision.input is None else {"approve": True, "input": dict(decision.input)}
    if isinstance(decision, Deny):
        return {"deny": decision.reason}
    if decision.error is not None:
        return {"error": decision.error}
    return {"result": decision.value}


def decision_from_json(data: object, where: str = "decision") -> Decision:
    """The decision ``decision_to_json`` wrote (also what a ``decisions.json`` file holds per call id).

    Raises:
        ValueError: ``data`` is not one of the four shapes; the message names ``where``.
    """
    shapes = (
        '{"approve": true}, {"approve": true, "input": {...}}, {"deny": "reason"}, {"result": ...} or {"error": "..."}'
    )
    if not isinstance(data, Mapping):
        raise ValueError(f"{where} must be one of {shapes}, got {data!r:.100}.")
    entry = cast("Mapping[str, Any]", data)
    keys = set(entry)
    if keys in ({"approve"}, {"approve", "input"}) and entry["approve"] is True:
        edited = entry.get("input")
        if edited is not None and not isinstance(edited, Mapping):
            raise ValueError(f'{where}: "input" must be an object of the tool\'s arguments, got {edited!r:.100}.')
        return Approve(input=cast("Mapping[str, Any] | None", edited))
    if keys == {"deny"} and isinstance(entry["deny"], str):
        return Deny(entry["deny"])
    if keys == {"result"}:
        return ExternalResult(entry["result"])
    if keys == {"error"} and isinstance(entry["error"], str):
        return ExternalResult(error=entry["error"])
    raise ValueError(f"{where} must be one of {shapes}, got {dict(entry)!r:.200}.")

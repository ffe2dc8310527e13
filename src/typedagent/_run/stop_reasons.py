"""What a response's ``stop_reason`` makes the loop do next: one table, one step per value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from .._shared.errors import AgentErrorCode

__all__ = ["STOP_REASON_STEPS", "TAKE_ANSWER", "UNKNOWN_STOP_REASON", "Step", "StepKind", "step_for"]

StepKind: TypeAlias = Literal["run_tools", "take_answer", "resume", "end_attempt", "fail"]
"""``run_tools``: answer the response's tool calls and go on. ``take_answer``: the text the turn ended with is the
answer (native and prompted modes): read it, then preview or validate it. ``resume``: send the conversation back
with the assistant turn last so the model continues it. ``end_attempt``: the attempt ends with ``code`` and its
feedback goes to the model. ``fail``: the execution ends with ``code``."""


@dataclass(frozen=True, slots=True)
class Step:
    """What to do with a response, and whether its tool calls run."""

    kind: StepKind
    code: AgentErrorCode | None = None
    """The attempt's outcome (``end_attempt``) or the failure's code (``fail``)."""
    runs_tools: bool = True
    """Whether tool calls in such a response run (and the response is handled as ``run_tools``). False when
    the stop reason says the response cannot be trusted: it was cut off, refused, or overflowed."""
    ends_turn: bool = False
    """The model ended its turn on purpose: with no tool call, the text it wrote is its answer in the modes that
    answer in text (``take_answer``), and in tool mode a reply without the output (``code``)."""


STOP_REASON_STEPS: Final[dict[str, Step]] = {
    "tool_use": Step("run_tools"),
    "end_turn": Step("end_attempt", AgentErrorCode.INVALID_RESPONSE, ends_turn=True),
    "stop_sequence": Step("end_attempt", AgentErrorCode.INVALID_RESPONSE, ends_turn=True),
    "max_tokens": Step("end_attempt", AgentErrorCode.MAX_TOKENS, runs_tools=False),
    "pause_turn": Step("resume"),
    # A beta stop reason (context management): the API hands the turn back after compacting; the next
    # request continues it.
    "compaction": Step("resume"),
    "refusal": Step("fail", AgentErrorCode.REFUSAL, runs_tools=False),
    "model_context_window_exceeded": Step("fail", AgentErrorCode.CONTEXT_WINDOW_EXCEEDED, runs_tools=False),
}
"""Every stop reason the installed SDK knows (``StopReason`` and ``BetaStopReason``), classified once."""

UNKNOWN_STOP_REASON: Final = Step("fail", AgentErrorCode.API_ERROR)
"""A stop reason newer than this table (or none): its tool calls run; with none, the execution fails with a
message naming the stop reason, rather than guessing whether the turn is finished."""

TAKE_ANSWER: Final = Step("take_answer")
"""A turn that ended with no tool call, in a mode whose output is the text that ends the turn."""

_RUN_TOOLS: Final = STOP_REASON_STEPS["tool_use"]
_NO_TOOL_CALL: Final = STOP_REASON_STEPS["end_turn"]


def step_for(stop_reason: str | None, calls_tools: bool, *, answers_in_text: bool = False) -> Step:
    """The step for a response: its stop reason's, or ``run_tools`` when it calls tools and may run them.

    A response that says ``tool_use`` but calls no tool is treated as one that ended its turn without a call. When
    the agent answers in text (native and prompted modes), a turn ended that way is its answer (``take_answer``).
    """
    step = STOP_REASON_STEPS.get(stop_reason, UNKNOWN_STOP_REASON) if stop_reason is not None else UNKNOWN_STOP_REASON
    if step.runs_tools and calls_tools:
        return _RUN_TOOLS
    if step.kind == "run_tools":
        step = _NO_TOOL_CALL
    if step.ends_turn and answers_in_text:
        return TAKE_ANSWER
    return step

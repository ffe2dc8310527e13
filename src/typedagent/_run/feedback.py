"""Every text the loop writes to the model: tool-result verdicts, rejections and attempt feedback."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from .._shared.errors import AgentErrorCode

if TYPE_CHECKING:
    from .._agent.definition import AgentDefinition
    from .._agent.output import OutputTool

__all__ = [
    "ABANDONED",
    "ACCEPTED",
    "NOT_VALIDATED",
    "STOPPED_BEFORE_TOOLS",
    "STOPPED_DURING_OUTPUT",
    "SUBMIT_SUPERSEDED",
    "VALIDATOR_CRASHED",
    "answer_not_kept",
    "answer_preview",
    "attempt_feedback",
    "last_turn",
    "not_run",
    "nothing_to_submit",
    "reflection_failed",
    "rejection",
    "rejection_early",
    "superseded_output",
]

ACCEPTED: Final = "Output accepted."

_NOT_RUN: Final = {
    AgentErrorCode.MAX_TOKENS: "not run: the response was cut off at max_tokens.",
    AgentErrorCode.REFUSAL: "not run: the model refused.",
    AgentErrorCode.CONTEXT_WINDOW_EXCEEDED: "not run: the context window was exceeded.",
}
"""Why the tool calls of a response that ends the attempt, or the execution, were not run."""

STOPPED_BEFORE_TOOLS: Final = "not run: the execution stopped before this tool ran."
ABANDONED: Final = (
    "abandoned: the execution stopped (its abort event or deadline) while this tool was running. It may still "
    "finish in the background, but its result is discarded."
)
STOPPED_DURING_OUTPUT: Final = "not run: the execution stopped while the output was being checked."
NOT_VALIDATED: Final = "not run: the output could not be validated."
VALIDATOR_CRASHED: Final = "Error: the output could not be validated (a validator crashed)."
SUBMIT_SUPERSEDED: Final = "Submit received; the last submit call of this response is the one validated."


def not_run(code: AgentErrorCode) -> str:
    """Why a response's tool calls were not run, when its stop reason ended the attempt with ``code``."""
    return _NOT_RUN.get(code, f"not run: the response ended with {code}.")


def attempt_feedback(code: AgentErrorCode, agent: AgentDefinition[Any, Any]) -> str:
    """What the model is told when its response ended the attempt with ``code`` (no output handed over)."""
    name = agent.output.name
    then_submit = " and then call submit" if agent.reflection_enabled else ""
    if agent.output.mode != "tool":
        if code is AgentErrorCode.MAX_TOKENS:
            return (
                f"Your response was cut off at max_tokens ({agent.max_tokens}), so your answer is incomplete JSON. "
                f"Respond more briefly, with the complete output as one JSON object{then_submit}."
            )
        return f"You replied without an answer. Reply with your output as one JSON object{then_submit}."
    if code is AgentErrorCode.MAX_TOKENS:
        return (
            f"Your response was cut off at max_tokens ({agent.max_tokens}). Respond more briefly and call "
            f"{name!r} with the complete output."
        )
    return (
        f"You replied without calling a tool. Call {name!r} with your output"
        f"{' and then submit' if agent.reflection_enabled else ''}; do not answer in plain text."
    )


def answer_preview(preview: str) -> str:
    """What the model reads after a JSON answer in reflection mode (native, prompted): the handler's preview."""
    return (
        f"Preview of your answer:\n\n{preview}\n\nSend a revised JSON answer to change it, or call submit to have "
        "this answer validated."
    )


def answer_not_kept(problems: Sequence[str]) -> str:
    """Reflection mode (native, prompted): a JSON answer that did not pass the schema (nothing was kept)."""
    return (
        f"Error: this answer does not match the output schema, so it was not kept:\n{_listing(problems)}\n"
        "Fix these and send the corrected answer as one JSON object."
    )


def last_turn(name: str) -> str:
    """What the model is told when its next response is the last of the attempt and tool use cannot be forced."""
    return f"This is your last response for this attempt: call {name!r} now, with your best output so far."


def nothing_to_submit(agent: AgentDefinition[Any, Any]) -> str:
    """The problem of a ``submit`` call made before any schema-valid output call of the attempt."""
    if agent.output.mode != "tool":
        return (
            "Nothing to submit: send your output as one JSON object first (it must pass the schema), then call submit."
        )
    return (
        f"Nothing to submit: call {agent.output.name!r} with your output first "
        "(it must pass the schema), then call submit."
    )


def superseded_output(agent: AgentDefinition[Any, Any]) -> str:
    """The result of an output call that a later output call of the same response replaced."""
    return f"Superseded: only the last {agent.output.name!r} call of a response is validated."


def rejection_early(name: str, problems: Sequence[str]) -> str:
    """The error result of a reflection-mode output call that did not pass the schema (nothing was kept)."""
    return (
        f"Error: this {name!r} input does not match the output schema, so it was not kept:\n{_listing(problems)}\n"
        f"Fix these and call {name!r} again."
    )


def rejection(output: OutputTool[Any], problems: Sequence[str]) -> str:
    """The error result (or, for a JSON answer, the message) of a rejected candidate: every problem, what to do next."""
    if output.mode == "tool":
        then = f"call {output.name!r} again with a corrected output"
    else:
        then = "send the corrected output as one JSON object"
    if output.reflection_enabled:
        then += ", then call submit"
    return f"Error: output rejected. Fix every problem below and {then}:\n{_listing(problems)}"


def _listing(problems: Sequence[str]) -> str:
    return "\n".join(f"- {problem}" for problem in problems)


def reflection_failed(description: str, *, in_text: bool = False) -> str:
    """The error result of an output call (or a JSON answer) whose reflection handler raised (the candidate is kept)."""
    change = "send a revised JSON answer" if in_text else "call the output tool again"
    return (
        f"Error: the reflection handler failed ({description}). Your output was kept as the "
        f"candidate; call submit to have it validated, or {change} to change it."
    )

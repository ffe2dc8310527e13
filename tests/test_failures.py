"""Failure messages read as sentences, whatever text the exceptions or the problems they quote end with."""

from __future__ import annotations

from typing import Any

import pytest
from support import GOOD, triage_agent

from typedagent import AgentErrorCode, ExecuteFailure, OutputRejected, ValidationConfig, execute_agent
from typedagent._run.failures import sentences
from typedagent.testing import ScriptedClient, output_call


class _Raising:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc
        self.messages = self

    async def create(self, **params: Any) -> Any:
        raise self.exc


@pytest.mark.parametrize(
    ("parts", "joined"),
    [
        (("It failed", "Retry."), "It failed. Retry."),
        (("It failed.", "Retry."), "It failed. Retry."),
        (("It failed. ", " Retry"), "It failed. Retry."),
        (("Why?", "Because!"), "Why? Because!"),
        (("Model said: 'no.'", "Retry."), "Model said: 'no.' Retry."),
        (("Model said: 'no'", "Retry."), "Model said: 'no'. Retry."),
        (("(see above.)", "", "  ", "Then go"), "(see above.) Then go."),
        (("Ends with an ellipsis...", "Next."), "Ends with an ellipsis... Next."),
        (("Listed:\n- a\n- b", "Fix them."), "Listed:\n- a\n- b. Fix them."),
    ],
)
def test_failures_sentences_join_with_one_break(parts: tuple[str, ...], joined: str) -> None:
    """Each part ends with exactly one sentence end and is separated from the next by one space."""
    assert sentences(*parts) == joined


@pytest.mark.parametrize(
    "quoted",
    ["object Message can't be used in 'await' expression", "object Message can't be used in 'await' expression."],
)
async def test_failures_api_error_message_keeps_sentences_apart(quoted: str) -> None:
    """An exception message with or without a final period is followed by one sentence break, never two periods."""
    result = await execute_agent(triage_agent(), "x", client=_Raising(RuntimeError(quoted)))
    assert isinstance(result, ExecuteFailure)
    assert result.error.message == (
        "The Messages API call failed (RuntimeError): object Message can't be used in 'await' expression. "
        "The client raised; see the cause for details."
    )


async def test_failures_no_valid_output_message_keeps_sentences_apart() -> None:
    """The last attempt's problems are quoted as one clause each, then the advice as its own sentence."""
    result = await execute_agent(
        triage_agent(validation=ValidationConfig(max_attempts=1)), "x", client=ScriptedClient(["plain text"])
    )
    assert isinstance(result, ExecuteFailure)
    assert result.error.message == (
        "No valid output after 1 attempt(s); the last ended with INVALID_RESPONSE: You replied without calling a "
        "tool. Call 'final_output' with your output; do not answer in plain text. The model answered in text "
        "instead of calling the output tool; make the instructions ask for the tool call."
    )


async def test_failures_validation_problems_are_joined_without_stray_periods() -> None:
    """Validator messages that end with a period are listed as clauses: no '.;' and no '..'."""

    def first(out: Any) -> None:
        raise OutputRejected("Cite an article.")

    def second(out: Any) -> None:
        raise OutputRejected("Be brief.")

    agent = triage_agent(validators=[first, second], validation=ValidationConfig(max_attempts=1))
    result = await execute_agent(agent, "x", client=ScriptedClient([output_call(GOOD)]))
    assert isinstance(result, ExecuteFailure)
    assert result.error.code is AgentErrorCode.VALIDATION_FAILED
    assert result.error.message.startswith(
        "No valid output after 1 attempt(s); the last ended with VALIDATION_FAILED: Cite an article; Be brief. "
        "Check the validators' messages;"
    )


@pytest.mark.parametrize("quoted", ["ledger offline", "ledger offline."])
async def test_failures_validator_crash_message_keeps_sentences_apart(quoted: str) -> None:
    """A crashing validator's message is one sentence, followed by the advice."""

    def crash(out: Any) -> None:
        raise RuntimeError(quoted)

    agent = triage_agent(validators=[crash])
    result = await execute_agent(agent, "x", client=ScriptedClient([output_call(GOOD)]))
    assert isinstance(result, ExecuteFailure)
    assert ".<locals>.crash' raised RuntimeError: ledger offline. Validators reject an output by raising" in (
        result.error.message
    )

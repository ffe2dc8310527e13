"""``AgentError``: its context narrowed by code."""

from __future__ import annotations

from support import run, triage_agent

from typedagent import AgentErrorCode, ApiErrorContext, AttemptErrorsContext, ValidationConfig
from typedagent.testing import ScriptedClient, api_error


async def test_context_for_returns_the_context_of_the_errors_own_code() -> None:
    """``context_for(code)`` is the context when the error has that code, and None for any other code."""
    failed = await run(triage_agent(), ScriptedClient([api_error(529, request_id="req_7")]))
    assert failed.ok is False
    assert failed.error.context_for(AgentErrorCode.API_ERROR) == ApiErrorContext(
        status_code=529, error_type="overloaded_error", request_id="req_7", attempt=1, iteration=1
    )
    assert failed.error.context_for(AgentErrorCode.TIMEOUT) is None
    assert failed.error.context_for(AgentErrorCode.VALIDATION_FAILED) is None


async def test_context_for_shares_the_attempt_errors_context_between_its_codes() -> None:
    """The attempt-outcome codes all carry an AttemptErrorsContext; only the error's own code returns it."""
    agent = triage_agent(validation=ValidationConfig(max_attempts=1))
    failed = await run(agent, ScriptedClient(["I'd rather chat."]))
    assert failed.ok is False
    assert failed.error.code == AgentErrorCode.INVALID_RESPONSE
    context = failed.error.context_for(AgentErrorCode.INVALID_RESPONSE)
    assert isinstance(context, AttemptErrorsContext)
    assert len(context.attempt_errors) == 1
    assert failed.error.context_for(AgentErrorCode.VALIDATION_FAILED) is None

"""What an execution returns: token accounting over responses."""

from __future__ import annotations

from support import GOOD, run, triage_agent

from typedagent import TokenUsage
from typedagent.testing import ScriptedClient, output_call, response, tool_call


async def test_results_negative_token_counts_count_as_zero() -> None:
    """A response reporting negative token counts adds nothing: totals never go down."""
    lying = response(
        tool_call("missing", unknown=True),
        usage={
            "input_tokens": -1_000,
            "output_tokens": 7,
            "cache_read_input_tokens": -5,
            "cache_creation_input_tokens": 3,
        },
    )
    client = ScriptedClient([lying, response(output_call(GOOD), usage={"input_tokens": 10, "output_tokens": 5})])
    result = await run(triage_agent(), client)
    assert result.ok
    assert result.metadata.tokens == TokenUsage(input_tokens=10, output_tokens=12, cache_creation_input_tokens=3)
    assert [a.tokens.total for a in result.metadata.attempts] == [25]

"""Property-based tests of the loop (issue 5, point 1).

Hypothesis writes random model behaviour — any mix of text, helper calls (valid, invalid input,
failing handler), unknown tools, valid and invalid output calls, submit, every stop reason, injected
API errors, random usage — and random limits (``max_attempts``, ``max_iterations_per_attempt``,
reflection on or off, a token budget, raising callbacks). Whatever it writes, an execution returns,
accounts for every token, and leaves an API-valid conversation.

Example counts are modest so the suite stays fast; ``TYPEDAGENT_HYPOTHESIS_PROFILE=thorough`` runs
many more.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import Any, Literal

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from typedagent import (
    AgentDefinition,
    AgentErrorCode,
    ExecuteCallbacks,
    ExecuteResult,
    ExecutionLimits,
    HelperTool,
    OutputRejected,
    OutputTool,
    TokenUsage,
    ValidationConfig,
    define_agent,
    execute_agent,
    tool,
)
from typedagent.testing import (
    ApiErrorSpec,
    Block,
    ScriptedClient,
    ScriptedResponse,
    api_error,
    assert_valid_conversation,
    conversation_problems,
    output_call,
    response,
    submit_call,
    text,
    thinking,
    tool_call,
    usage,
)

settings.register_profile(
    "typedagent", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
settings.register_profile(
    "thorough", max_examples=2_000, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
PROFILE = settings.get_profile(os.environ.get("TYPEDAGENT_HYPOTHESIS_PROFILE", "typedagent"))


class Out(BaseModel):
    n: int = Field(ge=0)
    label: str


UNLUCKY = 13
"""The custom validator rejects this ``n``."""


def no_thirteen(out: Out) -> None:
    if out.n == UNLUCKY:
        raise OutputRejected(f"n must not be {UNLUCKY}")


def preview(out: Out) -> str:
    if out.label == "boom":
        raise RuntimeError("the preview crashed")
    return f"{out.n}: {out.label}"


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


class BrokenStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")


FAILURES: dict[str, BaseException] = {
    "value": ValueError("bad value"),
    "runtime": RuntimeError("handler crashed"),
    "broken_str": BrokenStr(),
    "stop": StopIteration(),
    "timeout": TimeoutError("upstream timed out"),
}


@tool
def explode(kind: str) -> str:
    """Fail in the way asked."""
    raise FAILURES[kind]


@tool
async def explode_async(kind: str) -> str:
    """Fail in the way asked, on the event loop."""
    if kind == "stop":
        kind = "value"  # a coroutine cannot raise StopIteration (Python turns it into RuntimeError anyway)
    raise FAILURES[kind]


RAW = HelperTool(
    definition={"name": "raw", "description": "Echo the input.", "input_schema": {"type": "object"}},
    handler=lambda tool_input: {"echo": tool_input},
)


def make_agent(*, reflection: bool, max_attempts: int, max_iterations: int) -> AgentDefinition[Out, None]:
    return define_agent(
        name="prop",
        model="claude-sonnet-4-6",
        output=OutputTool(Out, reflection_handler=preview if reflection else None),
        helpers=[lookup, explode, explode_async, RAW],
        validators=[no_thirteen],
        validation=ValidationConfig(max_attempts=max_attempts, max_iterations_per_attempt=max_iterations),
        max_tool_result_chars=200,
    )


# -- strategies ----------------------------------------------------------------------------------

valid_outputs: st.SearchStrategy[dict[str, Any]] = st.builds(
    lambda n, label: {"n": n, "label": label},
    st.integers(0, 20) | st.just(UNLUCKY),
    st.sampled_from(["a", "b", "boom"]),
)
INVALID_OUTPUTS: list[dict[str, Any]] = [{"n": -1, "label": "neg"}, {"label": "no n"}, {"n": "many", "label": 1}, {}]
BAD_LOOKUP_INPUTS: list[dict[str, Any]] = [{"key": 5}, {}, {"other": "x"}]
ERROR_STATUSES: list[int | Literal["connection", "timeout"]] = [400, 401, 429, 500, 529, "connection", "timeout"]

invalid_outputs = st.sampled_from(INVALID_OUTPUTS)

helper_calls = st.one_of(
    st.text(max_size=8).map(lambda key: tool_call("lookup", {"key": key})),
    st.sampled_from(BAD_LOOKUP_INPUTS).map(lambda bad: tool_call("lookup", bad)),
    st.sampled_from(sorted(FAILURES)).map(lambda kind: tool_call("explode", {"kind": kind})),
    st.sampled_from(sorted(FAILURES)).map(lambda kind: tool_call("explode_async", {"kind": kind})),
    st.just(tool_call("raw", {"anything": [1, 2]})),
    st.sampled_from(["ghost", "final_outputs", "Submit"]).map(lambda name: tool_call(name, unknown=True)),
)


def blocks(reflection: bool) -> st.SearchStrategy[Block]:
    submit = submit_call() if reflection else tool_call("submit", unknown=True)
    outputs = valid_outputs.map(output_call)
    return st.one_of(
        st.text(min_size=1, max_size=20).map(text),
        st.just(thinking("considering")),
        helper_calls,
        outputs,
        outputs,  # twice: runs that succeed need them, and success has invariants of its own
        invalid_outputs.map(output_call),
        st.just(submit),
        st.just(submit),
    )


STOP_REASONS = [
    None,
    "end_turn",
    "tool_use",
    "max_tokens",
    "stop_sequence",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
]

usages = st.builds(
    usage,
    st.integers(0, 500),
    st.integers(0, 200),
    st.integers(0, 50),
    st.integers(0, 50),
)


def responses(reflection: bool) -> st.SearchStrategy[ScriptedResponse]:
    return st.builds(
        lambda content, stop_reason, used: response(*content, stop_reason=stop_reason, usage=used),
        st.lists(blocks(reflection), min_size=0, max_size=4),
        st.none() | st.none() | st.sampled_from(STOP_REASONS),  # mostly the API's own choice
        usages,
    )


api_errors = st.sampled_from(ERROR_STATUSES).map(api_error)


@dataclass
class Case:
    reflection: bool
    max_attempts: int
    max_iterations: int
    script: list[ScriptedResponse | ApiErrorSpec]
    budget: int | None
    raising_callbacks: bool
    hook_calls: list[str] = field(default_factory=list)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    reflection = draw(st.booleans())
    max_attempts = draw(st.integers(1, 3))
    max_iterations = draw(st.integers(1, 4))
    # Exactly enough items for the most requests the limits allow: running out would be a bug.
    length = max_attempts * max_iterations
    script: list[ScriptedResponse | ApiErrorSpec] = list(
        draw(st.lists(responses(reflection), min_size=length, max_size=length))
    )
    # A few API errors at random places (drawn apart, so most runs still get far enough to succeed).
    for position, error in draw(st.lists(st.tuples(st.integers(0, length - 1), api_errors), max_size=2)):
        script[length - 1 - position] = error  # hypothesis favours 0: count from the end instead
    budget = draw(st.none() | st.none() | st.integers(1, 3_000))
    return Case(reflection, max_attempts, max_iterations, script, budget, draw(st.booleans()))


# -- the property ----------------------------------------------------------------------------------


def served_usages(case: Case, requests: int) -> list[TokenUsage]:
    """The usage of each request's answer, in order (an injected error answers nothing: zero)."""
    used = []
    for item in case.script[:requests]:
        if isinstance(item, ApiErrorSpec):
            used.append(TokenUsage())
        else:
            used.append(TokenUsage(**item.usage))
    return used


def assistant_blocks(messages: list[Any]) -> list[tuple[Any, ...]]:
    """Every assistant block of the conversation, projected to what the model chose."""
    found = []
    for message in messages:
        if message["role"] == "assistant":
            for block in message["content"]:
                found.append(_project(block["type"], block))
    return found


def _project(kind: str, data: Any) -> tuple[Any, ...]:
    if kind == "tool_use":
        return (kind, data["name"], data["input"])
    if kind == "text":
        return (kind, data["text"])
    return (kind,)


def scripted_blocks(case: Case, requests: int) -> list[tuple[Any, ...]]:
    """The blocks of every answered response, in order, with output-call names resolved."""
    output_name = "final_output"
    found = []
    for item in case.script[:requests]:
        if isinstance(item, ScriptedResponse):
            for block in item.blocks:
                data = dict(block.data)
                if block.output:
                    data["name"] = output_name
                found.append(_project(block.type, data))
    return found


async def execute(case: Case) -> tuple[ExecuteResult[Out], ScriptedClient]:
    def hook(state: Any, event: Any) -> None:
        case.hook_calls.append(type(event).__name__)
        raise RuntimeError("observer down")

    callbacks = ExecuteCallbacks(on_tool_call=hook, on_model_response=hook) if case.raising_callbacks else None
    client = ScriptedClient(case.script)
    agent = make_agent(reflection=case.reflection, max_attempts=case.max_attempts, max_iterations=case.max_iterations)
    limits = ExecutionLimits(max_total_tokens=case.budget)
    result = await execute_agent(agent, "Produce an Out.", client=client, callbacks=callbacks, limits=limits)
    return result, client


@PROFILE
@given(cases())
def test_properties_any_model_behaviour_keeps_every_invariant(case: Case) -> None:
    """Whatever the model does, the execution returns, counts every token and call, and stays API-valid."""
    result, client = asyncio.run(execute(case))  # returning at all is the first invariant
    event("ok" if result.ok else result.error.code.value)  # shown by --hypothesis-show-statistics
    meta = result.metadata
    messages: list[Any] = list(meta.messages)
    requests = len(client.requests)

    assert meta.iterations == requests
    assert requests <= case.max_attempts * case.max_iterations
    assert 1 <= len(meta.attempts) <= case.max_attempts
    assert sum(a.iterations for a in meta.attempts) == requests

    used = served_usages(case, requests)
    assert meta.tokens == sum(used, TokenUsage())
    assert sum((a.tokens for a in meta.attempts), TokenUsage()) == meta.tokens
    if case.budget is not None:
        # Every call was made under the budget, so the total passes it by at most the last response.
        assert sum(used[:-1], TokenUsage()).total < case.budget

    assert_valid_conversation(meta.messages)
    for number, request in enumerate(client.requests, start=1):
        assert conversation_problems(request["messages"]) == [], f"request {number}"
    assert assistant_blocks(messages) == scripted_blocks(case, requests)

    if case.raising_callbacks:
        assert len(meta.callback_errors) == len(case.hook_calls)
        assert {e.message for e in meta.callback_errors} <= {"observer down"}

    if result.ok:
        assert Out.model_validate(result.output.model_dump()) == result.output
        assert result.output.n != UNLUCKY
        assert meta.attempts[-1].candidate == result.output.model_dump()
        last = messages[-1]
        assert last["role"] == "user"
        contents = [b["content"] for b in last["content"] if b["type"] == "tool_result"]
        assert contents.count("Output accepted.") == 1
    else:
        error = result.error
        assert error.code.value == meta.attempts[-1].outcome.value
        assert error.code is not AgentErrorCode.EXECUTION_CANCELLED
        assert error.code is not AgentErrorCode.TIMEOUT
        if error.code is AgentErrorCode.TOKEN_BUDGET_EXCEEDED:
            assert case.budget is not None
            assert meta.tokens.total >= case.budget
        if error.last_output is not None:
            outputs = [b[2] for b in assistant_blocks(messages) if b[:2] == ("tool_use", "final_output")]
            assert error.last_output in outputs

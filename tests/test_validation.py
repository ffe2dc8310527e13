"""Validation and reflection (SPEC §5): candidates, feedback, validators, submit, and attempts."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel, field_validator
from support import GOOD, Triage, assert_api_valid, reflecting, results_of, run, triage_agent

from typedagent import (
    AgentDefinitionError,
    AgentErrorCode,
    AttemptErrorsContext,
    AttemptOutcome,
    OutputRejected,
    OutputTool,
    RunContext,
    ValidationConfig,
    ValidatorErrorContext,
    define_agent,
    execute_agent,
)
from typedagent.testing import ScriptedClient, output_call, response, submit_call

BAD = {"severity": 9, "summary": "too severe"}


async def test_validation_schema_failure_then_success() -> None:
    """A schema-invalid output is answered with every error and its field path; the next attempt succeeds."""
    client = ScriptedClient([output_call({"severity": "high"}), output_call(GOOD)])
    result = await run(triage_agent(), client)
    assert result.ok
    attempts = result.metadata.attempts
    assert [a.outcome for a in attempts] == [AttemptOutcome.VALIDATION_FAILED, AttemptOutcome.SUCCESS]
    assert attempts[0].validation_errors == (
        "severity: Input should be a valid integer, unable to parse string as an integer",
        "summary: Field required",
    )
    assert attempts[0].candidate == {"severity": "high"}
    [(_, feedback, is_error)] = results_of(result.metadata.messages[2])
    assert is_error
    assert feedback == (
        "Error: output rejected. Fix every problem below and call 'final_output' again with a corrected output:\n"
        "- severity: Input should be a valid integer, unable to parse string as an integer\n"
        "- summary: Field required"
    )


async def test_validation_several_validators_all_messages_collected() -> None:
    """Every validator runs on a schema-valid candidate; every rejection message is collected."""
    seen: list[str] = []

    def not_urgent(out: Triage) -> None:
        seen.append("sync")
        if out.severity > 1:
            raise OutputRejected("severity must be 1 for this customer")

    async def long_summary(out: Triage) -> None:
        seen.append("async")
        await asyncio.sleep(0)
        if len(out.summary) < 50:
            raise OutputRejected("summary must be at least 50 characters")

    def fine(out: Triage, ctx: RunContext[None]) -> None:
        seen.append(f"ctx attempt {ctx.attempt}")

    agent = triage_agent(validators=[not_urgent, long_summary, fine], validation=ValidationConfig(max_attempts=1))
    result = await run(agent, ScriptedClient([output_call(GOOD)]))
    assert not result.ok
    assert result.error.code is AgentErrorCode.VALIDATION_FAILED
    assert seen == ["sync", "async", "ctx attempt 1"]
    assert result.error.context == AttemptErrorsContext(
        attempt_errors=(("severity must be 1 for this customer", "summary must be at least 50 characters"),)
    )
    [(_, feedback, _)] = results_of(result.metadata.messages[2])
    assert feedback.endswith("\n- severity must be 1 for this customer\n- summary must be at least 50 characters")


async def test_validation_validators_skipped_when_schema_fails() -> None:
    """Custom validators only see candidates that passed the schema."""
    calls: list[Triage] = []
    agent = triage_agent(validators=[calls.append], validation=ValidationConfig(max_attempts=1))
    result = await run(agent, ScriptedClient([output_call(BAD)]))
    assert not result.ok
    assert calls == []


async def test_validation_validator_crash_is_validator_error() -> None:
    """A validator raising anything but OutputRejected fails the run with VALIDATOR_ERROR, no retry."""

    def buggy(out: Triage) -> None:
        raise KeyError("oops")

    client = ScriptedClient([output_call(GOOD), output_call(GOOD)])
    result = await run(triage_agent(validators=[buggy]), client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.VALIDATOR_ERROR
    assert result.error.context == ValidatorErrorContext(
        validator="test_validation_validator_crash_is_validator_error.<locals>.buggy", error_type="KeyError", attempt=1
    )
    assert isinstance(result.error.cause, KeyError)
    assert result.error.last_output == GOOD.model_dump()
    assert len(client.requests) == 1
    [(_, content, is_error)] = results_of(result.metadata.messages[2])
    assert is_error
    assert content == "Error: the output could not be validated (a validator crashed)."


async def test_validation_all_attempts_fail_keeps_everything() -> None:
    """When every attempt fails, every attempt is recorded and the last candidate is kept."""
    client = ScriptedClient([output_call(BAD), output_call({"severity": 0, "summary": "z"}), output_call(BAD)])
    result = await run(triage_agent(), client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.VALIDATION_FAILED
    assert result.error.last_output == BAD
    attempts = result.metadata.attempts
    assert [a.number for a in attempts] == [1, 2, 3]
    assert [a.candidate for a in attempts] == [BAD, {"severity": 0, "summary": "z"}, BAD]
    assert isinstance(result.error.context, AttemptErrorsContext)
    assert result.error.context.attempt_errors == (
        ("severity: Input should be less than or equal to 5",),
        ("severity: Input should be greater than or equal to 1",),
        ("severity: Input should be less than or equal to 5",),
    )
    assert "No valid output after 3 attempt(s)" in result.error.message
    assert result.metadata.tokens.total == 45


async def test_validation_several_output_calls_last_one_is_the_candidate() -> None:
    """Without reflection, the last output call of a response is validated; earlier ones are superseded."""
    client = ScriptedClient([response(output_call(BAD), output_call(GOOD))])
    result = await run(triage_agent(), client)
    assert result.ok
    assert results_of(result.metadata.messages[2]) == [
        ("toolu_01_001", "Superseded: only the last 'final_output' call of a response is validated.", False),
        ("toolu_01_002", "Output accepted.", False),
    ]


async def test_reflection_refine_then_submit() -> None:
    """Reflection: output calls are previewed, the model refines, and submit validates the latest candidate."""
    refined = Triage(severity=3, summary="VPN drops hourly on Wi-Fi")
    client = ScriptedClient([output_call(GOOD), output_call(refined), submit_call()])
    result = await run(triage_agent(output=reflecting()), client)
    assert result.ok
    assert result.output == refined
    messages = result.metadata.messages
    assert results_of(messages[2]) == [("toolu_01_001", "severity 2: VPN drops hourly", False)]
    assert results_of(messages[4]) == [("toolu_02_002", "severity 3: VPN drops hourly on Wi-Fi", False)]
    assert results_of(messages[6]) == [("toolu_03_003", "Output accepted.", False)]
    assert result.metadata.attempts[0].iterations == 3


async def test_reflection_output_and_submit_in_one_response() -> None:
    """Output and submit in the same response: the output is previewed, then validated and accepted."""
    client = ScriptedClient([response(output_call(GOOD), submit_call())])
    result = await run(triage_agent(output=reflecting()), client)
    assert result.ok
    assert results_of(result.metadata.messages[2]) == [
        ("toolu_01_001", "severity 2: VPN drops hourly", False),
        ("toolu_01_002", "Output accepted.", False),
    ]


async def test_reflection_async_handler() -> None:
    """An async reflection handler's text is the preview."""

    async def preview(t: Triage) -> str:
        await asyncio.sleep(0)
        return f"[{t.severity}]"

    client = ScriptedClient([response(output_call(GOOD), submit_call())])
    result = await run(triage_agent(output=OutputTool(Triage, reflection_handler=preview)), client)
    assert results_of(result.metadata.messages[2])[0][1] == "[2]"


async def test_reflection_schema_error_fed_back_early() -> None:
    """Reflection: a schema-invalid output call is answered with the errors at once; the attempt goes on."""
    client = ScriptedClient([output_call(BAD), output_call(GOOD), submit_call()])
    result = await run(triage_agent(output=reflecting()), client)
    assert result.ok
    assert len(result.metadata.attempts) == 1
    [(_, content, is_error)] = results_of(result.metadata.messages[2])
    assert is_error
    assert content == (
        "Error: this 'final_output' input does not match the output schema, so it was not kept:\n"
        "- severity: Input should be less than or equal to 5\n"
        "Fix these and call 'final_output' again."
    )


async def test_reflection_handler_exception_keeps_candidate() -> None:
    """A failing reflection handler is an error result, but the candidate is kept and can be submitted."""

    def crash(t: Triage) -> str:
        raise ValueError("preview service down")

    client = ScriptedClient([output_call(GOOD), submit_call()])
    result = await run(triage_agent(output=OutputTool(Triage, reflection_handler=crash)), client)
    assert result.ok
    assert result.output == GOOD
    [(_, content, is_error)] = results_of(result.metadata.messages[2])
    assert is_error
    assert content.startswith("Error: the reflection handler failed (preview service down). Your output was kept")


async def test_reflection_submit_before_output_fails_attempt_then_recovers() -> None:
    """Submit with no candidate ends the attempt with SUBMIT_BEFORE_OUTPUT; the next attempt recovers."""
    client = ScriptedClient([submit_call(), output_call(GOOD), submit_call()])
    result = await run(triage_agent(output=reflecting()), client)
    assert result.ok
    attempts = result.metadata.attempts
    assert [a.outcome for a in attempts] == [AttemptOutcome.SUBMIT_BEFORE_OUTPUT, AttemptOutcome.SUCCESS]
    assert attempts[0].candidate is None
    [(_, content, is_error)] = results_of(result.metadata.messages[2])
    assert is_error
    assert content.startswith("Error: Nothing to submit: call 'final_output' with your output first")


async def test_reflection_candidate_does_not_carry_over_attempts() -> None:
    """A candidate rejected in one attempt is not submitted again by a bare submit in the next."""
    client = ScriptedClient([output_call({"severity": 1, "summary": "s"}), submit_call(), submit_call()])
    agent = triage_agent(
        output=reflecting(),
        validators=[lambda t: (_ for _ in ()).throw(OutputRejected("no"))],
        validation=ValidationConfig(max_attempts=2),
    )
    result = await run(agent, client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.SUBMIT_BEFORE_OUTPUT
    assert [a.outcome for a in result.metadata.attempts] == [
        AttemptOutcome.VALIDATION_FAILED,
        AttemptOutcome.SUBMIT_BEFORE_OUTPUT,
    ]
    assert result.error.last_output == {"severity": 1, "summary": "s"}


async def test_reflection_validation_failure_feedback_names_submit() -> None:
    """In reflection mode the rejection is the submit call's result and asks for output, then submit."""
    client = ScriptedClient([response(output_call(GOOD), submit_call())])
    agent = triage_agent(
        output=reflecting(),
        validators=[lambda t: (_ for _ in ()).throw(OutputRejected("cite an article"))],
        validation=ValidationConfig(max_attempts=1),
    )
    result = await run(agent, client)
    assert not result.ok
    assert results_of(result.metadata.messages[2])[1] == (
        "toolu_01_002",
        "Error: output rejected. Fix every problem below and call 'final_output' again with a corrected output, "
        "then call submit:\n- cite an article",
        True,
    )


async def test_reflection_several_submits_last_one_judged() -> None:
    """With several submit calls in one response, the last is answered with the verdict."""
    client = ScriptedClient([response(output_call(GOOD), submit_call(), submit_call())])
    result = await run(triage_agent(output=reflecting()), client)
    assert result.ok
    contents = [c for _, c, _ in results_of(result.metadata.messages[2])]
    assert contents[1] == "Submit received; the last submit call of this response is the one validated."
    assert contents[2] == "Output accepted."


async def test_reflection_without_submit_keeps_iterating() -> None:
    """In reflection mode an output call alone does not end the attempt."""
    client = ScriptedClient([output_call(GOOD), output_call(GOOD)])
    agent = triage_agent(output=reflecting(), validation=ValidationConfig(max_iterations_per_attempt=2))
    result = await run(agent, client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.MAX_ITERATIONS
    assert result.error.last_output == GOOD.model_dump()


class Checked(BaseModel):
    """An output model whose own validator has a bug for negative numbers."""

    x: int

    @field_validator("x")
    @classmethod
    def positive(cls, value: int) -> int:
        if value < 0:
            raise TypeError("negative values are not handled")
        if value == 0:
            raise ValueError("x must not be zero")
        return value


async def test_validation_model_validator_value_error_is_feedback() -> None:
    """A ValueError inside the output model's own validator is a schema problem fed back to the model."""
    client = ScriptedClient([output_call({"x": 0}), output_call({"x": 3})])
    agent = define_agent(name="checked", model="claude-sonnet-4-6", output=OutputTool(Checked))
    result = await execute_agent(agent, "x", client=client)
    assert result.ok
    assert result.metadata.attempts[0].validation_errors == ("x: Value error, x must not be zero",)


@pytest.mark.parametrize("reflection", [False, True])
async def test_validation_model_validator_crash_is_validator_error(reflection: bool) -> None:
    """Any other exception from the model's own validator fails with VALIDATOR_ERROR, every call answered."""
    output = OutputTool(Checked, reflection_handler=str) if reflection else OutputTool(Checked)
    agent = define_agent(name="checked", model="claude-sonnet-4-6", output=output)
    script: list[Any] = [response(output_call({"x": -1}), submit_call()) if reflection else output_call({"x": -1})]
    client = ScriptedClient(script)
    result = await execute_agent(agent, "x", client=client)
    assert_api_valid(result, client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.VALIDATOR_ERROR
    assert result.error.context == ValidatorErrorContext(
        validator="Checked.model_validate", error_type="TypeError", attempt=1
    )
    assert result.error.last_output == {"x": -1}
    contents = [c for _, c, _ in results_of(result.metadata.messages[2])]
    assert contents[0] == "Error: the output could not be validated (a validator crashed)."
    if reflection:
        assert contents[1] == "Error: not run: the output could not be validated."


async def test_reflection_submit_before_output_keeps_schema_problems() -> None:
    """When submit follows only schema-invalid output calls, the attempt records those schema problems too."""
    client = ScriptedClient([response(output_call(BAD), submit_call()), response(output_call(GOOD), submit_call())])
    result = await run(triage_agent(output=reflecting()), client)
    assert result.ok
    first = result.metadata.attempts[0]
    assert first.outcome is AttemptOutcome.SUBMIT_BEFORE_OUTPUT
    assert first.validation_errors[1:] == ("severity: Input should be less than or equal to 5",)


class Unrepresentable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


@pytest.mark.parametrize(
    ("returned", "shown"),
    [
        (False, "False"),
        (True, "True"),
        ("looks wrong", "'looks wrong'"),
        (0, "0"),
        (Unrepresentable(), "<Unrepresentable object>"),
    ],
)
async def test_validation_validator_returning_a_value_is_validator_error(returned: object, shown: str) -> None:
    """A validator that returns a value not of the output type (even False) fails with VALIDATOR_ERROR."""

    def check(out: Triage) -> object:
        return returned

    client = ScriptedClient([output_call(GOOD)])
    result = await run(triage_agent(validators=[check]), client)
    assert not result.ok
    assert result.error.code is AgentErrorCode.VALIDATOR_ERROR
    assert f"returned {shown}, which is not a value of the output type Triage" in result.error.message
    assert "reject an output by raising OutputRejected" in result.error.message
    assert "replace it by returning a value of the output type" in result.error.message
    assert result.error.context == ValidatorErrorContext(
        validator="test_validation_validator_returning_a_value_is_validator_error.<locals>.check",
        error_type="TypeError",
        attempt=1,
    )
    assert result.error.last_output == GOOD.model_dump()


async def test_validation_async_validator_returning_none_passes() -> None:
    """An async validator that returns None (the awaited value) accepts the candidate."""

    async def check(out: Triage) -> None:
        await asyncio.sleep(0)

    result = await run(triage_agent(validators=[check]), ScriptedClient([output_call(GOOD)]))
    assert result.ok is True
    assert result.output == GOOD
    assert len(result.metadata.attempts) == 1


class TerseRejection(OutputRejected):
    """A subclass that skips OutputRejected.__init__."""

    def __init__(self, reason: str) -> None:
        Exception.__init__(self, f"terse: {reason}")


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no str")


async def test_validation_odd_rejections_do_not_crash() -> None:
    """OutputRejected subclasses without ``.message``, and non-str messages, still become feedback."""

    def terse(out: Triage) -> None:
        raise TerseRejection("cite a source")

    def numeric(out: Triage) -> None:
        raise OutputRejected(42)  # type: ignore[arg-type]

    def unprintable(out: Triage) -> None:
        raise OutputRejected(Unprintable())  # type: ignore[arg-type]

    client = ScriptedClient([output_call(GOOD)])
    result = await run(
        triage_agent(validators=[terse, numeric, unprintable], validation=ValidationConfig(max_attempts=1)), client
    )
    assert not result.ok
    assert result.error.code is AgentErrorCode.VALIDATION_FAILED
    problems = ("terse: cite a source", "42", "<exception str() failed>")
    assert result.error.context == AttemptErrorsContext(attempt_errors=(problems,))
    [(_, content, is_error)] = results_of(result.metadata.messages[2])
    assert is_error
    assert all(problem in content for problem in problems)


@pytest.mark.parametrize(
    ("preview", "shown", "type_name"),
    [({"severity": 2}, "{'severity': 2}", "dict"), (Unprintable(), "<Unprintable object>", "Unprintable")],
)
async def test_reflection_handler_returning_non_str_warns_and_keeps_candidate(
    caplog: pytest.LogCaptureFixture, preview: object, shown: str, type_name: str
) -> None:
    """A reflection handler returning a non-str is shown as text, logged on 'typedagent' and kept in the metadata."""
    client = ScriptedClient([output_call(GOOD), submit_call()])
    output = OutputTool(Triage, reflection_handler=lambda out: preview)  # type: ignore[arg-type, return-value]
    with caplog.at_level("WARNING", logger="typedagent"):
        result = await run(triage_agent(output=output), client)
    assert result.ok
    assert result.output == GOOD
    assert results_of(result.metadata.messages[2]) == [("toolu_01_001", shown, False)]
    expected = (
        f"reflection_handler of output tool 'final_output' returned {type_name}, not str; "
        "its str() was shown to the model"
    )
    assert result.metadata.warnings == (expected,)
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [
        ("typedagent", "WARNING", f"agent 'triage': {expected}")
    ]


class Node(BaseModel):
    """A recursive output model."""

    name: str
    children: list[Node] = []


async def test_validation_recursive_output_model() -> None:
    """A recursive output model is sent with $defs/$ref and a nested candidate is parsed and validated."""
    agent = define_agent(name="tree", model="claude-sonnet-4-6", output=OutputTool(Node))
    [param] = agent.tool_params()
    schema: dict[str, Any] = dict(param["input_schema"])
    assert schema["type"] == "object"
    assert schema["required"] == ["name"]
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert schema["$defs"]["Node"]["properties"] == schema["properties"]
    tree = Node(name="root", children=[Node(name="a", children=[Node(name="a1")]), Node(name="b")])
    client = ScriptedClient(
        [output_call({"name": "root", "children": [{"name": "x", "children": [{}]}]}), output_call(tree)]
    )
    result = await execute_agent(agent, "Draw a tree", client=client)
    assert result.ok
    assert result.output == tree
    [(_, content, _)] = results_of(result.metadata.messages[2])
    assert "- children.0.children.0.name: Field required" in content
    assert client.requests[0]["tools"] == [param]


class Expression(BaseModel):
    """Recursive through a union and a second model."""

    operator: str
    operands: list[Expression | Literal_] | None = None


class Literal_(BaseModel):
    value: float
    note: Expression | None = None


@pytest.mark.parametrize("model", [Node, Expression])
def test_validation_recursive_output_model_cannot_be_strict(model: type[BaseModel]) -> None:
    """Strict tools cannot use recursive schemas (the API refuses them): a definition error says so."""
    with pytest.raises(AgentDefinitionError, match=r"recursive.*strict=False"):
        OutputTool(model, strict=True)


def test_validation_nested_models_can_be_strict() -> None:
    """A schema with $defs that do not refer back to themselves is not recursive and may be strict."""

    class Inner(BaseModel):
        x: int

    class Outer(BaseModel):
        inner: Inner
        more: list[Inner]

    assert OutputTool(Outer, strict=True).to_param()["strict"] is True  # type: ignore[typeddict-item]


async def test_validation_validator_returning_an_output_replaces_it() -> None:
    """A validator may return a value of the output type: the validators after it and the result see it."""
    seen: list[Triage] = []

    def normalise(out: Triage) -> Triage:
        return out.model_copy(update={"summary": out.summary.strip().capitalize()})

    def records(out: Triage) -> None:
        seen.append(out)

    async def tags_severity(out: Triage, ctx: RunContext[None]) -> Triage | None:
        return out.model_copy(update={"summary": f"[{out.severity}] {out.summary}"}) if ctx.attempt == 1 else None

    client = ScriptedClient([output_call({"severity": 2, "summary": "  vpn drops hourly "})])
    result = await run(triage_agent(validators=[normalise, records, tags_severity]), client)
    assert result.ok is True
    assert result.output == Triage(severity=2, summary="[2] Vpn drops hourly")
    assert seen == [Triage(severity=2, summary="Vpn drops hourly")]
    assert result.metadata.attempts[0].candidate == {"severity": 2, "summary": "  vpn drops hourly "}


async def test_validation_repair_then_rejection_still_rejects() -> None:
    """A repaired output is still rejected by a later validator; the next attempt starts over from the model."""

    def normalise(out: Triage) -> Triage:
        return out.model_copy(update={"summary": out.summary.upper()})

    def needs_ticket(out: Triage) -> None:
        if "#" not in out.summary:
            raise OutputRejected(f"summary {out.summary!r} must name the ticket number")

    client = ScriptedClient([output_call(GOOD), output_call(Triage(severity=2, summary="vpn #12"))])
    result = await run(triage_agent(validators=[normalise, needs_ticket]), client)
    assert result.ok is True
    assert result.output == Triage(severity=2, summary="VPN #12")
    assert result.metadata.attempts[0].validation_errors == ("summary 'VPN DROPS HOURLY' must name the ticket number",)


async def test_validation_repair_of_a_list_output() -> None:
    """Repair works for any output type: a list validator returns the list it wants kept."""

    class Item(BaseModel):
        name: str

    def dedupe(items: list[Item]) -> list[Item]:
        return list({item.name: item for item in items}.values())

    agent = define_agent(name="items", model="claude-sonnet-4-6", output=OutputTool(list[Item]), validators=[dedupe])
    client = ScriptedClient([output_call([Item(name="a"), Item(name="a"), Item(name="b")])])
    result = await execute_agent(agent, "go", client=client)
    assert result.ok is True
    assert result.output == [Item(name="a"), Item(name="b")]


async def test_validation_repair_of_another_type_is_validator_error() -> None:
    """Returning a value that is not of the output type (no coercion: a dict is not a Triage) is VALIDATOR_ERROR."""

    def as_dict(out: Triage) -> object:
        return out.model_dump()

    result = await run(triage_agent(validators=[as_dict]), ScriptedClient([output_call(GOOD)]))
    assert result.ok is False
    assert result.error.code is AgentErrorCode.VALIDATOR_ERROR
    assert "returned {'severity': 2, 'summary': 'VPN drops hourly'}, which is not a value of the output type" in (
        result.error.message
    )


async def test_validation_builtin_without_a_signature_is_called_with_the_output() -> None:
    """A builtin validator whose signature cannot be read is called as (output); its failure is VALIDATOR_ERROR."""
    result = await run(triage_agent(validators=[next]), ScriptedClient([output_call(GOOD)]))
    assert result.ok is False
    assert result.error.code is AgentErrorCode.VALIDATOR_ERROR
    assert result.error.context == ValidatorErrorContext(validator="next", error_type="TypeError", attempt=1)

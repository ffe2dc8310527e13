"""Type-checked, never run: ``stream_agent`` events narrow by ``match`` and by ``kind``; partials know the fields.

Every line ending in ``# type: ignore[...]`` must stay an error for mypy (``warn_unused_ignores``),
every ``# pyright: ignore[...]`` one for basedpyright (``reportUnnecessaryTypeIgnoreComment``).
"""

from typing import Any, assert_type

from pydantic import BaseModel

from typedagent import (
    AgentStreamEvent,
    AttemptStarted,
    ExecuteResult,
    FallbackSwitched,
    Finished,
    OutputTool,
    Partial,
    PartialOutput,
    ReflectionPreview,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolInputDelta,
    ValidationFailed,
    define_agent,
    stream_agent,
    stream_agent_sync,
)


class Triage(BaseModel):
    severity: int
    summary: str


agent = define_agent(name="triage", model="claude-sonnet-4-6", output=OutputTool(Triage))


def describe(event: AgentStreamEvent[Triage]) -> str:
    match event:
        case PartialOutput(partial=partial):
            assert_type(event, PartialOutput[Triage])
            assert_type(partial, Partial[Triage] | None)
            if partial is None:
                return ""
            assert_type(partial.get(lambda t: t.severity), int | None)
            return partial.get(lambda t: t.summary) or ""
        case TextDelta(text=text):
            assert_type(text, str)
            return text
        case ThinkingDelta(thinking=thinking):
            return thinking
        case ToolInputDelta(partial_json=piece):
            return piece
        case ToolCallStarted(name=name, input=tool_input):
            assert_type(tool_input, dict[str, Any])
            return name
        case ToolCallFinished(result=result, duration_ms=duration):
            assert_type(duration, float)
            return result
        case ValidationFailed(problems=problems):
            assert_type(problems, tuple[str, ...])
            return "; ".join(problems)
        case ReflectionPreview(preview=preview):
            return preview
        case AttemptStarted(attempt=attempt):
            return str(attempt)
        case FallbackSwitched(to_model=model):
            assert_type(model, str)
            return model
        case Finished(result=result):
            assert_type(result, ExecuteResult[Triage])
            return "done"


def by_kind(event: AgentStreamEvent[Triage]) -> None:
    if event.kind == "partial_output":
        assert_type(event, PartialOutput[Triage])
    elif event.kind == "finished":
        assert_type(event, Finished[Triage])
    elif event.kind == "text_delta":
        assert_type(event, TextDelta)
        print(event.thinking)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]


async def consume() -> None:
    async with stream_agent(agent, "Ticket: VPN drops") as run:
        async for event in run:
            assert_type(event, AgentStreamEvent[Triage])
        assert_type(run.result, ExecuteResult[Triage])
        if run.result.ok is True:
            assert_type(run.result.output, Triage)


def consume_sync() -> None:
    with stream_agent_sync(agent, "Ticket: VPN drops") as run:
        for event in run:
            if isinstance(event, PartialOutput) and event.partial is not None:
                assert_type(event.partial.get(lambda t: t.severity), int | None)
        assert_type(run.result, ExecuteResult[Triage])


class Report(BaseModel):
    title: str
    findings: list[Triage]

    def headline(self) -> str:
        return self.title.upper()


def partial_reads(partial: Partial[Report]) -> None:
    """A partial is not an instance of the output class: its fields are read through get(), each maybe None."""
    assert_type(partial.get(lambda r: r.title), str | None)
    assert_type(partial.get(lambda r: r.findings[0].severity), int | None)
    assert_type(partial.get(lambda r: r.headline()), str | None)  # a method is typed, and None at run time
    assert_type(partial.value, Any)
    print(partial.title)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
    partial.headline()  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
    partial.get(lambda r: r.no_such_field)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownLambdaType, reportUnknownMemberType]
    takes_report(partial)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


def takes_report(report: Report) -> str:
    return report.headline()


stream_agent(agent, "x", deps=3)  # type: ignore[misc]  # pyright: ignore[reportCallIssue, reportArgumentType]

"""Web research with server tools: the model searches and reads the web, then hands over a cited report.

Web search and web fetch are server tools: the API runs them and puts their results in the model's own
turn, so no code of yours answers them (each search is billed by the API). The one helper, ``days_between``,
runs here. The model previews its report through the reflection handler, which lists each finding with its
sources, and submits; a validator rejects a finding without a source or a source that is not a web page.

The scripted conversation is shaped like real traffic: the API pauses the long search turn (``pause_turn``)
and the next response continues it, opening with the result of the search it was running.

Run it:

    python examples/research_agent.py          # scripted model without ANTHROPIC_API_KEY, live with it
    typedagent run examples/research_agent.py:agent "How long was Python 3.14 in the making?" --scripted
"""

from __future__ import annotations

import os
import sys
from datetime import date

from pydantic import BaseModel, Field

from typedagent import OutputRejected, OutputTool, ValidationConfig, define_agent, execute_agent_sync, tool
from typedagent.server_tools import web_fetch, web_search
from typedagent.testing import (
    ScriptedClient,
    output_call,
    pause_turn,
    response,
    submit_call,
    text,
    tool_call,
    usage,
    web_fetch_call,
    web_fetch_result,
    web_search_call,
    web_search_result,
)


class Citation(BaseModel):
    """Where a finding comes from."""

    url: str = Field(description="The page the finding comes from (a URL returned by web search or fetched).")
    title: str = Field(description="The page's title.")
    quote: str = Field(max_length=300, description="The passage of the page that supports the finding, verbatim.")


class Finding(BaseModel):
    """One thing the research established."""

    claim: str = Field(description="One sentence.")
    citations: list[Citation] = Field(description="The sources that support the claim.")


class Report(BaseModel):
    """A short research report with its sources."""

    question: str
    answer: str = Field(description="The answer to the question, in two or three sentences.")
    findings: list[Finding]


@tool
def days_between(start: date, end: date) -> int:
    """Count the days from one date to another (negative when end is earlier).

    Args:
        start: The first date, e.g. 2024-10-07.
        end: The second date.
    """
    return (end - start).days


def preview(report: Report) -> str:
    """What the model sees after each write_report call: its findings and how each is sourced."""
    lines = [f"Answer: {report.answer}"]
    for number, finding in enumerate(report.findings, start=1):
        sources = ", ".join(citation.url for citation in finding.citations) or "NO SOURCE"
        lines.append(f"{number}. {finding.claim} [{sources}]")
    lines.append("If every finding is sourced and the answer follows from them, call submit; else write_report again.")
    return "\n".join(lines)


def every_finding_is_sourced(report: Report) -> None:
    """A finding needs a web page behind it."""
    if not report.findings:
        raise OutputRejected("findings is empty: report at least one finding, with its sources")
    for number, finding in enumerate(report.findings):
        if not finding.citations:
            raise OutputRejected(f"findings.{number}.citations is empty: cite the page the claim comes from")
        for citation in finding.citations:
            if not citation.url.startswith("https://"):
                raise OutputRejected(f"findings.{number}: {citation.url!r} is not a web page; cite an https:// URL")


agent = define_agent(
    name="research_agent",
    model="claude-sonnet-4-6",
    instructions=(
        "You research questions on the web. Search, read the pages that matter, and report only what the pages "
        "say, quoting the passage behind each finding."
    ),
    output=OutputTool(
        Report, name="write_report", description="Hand over the research report.", reflection_handler=preview
    ),
    helpers=[days_between],
    server_tools=[web_search(max_uses=5), web_fetch(max_uses=3, citations=True)],
    validators=[every_finding_is_sourced],
    validation=ValidationConfig(max_attempts=2, max_iterations_per_attempt=10),
    max_tokens=8192,
)

PROMPT = "How long did Python 3.14 take, from the 3.13 release to its own final release?"

SCHEDULE = "https://peps.python.org/pep-0745/"
RELEASE_313 = "https://www.python.org/downloads/release/python-3130/"

DRAFT = Report(
    question=PROMPT,
    answer="Python 3.14.0 came out on 7 October 2025, 365 days after Python 3.13.0 (7 October 2024).",
    findings=[
        Finding(
            claim="Python 3.13.0 was released on 7 October 2024.",
            citations=[
                Citation(url=RELEASE_313, title="Python Release Python 3.13.0", quote="Release Date: Oct. 7, 2024")
            ],
        ),
        Finding(
            claim="Python 3.14.0 final was scheduled for, and released on, 7 October 2025.",
            citations=[
                Citation(
                    url=SCHEDULE,
                    title="PEP 745 - Python 3.14 Release Schedule",
                    quote="3.14.0 final: Tuesday, 2025-10-07",
                )
            ],
        ),
    ],
)
REPORT = DRAFT.model_copy(
    update={"answer": "One year to the day: Python 3.14.0 came out on 7 October 2025, 365 days after 3.13.0."}
)


def scripted_client() -> ScriptedClient:
    """The model's side of a typical run, so the example runs offline (the helper and validator run for real)."""
    return ScriptedClient(
        [
            pause_turn(
                text("I'll find both release dates."),
                web_search_call("Python 3.13.0 release date"),
                web_search_result(
                    [
                        ("Python Release Python 3.13.0", RELEASE_313),
                        ("What's New In Python 3.13", "https://docs.python.org/3/whatsnew/3.13.html"),
                    ]
                ),
                web_search_call("Python 3.14 release schedule", id="srvtoolu_01Schedule"),
                usage=usage(
                    input_tokens=9_812, output_tokens=164, cache_creation_input_tokens=1_350, web_search_requests=2
                ),
            ),
            response(
                web_search_result(
                    [("PEP 745 - Python 3.14 Release Schedule", SCHEDULE)], tool_use_id="srvtoolu_01Schedule"
                ),
                web_fetch_call(SCHEDULE),
                web_fetch_result(
                    SCHEDULE,
                    "PEP 745 - Python 3.14 Release Schedule ... 3.14.0 final: Tuesday, 2025-10-07 ...",
                    title="PEP 745 - Python 3.14 Release Schedule",
                ),
                tool_call("days_between", {"start": "2024-10-07", "end": "2025-10-07"}),
                usage=usage(
                    input_tokens=14_630, output_tokens=201, cache_read_input_tokens=1_350, web_fetch_requests=1
                ),
            ),
            response(
                output_call(DRAFT), usage=usage(input_tokens=412, output_tokens=388, cache_read_input_tokens=16_020)
            ),
            response(
                text("The answer should say it took exactly one year."),
                output_call(REPORT),
                usage=usage(input_tokens=506, output_tokens=372, cache_read_input_tokens=16_020),
            ),
            response(submit_call(), usage=usage(input_tokens=331, output_tokens=24, cache_read_input_tokens=16_020)),
        ]
    )


if __name__ == "__main__":
    live = bool(os.environ.get("ANTHROPIC_API_KEY"))
    if not live:
        print("No ANTHROPIC_API_KEY: the model is scripted.", file=sys.stderr)
    result = execute_agent_sync(agent, PROMPT, client=None if live else scripted_client())
    print(result.unwrap().model_dump_json(indent=2))

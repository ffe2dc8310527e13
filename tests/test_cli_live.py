"""``typedagent run`` while the model writes: the live status line follows the stream."""

from __future__ import annotations

import io
import json

from pydantic import BaseModel

from typedagent import OutputTool, define_agent, stream_agent, tool
from typedagent._cli._live import LiveView
from typedagent._cli._progress import Lines, Progress
from typedagent.testing import ScriptedClient, output_call, response, text, thinking, tool_call


class Note(BaseModel):
    """The output."""

    title: str
    body: str


class StatusLines(Lines):
    """Plain lines that also keep every status shown."""

    def __init__(self) -> None:
        super().__init__(io.StringIO())
        self.shown: list[str] = []

    def status(self, text: str) -> None:
        """Keep it."""
        self.shown.append(text)


@tool
def fetch(url: str) -> str:
    """Fetch a page."""
    return "page"


async def test_live_view_shows_what_the_model_writes_on_the_status_line() -> None:
    """Thinking, text, a tool call's input and the output so far each show on the status line as they stream."""
    agent = define_agent(name="notes", model="m", output=OutputTool(Note), helpers=[fetch])
    long_body = "A body long enough to need several pieces of streamed JSON before it is complete. " * 3
    client = ScriptedClient(
        [
            response(thinking("Fetch it first."), text("Fetching the page."), tool_call("fetch", {"url": "https://x"})),
            output_call(Note(title="Title", body=long_body)),
        ]
    )
    progress = Progress(io.StringIO())
    lines = StatusLines()
    progress.lines = lines
    view = LiveView(progress)
    async with stream_agent(agent, "go", client=client) as run:
        async for event in run:
            view(event)
    assert run.result.ok is True
    assert "attempt 1 · iteration 1 · thinking: Fetch it first." in lines.shown
    assert "attempt 1 · iteration 1 · writing: Fetching the page." in lines.shown
    assert any("calling fetch: " in status and '"https://x"' in status for status in lines.shown)
    outputs = [status for status in lines.shown if "output so far: " in status]
    assert outputs[0].startswith("attempt 1 · iteration 2 · output so far: {")
    assert outputs[-1].endswith("complete. " + '"}')
    assert all(len(status.split("output so far: ")[1]) <= 110 for status in outputs)


async def test_live_view_json_events_are_one_object_per_piece() -> None:
    """With --json-events each delta and partial output is one JSON line with its attempt and iteration."""
    agent = define_agent(name="notes", model="m", output=OutputTool(Note), helpers=[fetch])
    client = ScriptedClient(
        [
            response(thinking("Plan."), text("Go."), tool_call("fetch", {"url": "https://x"})),
            output_call(Note(title="T", body="B")),
        ]
    )
    stream = io.StringIO()
    view = LiveView(Progress(stream, json_events=True))
    async with stream_agent(agent, "go", client=client) as run:
        async for event in run:
            view(event)
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    kinds = [record["event"] for record in records]
    assert kinds[:2] == ["thinking_delta", "text_delta"]
    assert records[0] == {"event": "thinking_delta", "attempt": 1, "iteration": 1, "thinking": "Plan."}
    fetch_input = "".join(
        r["partial_json"] for r in records if r["event"] == "tool_input_delta" and r["name"] == "fetch"
    )
    assert json.loads(fetch_input) == {"url": "https://x"}
    assert records[-1] == {
        "event": "partial_output",
        "attempt": 1,
        "iteration": 2,
        "id": records[-1]["id"],
        "partial": {"title": "T", "body": "B"},
    }

"""The ``typedagent`` console script, driven as a user drives it: a subprocess, exit codes, stdout and stderr.

Live runs talk to a ``FakeAnthropicServer`` on 127.0.0.1 through the real SDK (``ANTHROPIC_BASE_URL``).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from typedagent.testing import FakeAnthropicServer, ScriptItem, delay

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
TYPEDAGENT = Path(sys.executable).with_name("typedagent")
TRIAGE = "examples/support_triage.py:agent"


def cli(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the installed console script from the repository root, with no API key unless ``env`` sets one."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    return subprocess.run(
        [str(TYPEDAGENT), *args],
        capture_output=True,
        text=True,
        env={**clean, **(env or {})},
        cwd=ROOT,
        input=stdin,
        timeout=120,
        check=False,
    )


def _example(name: str) -> ModuleType:
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    return importlib.import_module(name)


def _script(name: str) -> list[ScriptItem]:
    return list(_example(name).scripted_client().script)


@pytest.fixture
def api(fake_anthropic_server: FakeAnthropicServer) -> FakeAnthropicServer:
    """The plugin's fake Messages API on 127.0.0.1; add the script with ``api.add(...)``."""
    return fake_anthropic_server


def _live(server: FakeAnthropicServer) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.base_url}


def _in_order(text: str, *needles: str) -> None:
    """Each needle occurs in ``text``, after the previous one."""
    position = 0
    for needle in needles:
        found = text.find(needle, position)
        assert found >= 0, f"{needle!r} not found after position {position} in:\n{text}"
        position = found + len(needle)


def test_cli_demo_without_key_runs_every_example_on_the_scripted_model() -> None:
    """`typedagent demo` says plainly the model is scripted, and prints each typed result and its summary."""
    done = cli("demo")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    out = done.stdout
    _in_order(
        out,
        "typedagent demo: 4 example agents, end to end\n",
        "The model is scripted because no ANTHROPIC_API_KEY is set: each example replays a prepared conversation "
        "through the real loop.",
        "Set ANTHROPIC_API_KEY to run the same agents live.\n",
        "━━ 1/4 code_review · A code-review summariser with run-time dependencies.\n",
        "▶ code_review on claude-sonnet-4-6 · scripted model · up to 3 attempts, 15 iterations each\n",
        "    ✓ changed_files → ",
        "✓ valid ReviewSummary\n",
        "  1 attempt · 3 iterations · 4 tool calls (changed_files, read_diff x2, submit_review) · ",
        "  5,476 tokens (input 1,928 · output 518 · cache write 1,010 · cache read 2,020)\n",
        'result (ReviewSummary):\n{\n  "verdict": "request_changes",',
        "━━ 2/4 invoice_extraction",
        "    ✗ record_invoice ",
        "  ✗ attempt 1 ended with VALIDATION_FAILED\n",
        "      - total: 1820.70 but subtotal 1076.22 + tax 204.48 = 1280.70; re-read the total\n",
        "      - due_date: 2025-02-13 is before issue_date 2025-03-14; re-read both dates\n",
        "attempt 2/3\n",
        "✓ valid Invoice\n",
        "  2 attempts · 3 iterations · 3 tool calls (lookup_vendor, record_invoice x2) · ",
        '"total": "1280.70"',
        "━━ 3/4 research_agent",
        '    ✓ web_search {"query": "Python 3.13.0 release date"} → 2 results: ',
        " · by the API\n",
        "  77,600 tokens (input 25,691 · output 1,149 · cache write 1,350 · cache read 49,410) · 2 web searches · "
        "1 web fetch\n",
        "━━ 4/4 support_triage",
        "    “KB-318 is about conference-room Wi-Fi, not a home VPN; dropping it.”\n",
        "    ✓ submit → Output accepted. · ",
        "  1 attempt · 5 iterations · 6 tool calls (search_kb, read_article x2, emit_triage x2, submit) · ",
        '"kb_articles": [\n    "KB-101"\n  ]',
        "4 of 4 examples produced a valid output (scripted model).\n",
    )
    assert "\x1b[" not in out  # no colour codes in a pipe


def test_cli_demo_with_key_runs_live(api: FakeAnthropicServer) -> None:
    """With ANTHROPIC_API_KEY set, the demo calls the API (here a local fake) instead of the script."""
    for name in ("code_review", "invoice_extraction", "research_agent", "support_triage"):
        api.add(*_script(name))
    done = cli("demo", env=_live(api))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Running live: ANTHROPIC_API_KEY is set, so the real model answers" in done.stdout
    assert "scripted model" not in done.stdout
    assert "4 of 4 examples produced a valid output (live model).\n" in done.stdout
    assert len(api.requests) == 16
    assert api.request_headers[0]["authorization"] == "Bearer test-key"


def test_cli_demo_scripted_flag_and_example_names() -> None:
    """`--scripted` wins over a key; naming an example runs only that one; an unknown name is a usage error."""
    done = cli("demo", "--scripted", "invoice_extraction", env={"ANTHROPIC_API_KEY": "unused"})
    assert done.returncode == 0, done.stderr
    assert "The model is scripted because --scripted was given:" in done.stdout
    assert "━━ 1/1 invoice_extraction" in done.stdout
    assert "code_review" not in done.stdout
    assert "1 of 1 examples produced a valid output (scripted model).\n" in done.stdout
    unknown = cli("demo", "nope")
    assert (unknown.returncode, unknown.stdout) == (2, "")
    assert unknown.stderr == (
        "typedagent demo: error: no example named 'nope' (available: code_review, invoice_extraction, research_agent, "
        "support_triage)\n"
    )


def test_cli_run_prints_the_output_as_json_and_progress_on_stderr(api: FakeAnthropicServer) -> None:
    """A successful run: exit 0, the typed output alone on stdout, the steps of the run on stderr."""
    triage = _example("support_triage")
    api.add(*_script("support_triage"))
    done = cli("run", TRIAGE, triage.PROMPT, env=_live(api))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == triage.FIRST_DRAFT.model_copy(update={"kb_articles": ["KB-101"]}).model_dump()
    _in_order(
        done.stderr,
        "▶ support_triage on claude-sonnet-4-6 · live · up to 2 attempts, 8 iterations each\n",
        "attempt 1/2\n",
        "  iteration 1 → tool_use · +2,158 tokens · 2,158 so far\n",
        "    “I'll look for known VPN issues first.”\n",
        '    ✓ search_kb {"query": "vpn connection drops every hour"} → [{"id":"KB-101",',
        "  iteration 2 → tool_use · +1,155 tokens · 3,313 so far\n",
        '    ✓ read_article {"article_id": "KB-101"} → VPN disconnects about every 60 minutes Clients older',
        '    ✓ read_article {"article_id": "KB-318"} → Wi-Fi drops',
        "  iteration 5 → tool_use · +1,156 tokens · 7,130 so far\n",
        "    ✓ submit → Output accepted. · ",
        "✓ valid Triage\n",
        "  1 attempt · 5 iterations · 6 tool calls (search_kb, read_article x2, emit_triage x2, submit) · ",
        "  7,130 tokens (input 2,078 · output 452 · cache write 920 · cache read 3,680)\n",
    )
    assert api.requests[0]["messages"] == [{"role": "user", "content": triage.PROMPT}]


def test_cli_run_failure_exits_1_with_the_error_code(api: FakeAnthropicServer) -> None:
    """A run that ends without a valid output: exit 1, nothing on stdout, the code and message on stderr."""
    invoice = _example("invoice_extraction")
    api.add(*_script("invoice_extraction")[:2])
    done = cli("run", "examples/invoice_extraction.py:agent", invoice.PROMPT, "--max-attempts", "1", env=_live(api))
    assert (done.returncode, done.stdout) == (1, "")
    _in_order(
        done.stderr,
        "up to 1 attempt, 5 iterations each\n",
        "  ✗ attempt 1 ended with VALIDATION_FAILED\n",
        "✗ failed: VALIDATION_FAILED\n",
        "  No valid output after 1 attempt(s); the last ended with VALIDATION_FAILED: total: 1820.70 but subtotal",
        '  last candidate: {"vendor": "Nordlicht B',
        "  1 attempt · 2 iterations · 2 tool calls (lookup_vendor, record_invoice) · ",
    )
    assert done.stderr.endswith("typedagent: invoice_extraction failed with VALIDATION_FAILED\n")


def _review_with_json_events(api: FakeAnthropicServer) -> tuple[Any, subprocess.CompletedProcess[str]]:
    """`run` of the code-review example, deps from its file, with `--json-events`: the example and the run."""
    review = _example("code_review")
    api.add(*_script("code_review"))
    done = cli(
        "run",
        "examples/code_review.py:agent",
        review.PROMPT,
        "--deps-json",
        "@examples/code_review_deps.json",
        "--json-events",
        env=_live(api),
    )
    return review, done


def test_cli_run_json_events_with_deps_from_a_file(api: FakeAnthropicServer) -> None:
    """`--json-events` writes one JSON object per event to stderr; `--deps-json @file` fills the deps."""
    review, done = _review_with_json_events(api)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == review.REVIEW.model_dump()
    every = [json.loads(line) for line in done.stderr.splitlines()]
    streamed = {"text_delta", "thinking_delta", "tool_input_delta", "partial_output"}
    events = [e for e in every if e["event"] not in streamed]
    assert [(e["event"], e.get("name")) for e in events] == [
        ("start", None),
        ("attempt_start", None),
        ("model_response", None),
        ("tool_call", "changed_files"),
        ("tool_result", "changed_files"),
        ("model_response", None),
        ("tool_call", "read_diff"),
        ("tool_call", "read_diff"),
        ("tool_result", "read_diff"),
        ("tool_result", "read_diff"),
        ("model_response", None),
        ("tool_call", "submit_review"),
        ("tool_result", "submit_review"),
        ("end", None),
    ]
    start, end = events[0], events[-1]
    assert start == {
        "event": "start",
        "target": "examples/code_review.py:agent",
        "agent": "code_review",
        "model": "claude-sonnet-4-6",
        "mode": "live",
        "max_attempts": 3,
        "max_iterations_per_attempt": 15,
    }
    assert events[6]["input"] == {"path": "payments/capture.py"}
    assert events[6]["kind"] == "helper"
    assert (events[8]["is_error"], events[8]["content"][:25]) == (False, "--- a/payments/capture.py")
    assert events[10]["stop_reason"] == "tool_use"
    assert events[10]["tokens"]["total"] == 5476
    assert end["ok"] is True
    assert end["output"] == review.REVIEW.model_dump(mode="json")
    assert (end["attempts"], end["iterations"]) == (1, 3)
    assert end["tool_calls"] == {"changed_files": 1, "read_diff": 2, "submit_review": 1}
    assert end["tokens"] == {
        "input_tokens": 1928,
        "output_tokens": 518,
        "cache_creation_input_tokens": 1010,
        "cache_read_input_tokens": 2020,
        "web_search_requests": 0,
        "web_fetch_requests": 0,
        "cache_creation_1h_input_tokens": 0,
        "total": 5476,
    }
    assert api.requests[0]["system"].startswith("You review pull requests for acme/payments.")


def test_cli_run_json_events_streams_the_output_being_written(api: FakeAnthropicServer) -> None:
    """`run --json-events` streams the calls: the output tool's input arrives as partial outputs, in order."""
    review, done = _review_with_json_events(api)
    assert done.returncode == 0, done.stderr
    assert all(request["stream"] is True for request in api.requests)
    events = [json.loads(line) for line in done.stderr.splitlines()]
    partials = [e for e in events if e["event"] == "partial_output"]
    assert len(partials) > 3
    assert partials[-1]["partial"] == review.REVIEW.model_dump(mode="json")
    assert all(e["attempt"] == 1 and e["iteration"] == 3 for e in partials)
    pieces = [e for e in events if e["event"] == "tool_input_delta" and e["name"] == "read_diff"]
    assert pieces
    assert events.index(partials[-1]) < next(
        i for i, e in enumerate(events) if e["event"] == "tool_call" and e["name"] == "submit_review"
    )
    texts = "".join(e["text"] for e in events if e["event"] == "text_delta")
    model_texts = "".join(
        block["text"]
        for e in events
        if e["event"] == "model_response"
        for block in e["content"]
        if block["type"] == "text"
    )
    assert texts == model_texts


def test_cli_run_scripted_runs_an_example_offline_with_no_key() -> None:
    """`run --scripted` answers from the module's scripted_client(): no key, no network, the typed output on stdout."""
    triage = _example("support_triage")
    done = cli("run", TRIAGE, "Ticket: my VPN drops every hour", "--scripted")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == triage.FIRST_DRAFT.model_copy(update={"kb_articles": ["KB-101"]}).model_dump()
    assert done.stderr.startswith("▶ support_triage on claude-sonnet-4-6 · scripted model (offline) · ")
    assert "✓ valid Triage\n" in done.stderr


def test_cli_run_scripted_takes_the_examples_deps() -> None:
    """An example with deps runs offline with its own deps(), as in the demo."""
    review = _example("code_review")
    done = cli("run", "examples/code_review.py:agent", "Review this pull request.", "--scripted")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == review.REVIEW.model_dump(mode="json")


def test_cli_run_reads_the_prompt_from_stdin(api: FakeAnthropicServer) -> None:
    """PROMPT `-` reads the prompt from stdin."""
    invoice = _example("invoice_extraction")
    api.add(*_script("invoice_extraction"))
    done = cli("run", "examples/invoice_extraction.py:agent", "-", env=_live(api), stdin=invoice.PROMPT)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["total"] == "1280.70"
    assert invoice.PROMPT.endswith("\n")
    assert api.requests[0]["messages"] == [{"role": "user", "content": invoice.PROMPT.rstrip("\n")}]


def test_cli_run_prompt_from_stdin_replays_a_run_recorded_with_the_argument(
    api: FakeAnthropicServer, tmp_path: Path
) -> None:
    """`-` drops the newline(s) that end stdin, as `"$(cat file)"` would: piping the same prompt replays the run."""
    triage = _example("support_triage")
    api.add(*_script("support_triage"))
    cassette = tmp_path / "triage.json"
    recorded = cli("run", TRIAGE, triage.PROMPT, "--record", str(cassette), env=_live(api))
    assert recorded.returncode == 0, recorded.stderr
    replayed = cli("run", TRIAGE, "-", "--replay", str(cassette), stdin=triage.PROMPT + "\n")
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == recorded.stdout


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (
            ["run", "no_such_module:agent", "hi"],
            {},
            "typedagent run: error: no module named 'no_such_module': run from your project's root, or name a file "
            "as path/to/agents.py:agent\n",
        ),
        (
            ["run", "examples/support_triage.py:search_kb", "hi"],
            {},
            "typedagent run: error: examples/support_triage.py:search_kb is a Tool, not an agent: point at the "
            "object define_agent() returned\n",
        ),
        (
            ["run", "examples/code_review.py:agent", "hi", "--deps-json", "{'repository': 1}"],
            {},
            "typedagent run: error: --deps-json is not valid JSON: Expecting property name enclosed in double "
            "quotes: line 1 column 2 (char 1)\n",
        ),
        (
            ["run", TRIAGE, "hi"],
            {},
            "typedagent run: error: ANTHROPIC_API_KEY is not set: export it to run live, replay a recorded run with "
            "--replay CASSETTE, answer from the module's scripted_client() with --scripted, or try `typedagent demo`, "
            "which runs offline\n",
        ),
    ],
    ids=["unknown-module", "not-an-agent", "bad-json", "no-key"],
)
def test_cli_usage_errors_exit_2_with_one_line(args: list[str], env: dict[str, str], message: str) -> None:
    """Unknown modules, non-agents, bad JSON and a missing key: one clear line on stderr, exit 2."""
    done = cli(*args, env=env)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message)


def test_cli_check_passes_the_examples_and_shows_their_tools() -> None:
    """`check` validates every agent of a module; `--show-tools` prints the API's tool definitions as JSON."""
    done = cli("check", "examples/support_triage.py", "examples.invoice_extraction:agent", "--show-tools")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "ok    examples/support_triage.py:agent  support_triage: 2 helpers, output 'emit_triage', reflection",
        "ok    examples.invoice_extraction:agent  invoice_extraction: 1 helper, output 'record_invoice'",
        "checked 2 agents: no problems",
    ]
    shown = json.loads(done.stdout)
    assert [(s["target"], s["agent"]) for s in shown] == [
        ("examples/support_triage.py:agent", "support_triage"),
        ("examples.invoice_extraction:agent", "invoice_extraction"),
    ]
    assert shown[0]["tools"] == _example("support_triage").agent.tool_params()
    assert [tool["name"] for tool in shown[0]["tools"]] == ["search_kb", "read_article", "emit_triage", "submit"]


def test_cli_check_reports_one_line_per_problem(tmp_path: Path) -> None:
    """A definition with problems: exit 1 and one line for each, saying what to fix."""
    (tmp_path / "agents.py").write_text(
        "from pydantic import BaseModel\n"
        "from typedagent import HelperTool, OutputTool, define_agent, tool\n\n"
        "class Out(BaseModel):\n    answer: str\n\n"
        "@tool\ndef undocumented(x: int) -> int:\n    return x\n\n"
        "legacy = HelperTool(\n"
        "    definition={'name': 'legacy', 'description': 'Old shape.', 'parameters': {},\n"
        "                'input_schema': {'type': 'object', 'properties': {'q': {'type': 'string'}},\n"
        "                                 'required': ['q']}, 'strict': True},\n"
        "    handler=lambda data: data,\n)\n\n"
        "agent = define_agent(name='bad', model='m', output=OutputTool(Out), helpers=[undocumented, legacy])\n"
    )
    done = cli("check", str(tmp_path / "agents.py"))
    assert (done.returncode, done.stdout) == (1, "")
    label = f"{tmp_path / 'agents.py'}:agent"
    assert done.stderr.splitlines() == [
        f"FAIL  {label}: tool 'undocumented': no description; the model reads it to decide when to call the tool "
        "(add a docstring, or pass description=...)",
        f"FAIL  {label}: tool 'legacy': unknown key(s) 'parameters'; the Messages API takes name, description, "
        "input_schema (not 'parameters' or 'inputSchema')",
        f"FAIL  {label}: tool 'legacy': strict, but its input_schema is not in strict form (transform_schema changes "
        "input_schema.additionalProperties); build it with anthropic.transform_schema(...) or use "
        "OutputTool(..., strict=True)",
        "checked 1 agent: 3 problems",
    ]
    # A schema the API would refuse fails when the HelperTool is defined: check reports the import that failed.
    (tmp_path / "dangling.py").write_text(
        "from typedagent import HelperTool\n"
        "legacy = HelperTool(definition={'name': 'legacy', 'description': 'Old.',\n"
        "                                'input_schema': {'type': 'object', 'required': ['q']}}, handler=print)\n"
    )
    dangling = cli("check", str(tmp_path / "dangling.py"))
    assert dangling.returncode == 1
    assert dangling.stderr.splitlines()[0] == (
        f"FAIL  {tmp_path / 'dangling.py'}: importing {tmp_path / 'dangling.py'} failed: AgentDefinitionError: "
        "HelperTool 'legacy': its input_schema is not one the Messages API accepts: input_schema: \"required\" "
        "names ['q'], which are not in \"properties\". Fix the schema (or build the tool with @tool from a typed "
        "function)."
    )


def test_cli_check_reports_the_problems_of_an_output_mode(tmp_path: Path) -> None:
    """`check` shows each agent's mode; native output on an older model is a problem; --show-tools shows the format."""
    (tmp_path / "modes.py").write_text(
        "from pydantic import BaseModel\n"
        "from typedagent import OutputTool, define_agent\n\n"
        "class Out(BaseModel):\n    answer: str\n\n"
        "native = define_agent(name='native', model='claude-sonnet-4-6', output=OutputTool(Out, mode='native'))\n"
        "prompted = define_agent(name='prompted', model='claude-sonnet-4@20250514',\n"
        "                        output=OutputTool(Out, mode='prompted'))\n"
        "old = define_agent(name='old', model='anthropic.claude-sonnet-4-20250514-v1:0',\n"
        "                   output=OutputTool(Out, mode='native'))\n"
    )
    done = cli("check", str(tmp_path / "modes.py"), "--show-tools")
    label = str(tmp_path / "modes.py")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"ok    {label}:native  native: 0 helpers, output as JSON text (native)",
        f"ok    {label}:prompted  prompted: 0 helpers, output as JSON text (prompted)",
        f"FAIL  {label}:old: output: mode='native', but model 'anthropic.claude-sonnet-4-20250514-v1:0' has no "
        "structured outputs (output_config.format): use mode='prompted' on it, or a newer model",
        "checked 3 agents: 1 problem",
    ]
    shown = json.loads(done.stdout)
    assert [(entry["agent"], entry["output_mode"], entry["tools"]) for entry in shown] == [
        ("native", "native", []),
        ("prompted", "prompted", []),
        ("old", "native", []),
    ]
    assert shown[0]["output_format"]["schema"]["required"] == ["answer"]
    assert "output_format" not in shown[1]


def test_cli_record_then_replay_offline(api: FakeAnthropicServer, tmp_path: Path) -> None:
    """`--record` saves a live run to a cassette; `--replay` reproduces it with no key; drift exits 1."""
    triage = _example("support_triage")
    cassette = tmp_path / "triage.json"
    api.add(*_script("support_triage"))
    recorded = cli("run", TRIAGE, triage.PROMPT, "--record", str(cassette), env=_live(api))
    assert recorded.returncode == 0, recorded.stderr
    assert f"live, recording to {cassette}" in recorded.stderr
    saved = json.loads(cassette.read_text())
    assert len(saved["calls"]) == 5
    assert "test-key" not in cassette.read_text()

    replayed = cli("run", TRIAGE, triage.PROMPT, "--replay", str(cassette))
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == recorded.stdout
    assert f"▶ support_triage on claude-sonnet-4-6 · replaying {cassette}" in replayed.stderr

    drifted = cli("run", TRIAGE, "A different ticket.", "--replay", str(cassette))
    assert (drifted.returncode, drifted.stdout) == (1, "")
    assert f"typedagent: error: CassetteError: ReplayClient: call 1 does not match recorded call 1 of '{cassette}'" in (
        drifted.stderr
    )


@pytest.mark.parametrize("where", ["under-a-file", "a-directory"])
def test_cli_record_to_an_unwritable_path_is_a_usage_error_before_any_call(
    api: FakeAnthropicServer, tmp_path: Path, where: str
) -> None:
    """`--record` to a path that cannot be written exits 2 saying so, before a (paid) request is sent."""
    triage = _example("support_triage")
    (tmp_path / "file").write_text("not a folder")
    cassette = tmp_path / "file" / "c.json" if where == "under-a-file" else tmp_path
    api.add(*_script("support_triage"))
    done = cli("run", TRIAGE, triage.PROMPT, "--record", str(cassette), env=_live(api))
    assert (done.returncode, done.stdout) == (2, "")
    said = f"typedagent run: error: --record: RecordingClient cannot write the cassette {str(cassette)!r}"
    assert said in done.stderr
    assert "Traceback" not in done.stderr
    assert api.requests_served == 0


def test_cli_run_ctrl_c_cancels_through_the_abort_event(api: FakeAnthropicServer) -> None:
    """Ctrl-C during an API call ends the run as EXECUTION_CANCELLED, with its summary, and exit status 130."""
    api.add(delay(60, "never delivered"))
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    process = subprocess.Popen(
        [str(TYPEDAGENT), "run", TRIAGE, "Ticket: VPN drops"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**clean, **_live(api)},
        cwd=ROOT,
    )
    deadline = time.monotonic() + 60
    while api.requests_served == 0 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert (process.returncode, stdout) == (130, "")
    _in_order(
        stderr,
        "attempt 1/2\n",
        "✗ failed: EXECUTION_CANCELLED\n",
        "  The execution was cancelled by its abort event (during phase 'iteration').",
        "  1 attempt · 1 iteration · 0 tool calls · ",
        "typedagent: support_triage failed with EXECUTION_CANCELLED\n",
    )


SLEEPY_AGENT = '''
import time
from pathlib import Path
from pydantic import BaseModel
from typedagent import OutputTool, define_agent, tool

class Out(BaseModel):
    n: int

@tool
def sleepy() -> str:
    """Sleeps 20 s in its worker thread."""
    Path(__file__).with_name("started").write_text("yes")
    time.sleep(20)
    return "late"

agent = define_agent(name="sleepy", model="claude-sonnet-4-6", output=OutputTool(Out), helpers=[sleepy])
'''


def test_cli_run_ctrl_c_returns_at_once_while_a_sync_tool_sleeps(api: FakeAnthropicServer, tmp_path: Path) -> None:
    """Ctrl-C while a sync tool sleeps 20 s: the run ends at once as EXECUTION_CANCELLED; nothing waits for the tool."""
    from typedagent.testing import output_call, tool_call

    (tmp_path / "sleepy_agent.py").write_text(SLEEPY_AGENT)
    api.add(tool_call("sleepy"), output_call({"n": 1}))
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    process = subprocess.Popen(
        [str(TYPEDAGENT), "run", f"{tmp_path / 'sleepy_agent.py'}:agent", "go"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**clean, **_live(api)},
        cwd=ROOT,
    )
    deadline = time.monotonic() + 60
    while not (tmp_path / "started").exists() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.02)
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    assert process.stderr is not None
    stderr = ""
    for line in process.stderr:
        stderr += line
        if line.startswith("typedagent: sleepy failed"):
            reported = time.monotonic()
    stdout, _ = process.communicate(timeout=60)
    exited = time.monotonic()
    # The run ends (and says so) at once; the process then exits without waiting for the 20 s tool (the rest
    # of the time is the interpreter's own shutdown, seconds on a loaded machine).
    assert reported - sent < 0.5
    assert exited - sent < 10
    assert (process.returncode, stdout) == (130, "")
    _in_order(
        stderr,
        "✗ sleepy → Error: abandoned: the execution stopped",
        "✗ failed: EXECUTION_CANCELLED\n",
        "typedagent: sleepy failed with EXECUTION_CANCELLED\n",
    )


def test_cli_readme_commands_work_as_written_after_make_demo() -> None:
    """The README's command-line block, pasted into a shell that has not activated .venv, runs and exits 0."""
    if not (ROOT / ".venv" / "bin" / "activate").exists():
        pytest.skip("the README's commands assume the .venv/ that `make demo` builds")
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## The command line") :]
    start = section.index("```console\n") + len("```console\n")
    commands = section[start : section.index("```", start)]
    assert commands.startswith("source .venv/bin/activate\ntypedagent run ")
    venv_bin = str(ROOT / ".venv" / "bin")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_") and k != "VIRTUAL_ENV"}
    env["PATH"] = os.pathsep.join(part for part in env.get("PATH", "").split(os.pathsep) if part != venv_bin)
    done = subprocess.run(
        ["bash", "-e", "-c", commands], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"kb_articles": [\n    "KB-101"\n  ]' in done.stdout
    assert "· scripted model (offline) ·" in done.stderr
    assert "checked 4 agents: no problems" in done.stderr
    assert "4 of 4 examples produced a valid output (scripted model)." in done.stdout


def _skip_without_mcp() -> None:
    # The distribution, not an import: a folder named mcp on the path would import as a namespace package.
    try:
        importlib.metadata.version("mcp")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("the mcp extra is not installed (the dev extra brings it)")


def _mcp_agent_file(tmp_path: Path, *, args: str) -> Path:
    _skip_without_mcp()
    path = tmp_path / "mcp_agents.py"
    path.write_text(
        "import sys\n"
        "from pydantic import BaseModel\n"
        "from typedagent import OutputTool, define_agent, tool\n"
        "from typedagent.mcp import MCPToolset\n\n"
        "class Out(BaseModel):\n    answer: str\n\n"
        "@tool\ndef lookup(q: str) -> str:\n    '''Look something up.'''\n    return q\n\n"
        f"demo = MCPToolset.stdio(sys.executable, {args}, name='demo', prefix='demo', allow=['echo', 'weather'])\n"
        "agent = define_agent(name='mcp', model='m', output=OutputTool(Out), helpers=[lookup, demo])\n"
    )
    return path


def test_cli_check_connect_lists_mcp_tools(tmp_path: Path) -> None:
    """`check` names the toolsets it did not connect; `--connect` starts their servers, checks and shows their tools."""
    _skip_without_mcp()
    path = _mcp_agent_file(tmp_path, args=repr([str(ROOT / "tests" / "mcp_servers" / "demo.py"), "stdio"]))
    offline = cli("check", f"{path}:agent", "--show-tools")
    assert offline.returncode == 0, offline.stderr
    assert offline.stderr.splitlines()[0] == (
        f"ok    {path}:agent  mcp: 1 helper, 1 toolset (not connected: --connect lists their tools), "
        "output 'final_output'"
    )
    assert [tool["name"] for tool in json.loads(offline.stdout)[0]["tools"]] == ["lookup", "final_output"]
    connected = cli("check", f"{path}:agent", "--show-tools", "--connect")
    assert connected.returncode == 0, connected.stderr
    assert (
        connected.stderr.splitlines()[0]
        == f"ok    {path}:agent  mcp: 1 helper, 1 toolset (2 tools), output 'final_output'"
    )
    tools = json.loads(connected.stdout)[0]["tools"]
    assert [tool["name"] for tool in tools] == ["lookup", "demo_echo", "demo_weather", "final_output"]
    assert tools[1]["description"] == "Say the text back."


def test_cli_check_connect_reports_a_server_that_cannot_start(tmp_path: Path) -> None:
    """A toolset whose server cannot be connected is one problem line saying why: exit 1."""
    _skip_without_mcp()
    path = _mcp_agent_file(tmp_path, args="['-c', 'import sys; sys.exit(4)']")
    done = cli("check", f"{path}:agent", "--connect")
    assert done.returncode == 1
    assert done.stderr.splitlines()[0].startswith(
        f"FAIL  {path}:agent: toolsets: MCP server 'demo' could not be connected: the server closed the connection"
    )

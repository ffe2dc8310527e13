"""The command line in-process, through ``main(argv)``: the error paths and the pieces behind the commands."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pydantic
import pytest
from pydantic import BaseModel

import typedagent
from typedagent import ExecuteCallbacks, HelperTool, OutputTool, TokenUsage, define_agent, execute_agent
from typedagent.__main__ import main
from typedagent._agent.locate import ImportFailed, load_module, split_target
from typedagent._cli import _demo, _run
from typedagent._cli._check import _first_difference, check_agent, schema_problems, strict_problems
from typedagent._cli._check_output import exceeded_limit
from typedagent._cli._progress import Lines, Progress, RichLines, make_lines
from typedagent._cli._run import write_json
from typedagent._cli._summary import Summary
from typedagent.testing import (
    FakeAnthropicServer,
    ScriptedClient,
    malformed_body,
    output_call,
    response,
    text,
    tool_call,
    usage,
)

ROOT = Path(__file__).resolve().parent.parent


class Out(BaseModel):
    answer: str


class Streams:
    """Captured stdout/stderr for one ``main`` call."""

    def __init__(self) -> None:
        self.out = io.StringIO()
        self.err = io.StringIO()

    def __call__(self, *argv: str, stdin: str = "") -> int:
        return main(list(argv), stdout=self.out, stderr=self.err, stdin=io.StringIO(stdin))


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Streams:
    """``main`` with captured streams, run from the repository root with no API key."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(ROOT)
    return Streams()


def _module(tmp_path: Path, source: str, name: str = "agents_under_test") -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return str(path)


AGENT_SOURCE = """
    from pydantic import BaseModel
    from typedagent import OutputTool, define_agent

    class Out(BaseModel):
        answer: str

    class Holder:
        agent = define_agent(name="held", model="m", output=OutputTool(Out))

    agent = define_agent(name="plain", model="m", output=OutputTool(Out))
"""


@pytest.mark.parametrize(
    ("spec", "parts"),
    [
        ("pkg.mod:agent", ("pkg.mod", "agent")),
        ("path/to/file.py:agent", ("path/to/file.py", "agent")),
        ("pkg.mod", ("pkg.mod", None)),
        ("file.py", ("file.py", None)),
        (r"C:\agents\file.py", (r"C:\agents\file.py", None)),
        (":agent", (":agent", None)),
        ("dir:sub/file.py", ("dir:sub/file.py", None)),
    ],
)
def test_split_target_separates_module_and_attribute(spec: str, parts: tuple[str, str | None]) -> None:
    """The last colon separates the attribute, unless what follows it is a path."""
    assert split_target(spec) == parts


def test_main_version_and_missing_command(cli: Streams) -> None:
    """`--version` prints the version and exits 0; no command is a usage error (2)."""
    assert cli("--version") == 0
    assert cli.out.getvalue() == f"typedagent {typedagent.__version__}\n"
    assert cli() == 2
    assert cli.err.getvalue().endswith("typedagent: error: the following arguments are required: COMMAND\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "examples/support_triage.py", "hi"], "'examples/support_triage.py' names no agent: use MODULE:ATTR"),
        (["run", "examples/missing.py:agent", "hi"], "no such file: examples/missing.py"),
        (["run", "examples/code_review_deps.json:agent", "hi"], "examples/code_review_deps.json is not a Python file"),
        (
            ["run", "examples/support_triage.py:nope", "hi"],
            "examples/support_triage.py has no attribute 'nope' (agents defined there: agent)",
        ),
        (
            ["run", "examples/code_review.py:agent", "hi"],
            "agent 'code_review' needs run-time deps (ReviewDeps): pass --deps-json '{...}' or --deps-json @deps.json",
        ),
        (
            ["run", "examples/support_triage.py:agent", "hi", "--deps-json", "{}"],
            "agent 'support_triage' declares no deps_type, so --deps-json has nothing to fill",
        ),
        (
            ["run", "examples/code_review.py:agent", "hi", "--deps-json", "@missing.json"],
            "--deps-json: cannot read missing.json: No such file or directory",
        ),
        (
            ["run", "examples/code_review.py:agent", "hi", "--deps-json", '{"repository": "a/b"}'],
            "--deps-json does not fit ReviewDeps: diff: Field required",
        ),
        (["run", "examples/support_triage.py:agent", "  "], "the prompt is empty: pass the text to work on"),
        (["run", "examples/support_triage.py:agent", "hi", "--replay", "none.json"], "cassette not found: none.json"),
        (["run", "examples/support_triage.py:agent", "hi", "--replay", "examples/code_review_deps.json"], "--replay:"),
        (["demo", "--examples", "nowhere"], "--examples: nowhere is not a directory"),
    ],
)
def test_main_usage_errors(cli: Streams, argv: list[str], message: str) -> None:
    """Each usage error is one line on stderr, naming the problem and the fix, with exit status 2."""
    assert cli(*argv) == 2
    assert cli.out.getvalue() == ""
    lines = cli.err.getvalue().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"typedagent {argv[0]}: error: {message}")


def test_run_import_failures_are_usage_errors(cli: Streams, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A module that cannot be imported (syntax error, definition error, missing dependency) cannot be run."""
    broken = _module(tmp_path, "def broken(:\n", name="broken_syntax")
    assert cli("run", f"{broken}:agent", "hi") == 2
    assert cli.err.getvalue().startswith(f"typedagent run: error: importing {broken} failed: SyntaxError: ")
    _module(tmp_path, "import no_such_dependency_xyz\n", name="needs_dep")
    monkeypatch.syspath_prepend(str(tmp_path))
    second = Streams()
    assert second("run", "needs_dep:agent", "hi") == 2
    assert second.err.getvalue() == (
        "typedagent run: error: importing needs_dep failed: ModuleNotFoundError: No module named "
        "'no_such_dependency_xyz'\n"
    )


def test_run_resolves_dotted_attributes_and_module_names(
    cli: Streams, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`file.py:Holder.agent` and `package.module:agent` both find the agent (here up to the key check)."""
    path = _module(tmp_path, AGENT_SOURCE)
    assert cli("run", f"{path}:Holder.agent", "hi") == 2
    assert "ANTHROPIC_API_KEY is not set" in cli.err.getvalue()
    monkeypatch.chdir(tmp_path)
    second = Streams()
    assert second("run", "agents_under_test:agent", "hi") == 2
    assert "ANTHROPIC_API_KEY is not set" in second.err.getvalue()


LIST_AGENT_SOURCE = """
    from pydantic import BaseModel
    from typedagent import OutputTool, ValidationConfig, define_agent
    from typedagent.testing import ScriptedClient, output_call

    class Item(BaseModel):
        name: str

    validation = ValidationConfig(max_iterations_per_attempt=4, force_output_on_last_iteration=True)
    agent = define_agent(name="items", model="m", output=OutputTool(list[Item]), validation=validation)

    def scripted_client():
        return ScriptedClient([output_call([Item(name="bolt"), Item(name="nut")])])
"""


def test_run_max_attempts_keeps_the_rest_and_prints_any_output_type(
    cli: Streams, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--max-attempts` goes through with_options (the rest of the config stays); a list output prints as JSON."""
    seen: list[Any] = []
    original = _run.stream_agent

    def spy(agent: Any, prompt: Any, **kwargs: Any) -> Any:
        seen.append(agent.validation)
        return original(agent, prompt, **kwargs)

    monkeypatch.setattr(_run, "stream_agent", spy)
    path = _module(tmp_path, LIST_AGENT_SOURCE, name="list_agent_under_test")
    assert cli("run", f"{path}:agent", "hi", "--scripted", "--max-attempts", "2") == 0
    assert [(v.max_attempts, v.max_iterations_per_attempt, v.force_output_on_last_iteration) for v in seen] == [
        (2, 4, True)
    ]
    assert json.loads(cli.out.getvalue()) == [{"name": "bolt"}, {"name": "nut"}]
    assert "✓ valid list[Item]" in cli.err.getvalue()
    events = Streams()
    assert events("run", f"{path}:agent", "hi", "--scripted", "--json-events") == 0
    end = json.loads(events.err.getvalue().splitlines()[-1])
    assert (end["event"], end["output"]) == ("end", [{"name": "bolt"}, {"name": "nut"}])


def test_run_max_attempts_and_assertion_errors(cli: Streams, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--max-attempts` replaces the agent's limit; a test double that disagrees with the run exits 1."""
    seen: list[int] = []
    original = _run.stream_agent

    def spy(agent: Any, prompt: Any, **kwargs: Any) -> Any:
        seen.append(agent.validation.max_attempts)
        return original(agent, prompt, **kwargs)

    monkeypatch.setattr(_run, "stream_agent", spy)
    monkeypatch.setattr(_run, "_client", lambda args: (ScriptedClient([]), "scripted"))
    path = _module(tmp_path, AGENT_SOURCE)
    assert cli("run", f"{path}:agent", "hi", "--max-attempts", "7") == 1
    assert seen == [7]
    assert cli.out.getvalue() == ""
    assert (
        cli.err.getvalue()
        .splitlines()[-1]
        .startswith(
            "typedagent: error: ScriptError: ScriptedClient: request 1 arrived but the script has only 0 item(s)."
        )
    )


def test_run_reports_ctrl_c_as_interrupted(cli: Streams, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C during a run prints one line and exits 130, like other command-line tools."""

    def interrupted(*args: Any) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr("typedagent._cli._main.run_command", interrupted)
    assert cli("run", "x:y", "hi") == 130
    assert cli.err.getvalue() == "typedagent: interrupted\n"


def test_run_deps_type_that_json_cannot_build(cli: Streams, tmp_path: Path) -> None:
    """A deps_type pydantic cannot build from JSON is reported as such."""
    path = _module(
        tmp_path,
        """
        from pydantic import BaseModel
        from typedagent import OutputTool, define_agent

        class Out(BaseModel):
            answer: str

        class Connection:
            def __init__(self, dsn: str) -> None:
                self.dsn = dsn

        agent = define_agent(name="db", model="m", output=OutputTool(Out), deps_type=Connection)
        """,
        name="db_agent",
    )
    assert cli("run", f"{path}:agent", "hi", "--deps-json", "{}") == 2
    assert cli.err.getvalue().startswith("typedagent run: error: deps_type Connection cannot be built from JSON (")
    assert cli.err.getvalue().endswith("); run this agent from Python\n")


def test_check_definition_errors_and_missing_agents(cli: Streams, tmp_path: Path) -> None:
    """A definition error at import is a problem (exit 1); a module without agents is a usage error (exit 2)."""
    bad = _module(
        tmp_path,
        """
        from pydantic import BaseModel
        from typedagent import OutputTool, define_agent

        class Out(BaseModel):
            answer: str

        agent = define_agent(name="x", model="m", output=OutputTool(Out, name="bad name"))
        """,
        name="bad_definition",
    )
    assert cli("check", bad) == 1
    assert cli.err.getvalue().splitlines() == [
        f"FAIL  {bad}: importing {bad} failed: AgentDefinitionError: OutputTool name 'bad name' is not a valid tool "
        "name: use 1-64 characters from a-z, A-Z, 0-9, '_' and '-'.",
        "checked 0 agents: 1 problem",
    ]
    empty = _module(tmp_path, "VALUE = 1\n", name="no_agents")
    second = Streams()
    assert second("check", empty, "examples/support_triage.py:agent") == 2
    assert second.err.getvalue().splitlines() == [
        f"error {empty}: {empty} defines no agents at module level: name one as {empty}:ATTR",
        "ok    examples/support_triage.py:agent  support_triage: 2 helpers, output 'emit_triage', reflection",
        "checked 1 agent: no problems; 1 usage error",
    ]


def test_check_agent_finds_invalid_duplicate_and_unserialisable_tools() -> None:
    """Tool definitions edited after definition time are still checked: names, uniqueness, JSON."""
    agent = define_agent(name="a", model="m", output=OutputTool(Out, strict=True))
    output = agent.tool_params()[-1]
    broken = (
        {"name": "bad name", "description": "d", "input_schema": {"type": "object"}},
        {"name": "twice", "description": "d", "input_schema": {"type": "object"}},
        {"name": "twice", "description": " ", "input_schema": {"type": "object", "default": object()}},
        output,
    )
    edited = dataclasses.replace(agent, _tool_params=broken)
    problems = check_agent(edited)
    assert problems[:3] == [
        "tool 'bad name': invalid name; use 1-64 characters from a-z, A-Z, 0-9, '_' and '-'",
        "tool 'twice': two tools have this name; tool names must be unique",
        "tool 'twice': no description; the model reads it to decide when to call the tool (add a docstring, "
        "or pass description=...)",
    ]
    assert problems[3].startswith("tool 'twice': the definition is not JSON-serialisable (")
    assert len(problems) == 4  # the strict output tool is in strict form already


def test_schema_problems_walks_the_whole_schema() -> None:
    """Every structural problem is reported with its path inside input_schema."""
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "text"},
            "b": {"$ref": "#/$defs/Missing"},
            "c": {"type": "array", "items": {"type": ["string", "date"]}},
            "d": {"anyOf": [{"type": "string"}, "oops"]},
            "e": {"oneOf": {"type": "string"}},
            "f": {"$ref": "#/$defs/Known"},
            "g": {"$ref": "http://elsewhere"},
        },
        "required": "a",
        "$defs": {"Known": {"type": "object", "properties": [], "required": ["x"]}},
    }
    assert schema_problems(schema) == [
        (".properties.a", "unknown type 'text'; use one of array, boolean, integer, null, number, object, string"),
        (".properties.b", "$ref '#/$defs/Missing' does not resolve inside the schema"),
        (
            ".properties.c.items",
            "unknown type 'date'; use one of array, boolean, integer, null, number, object, string",
        ),
        (".properties.d.anyOf[1]", "must be a JSON schema object, got str"),
        (".properties.e", '"oneOf" must be a list of schemas'),
        (".properties.g", "$ref 'http://elsewhere' does not resolve inside the schema"),
        ("", '"required" must be a list of property names'),
        (".$defs.Known", '"properties" must be an object'),
        (".$defs.Known", '"required" names [\'x\'], which are not in "properties"'),
    ]
    assert schema_problems({"type": "string"}) == [("", 'must have "type": "object" at the top')]
    assert schema_problems(None) == [("", "must be a JSON schema object, got NoneType")]


def test_strict_problems_uses_the_sdk_transformer() -> None:
    """A strict schema must be a fixed point of transform_schema; one it rejects is reported with its reason."""
    assert strict_problems(OutputTool(Out, strict=True).to_param()["input_schema"]) == []
    rejected = strict_problems({"type": "object", "properties": {"anything": {}}})
    assert len(rejected) == 1
    assert rejected[0].startswith("strict, but anthropic.transform_schema rejects its input_schema: Schema must have")
    moved = strict_problems(
        {"type": "object", "properties": {"n": {"type": "array", "minItems": 3}}, "additionalProperties": False}
    )
    assert moved == [
        "strict, but its input_schema is not in strict form (transform_schema changes "
        "input_schema.properties.n.description); build it with anthropic.transform_schema(...) or use "
        "OutputTool(..., strict=True)"
    ]
    assert strict_problems(
        {"type": "object", "properties": {"e": {"enum": ["a"], "type": "string"}}, "additionalProperties": False}
    ) == [
        "strict, but its input_schema is not in strict form (transform_schema changes input_schema.properties.e.type); "
        "build it with anthropic.transform_schema(...) or use OutputTool(..., strict=True)"
    ]


def test_strict_problems_compares_lists_item_by_item() -> None:
    """A difference inside a list is located by index."""
    schema = {
        "type": "object",
        "properties": {"v": {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 1}]}},
        "additionalProperties": False,
    }
    (problem,) = strict_problems(schema)
    assert "transform_schema changes input_schema.properties.v.anyOf[1].description" in problem


def test_demo_reports_failures_and_missing_examples(
    cli: Streams, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An example without a valid output makes the demo exit 1; no examples or a broken one are usage errors."""
    _module(
        tmp_path,
        """
        \"\"\"Always answers in plain text.\"\"\"
        from pydantic import BaseModel
        from typedagent import OutputTool, ValidationConfig, define_agent
        from typedagent.testing import ScriptedClient

        class Out(BaseModel):
            answer: str

        agent = define_agent(
            name="chatty", model="m", output=OutputTool(Out), validation=ValidationConfig(max_attempts=1)
        )
        PROMPT = "Say hi."

        def scripted_client():
            return ScriptedClient(["Hi!"])
        """,
        name="chatty",
    )
    _module(tmp_path, "VALUE = 1\n", name="not_an_example")
    assert cli("demo", "--examples", str(tmp_path)) == 1
    out = cli.out.getvalue()
    assert "━━ 1/1 chatty · Always answers in plain text.\n" in out
    assert "✗ failed: INVALID_RESPONSE\n" in out
    assert out.endswith("0 of 1 examples produced a valid output (scripted model).\n")

    empty = tmp_path / "empty"
    empty.mkdir()
    assert Streams()("demo", "--examples", str(empty)) == 2
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "boom.py").write_text("raise RuntimeError('no')\n")
    streams = Streams()
    assert streams("demo", "--examples", str(broken)) == 2
    assert streams.err.getvalue() == (
        f"typedagent demo: error: an example does not load: importing {broken / 'boom.py'} failed: RuntimeError: no\n"
    )
    monkeypatch.setattr(_demo, "PACKAGE", tmp_path / "site" / "typedagent")
    lost = Streams()
    assert lost("demo") == 2
    assert lost.err.getvalue() == (
        "typedagent demo: error: cannot find the bundled examples (examples/ of the source checkout, or "
        "typedagent/_examples in a wheel): reinstall typedagent, or pass --examples DIR\n"
    )
    shipped = tmp_path / "site" / "typedagent" / "_examples"
    shutil.copytree(Path(__file__).resolve().parent.parent / "examples", shipped)
    assert _demo.examples_dir() == shipped


async def test_progress_json_events_for_a_failed_run() -> None:
    """JSON events carry validation failures and the final error with its context and last candidate."""
    agent = define_agent(
        name="strict_answer",
        model="m",
        output=OutputTool(Out),
        validators=[_reject],
    )
    stream = io.StringIO()
    progress = Progress(stream, json_events=True)
    progress.start(agent, label="x:agent", mode="scripted")
    client = ScriptedClient([output_call({"answer": "no"})] * 3)
    result = await execute_agent(agent, "hi", client=client, callbacks=progress.callbacks())
    progress.finish(result)
    events = [json.loads(line) for line in stream.getvalue().splitlines()]
    failures = [e for e in events if e["event"] == "validation_failure"]
    assert [(e["attempt"], e["outcome"], e["errors"], e["candidate"]) for e in failures] == [
        (n, "VALIDATION_FAILED", ["the answer must be yes"], {"answer": "no"}) for n in (1, 2, 3)
    ]
    end = events[-1]
    assert end["ok"] is False
    assert end["error"]["code"] == "VALIDATION_FAILED"
    assert end["error"]["context"] == {"attempt_errors": [["the answer must be yes"]] * 3}
    assert end["error"]["last_output"] == {"answer": "no"}
    assert "output" not in end


def _reject(out: Out) -> None:
    from typedagent import OutputRejected

    if out.answer != "yes":
        raise OutputRejected("the answer must be yes")


async def test_progress_lines_without_rich_and_with_callback_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without rich the lines are plain text; model text, unknown tools and callback errors are shown."""
    monkeypatch.setitem(sys.modules, "rich", None)
    monkeypatch.setitem(sys.modules, "rich.console", None)
    stream = io.StringIO()
    assert type(make_lines(stream)) is Lines
    progress = Progress(stream)
    agent = define_agent(name="plain", model="m", output=OutputTool(Out))
    progress.start(agent, label="x", mode="scripted")

    def boom(state: Any, event: Any) -> None:
        raise ValueError("hook broke")

    hooks = dataclasses.replace(progress.callbacks(), on_attempt_start=boom)
    chatter = "thinking aloud " * 20
    client = ScriptedClient(
        [response(text(chatter), tool_call("lookup", {"q": "x"}, unknown=True)), output_call({"answer": "ok"})]
    )
    result = await execute_agent(agent, "hi", client=client, callbacks=hooks)
    progress.finish(result)
    shown = re.sub(r"\d+\.\d+ (ms|s)\b", "T", stream.getvalue()).splitlines()
    assert shown == [
        "▶ plain on m · scripted · up to 3 attempts, 15 iterations each",
        "  iteration 1 → tool_use · +15 tokens · 15 so far",
        f"    “{chatter.strip()[:109]}…”",
        '    ✗ lookup {"q": "x"} → Error: Unknown tool lookup · T',
        "  iteration 2 → tool_use · +15 tokens · 30 so far",
        '    ✓ final_output {"answer": "ok"} → Output accepted. · T',
        "✓ valid Out",
        "  1 attempt · 2 iterations · 2 tool calls (lookup, final_output) · T",
        "  30 tokens (input 20 · output 10 · cache write 0 · cache read 0)",
        "  callback error: on_attempt_start (test_progress_lines_without_rich_and_with_callback_errors.<locals>.boom): "
        "ValueError: hook broke",
    ]


async def test_progress_shows_the_estimated_cost_and_what_the_prompt_cache_saved() -> None:
    """A priced model: the summary ends with the cost and the cache's effect, as metadata reports them."""
    stream = io.StringIO()
    progress = Progress(stream)
    agent = define_agent(name="priced", model="claude-sonnet-4-6", output=OutputTool(Out))
    progress.start(agent, label="x", mode="scripted")
    client = ScriptedClient([response(output_call({"answer": "ok"}), usage=usage(100, 10, 0, 1_000))])
    result = await execute_agent(agent, "hi", client=client)
    summary = progress.finish(result)
    # 100 x $3 + 10 x $15 + 1,000 x $0.30 per million; the 1,000 read tokens would have cost $3 a million.
    assert stream.getvalue().splitlines()[-1] == "  est. cost $0.0008 · prompt cache saved $0.0027"
    assert summary.cost_usd == result.metadata.cost_usd
    assert summary.cache_savings_usd == result.metadata.cache_savings_usd
    assert summary.as_json()["cache_savings_usd"] == pytest.approx(0.0027)


def test_summary_cost_line_says_when_the_cache_cost_more_and_nothing_without_a_price() -> None:
    """Writes nothing read back cost more than no caching; an unpriced model shows no cost line."""
    written = TokenUsage(cache_creation_input_tokens=1_000)
    summary = Summary(1, 1, Counter(), written, 1.0, cost_usd=2.5, cache_savings_usd=-0.00125)
    assert summary.cost_line() == "est. cost $2.50 · prompt cache cost $0.0013 more"
    assert dataclasses.replace(summary, tokens=TokenUsage()).cost_line() == "est. cost $2.50"  # no cache use
    assert dataclasses.replace(summary, cost_usd=None).cost_line() is None


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_rich_lines_show_a_status_only_on_a_terminal() -> None:
    """The spinner runs on a terminal and is removed by close(); in a pipe it never starts."""
    terminal = RichLines(_Terminal())
    terminal.status("waiting")
    assert terminal._status is not None
    terminal.status("still waiting")
    terminal.close()
    assert terminal._status is None
    terminal.close()
    pipe = RichLines(io.StringIO())
    pipe.status("waiting")
    assert pipe._status is None


def test_write_json_colours_only_terminals(monkeypatch: pytest.MonkeyPatch) -> None:
    """JSON on a terminal goes through rich; in a pipe, or without rich, it is written as is."""
    document = json.dumps({"a": [1, 2]}, indent=2)
    pipe = io.StringIO()
    write_json(pipe, document)
    assert pipe.getvalue() == document + "\n"
    terminal = _Terminal()
    write_json(terminal, document)
    assert json.loads(_strip_ansi(terminal.getvalue())) == {"a": [1, 2]}
    monkeypatch.setitem(sys.modules, "rich.console", None)
    plain = _Terminal()
    write_json(plain, document)
    assert plain.getvalue() == document + "\n"


def _strip_ansi(value: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", value)


def test_helper_tool_definitions_reach_check_unchanged() -> None:
    """check_agent reads what the API receives: a raw HelperTool definition as given."""
    raw = HelperTool(
        definition={"name": "raw", "description": "Raw tool.", "input_schema": {"type": "object", "properties": {}}},
        handler=lambda data: data,
    )
    agent = define_agent(name="raw", model="m", output=OutputTool(Out), helpers=[raw])
    assert check_agent(agent) == []
    assert agent.tool_params()[0] == raw.definition


def test_callbacks_object_is_complete() -> None:
    """Progress hooks into every callback the loop offers."""
    hooks = Progress(io.StringIO()).callbacks()
    assert isinstance(hooks, ExecuteCallbacks)
    assert all(getattr(hooks, field.name) is not None for field in dataclasses.fields(hooks))


def test_python_dash_m_typedagent_is_the_same_command() -> None:
    """`python -m typedagent` runs the same entry point as the console script."""
    done = subprocess.run(
        [sys.executable, "-m", "typedagent", "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout) == (0, f"typedagent {typedagent.__version__}\n")


@pytest.mark.parametrize(("value", "message"), [("abc", "got 'abc'"), ("0", "got 0")])
def test_run_max_attempts_must_be_positive(cli: Streams, value: str, message: str) -> None:
    """`--max-attempts` takes a whole number >= 1; anything else is an argparse usage error."""
    assert cli("run", "x:y", "hi", "--max-attempts", value) == 2
    assert cli.err.getvalue().endswith(f"argument --max-attempts: expected a whole number >= 1, {message}\n")


def test_load_module_by_name_reports_import_crashes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A module found by name that raises on import is reported as an import failure, not as missing."""
    (tmp_path / "crashes_on_import.py").write_text("raise RuntimeError('bad config')\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ImportFailed, match=r"^importing crashes_on_import failed: RuntimeError: bad config$"):
        load_module("crashes_on_import")


def test_load_file_lets_system_exit_through(tmp_path: Path) -> None:
    """A file that exits while being imported exits the command too; it is not left half-registered."""
    path = tmp_path / "exits_on_import.py"
    path.write_text("raise SystemExit(3)\n")
    with pytest.raises(SystemExit) as exited:
        load_module(str(path))
    assert exited.value.code == 3
    assert "exits_on_import" not in sys.modules


def test_first_difference_locates_list_length_changes() -> None:
    """Lists of different lengths differ at the list itself."""
    assert _first_difference({"a": [1, 2]}, {"a": [1]}, "s") == "s.a"
    assert _first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}, "s") is None
    assert _first_difference({"a": 1}, {"b": 1}, "s") == "s.a"


def test_run_failure_with_json_events_ends_with_the_error_event(
    cli: Streams, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --json-events a failed run's last stderr line is the `end` event; no human line follows it."""
    monkeypatch.setattr(_run, "_client", lambda args: (ScriptedClient(["I'd rather chat."]), "scripted"))
    path = _module(tmp_path, AGENT_SOURCE)
    assert cli("run", f"{path}:agent", "hi", "--max-attempts", "1", "--json-events") == 1
    assert cli.out.getvalue() == ""
    events = [json.loads(line) for line in cli.err.getvalue().splitlines()]
    assert [e["event"] for e in events] == [
        "start",
        "attempt_start",
        "text_delta",
        "model_response",
        "validation_failure",
        "end",
    ]
    assert events[2]["text"] == "I'd rather chat."
    assert (events[-1]["ok"], events[-1]["error"]["code"]) == (False, "INVALID_RESPONSE")


def test_demo_stops_after_an_interrupted_example(cli: Streams, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C during an example ends the demo there, saying so, with exit status 130."""
    real = _demo.execute

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        result, _ = real(*args, **kwargs)
        return result, True

    monkeypatch.setattr(_demo, "execute", interrupted)
    assert cli("demo") == 130
    out = cli.out.getvalue()
    assert out.count("━━ ") == 1
    assert out.endswith("Interrupted: the remaining examples were not run.\n")


def test_run_reports_a_malformed_base_url_as_a_failed_run(
    cli: Streams, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A malformed ANTHROPIC_BASE_URL fails the run with the API_ERROR execute_agent reports, not a traceback."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://[::1")
    path = _module(tmp_path, AGENT_SOURCE)
    assert cli("run", f"{path}:agent", "hi") == 1
    assert "API_ERROR" in cli.err.getvalue()
    assert "The base URL (ANTHROPIC_BASE_URL, or the client's base_url) is not a valid URL" in cli.err.getvalue()


GEO_SOURCE = """
    from pydantic import BaseModel
    from typedagent import OutputTool, define_agent, tool

    class Answer(BaseModel):
        city: str
        population: int

    @tool
    def lookup(query: str) -> str:
        \"\"\"Look up a fact.\"\"\"
        return f"facts about {query}"

    agent = define_agent(name="geo", model="claude-haiku-4-5", output=OutputTool(Answer), helpers=[lookup])
"""


def test_run_json_events_show_each_response_as_the_api_sent_it(
    cli: Streams, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_anthropic_server: FakeAnthropicServer
) -> None:
    """A `model_response` event holds the response's blocks field for field: nulls and newer block types kept."""
    sent = json.loads((ROOT / "tests" / "data" / "web_search_response.json").read_text())
    fake_anthropic_server.add(malformed_body(json.dumps(sent)), output_call({"city": "Paris", "population": 2}))
    monkeypatch.setattr(_run, "_client", lambda args: (fake_anthropic_server.client(), "live"))
    assert cli("run", f"{_module(tmp_path, GEO_SOURCE)}:agent", "Paris?", "--json-events") == 0, cli.err.getvalue()
    events = [json.loads(line) for line in cli.err.getvalue().splitlines()]
    responses = [event for event in events if event["event"] == "model_response"]
    assert responses[0]["content"] == sent["content"]
    assert responses[1]["content"][0]["input"] == {"city": "Paris", "population": 2}


def test_run_scripted_prefers_deps_json_and_needs_a_scripted_client(cli: Streams, tmp_path: Path) -> None:
    """`--scripted` still validates `--deps-json`; on a module with no scripted_client() it says what to define."""
    assert cli("run", "examples/code_review.py:agent", "Review.", "--scripted", "--deps-json", '{"repo": 1}') == 2
    assert cli.err.getvalue().startswith("typedagent run: error: --deps-json does not fit ")
    target = f"{_module(tmp_path, AGENT_SOURCE)}:agent"
    cli.err.truncate(0)
    cli.err.seek(0)
    assert cli("run", target, "hi", "--scripted") == 2
    assert cli.out.getvalue() == ""
    assert cli.err.getvalue() == (
        f"typedagent run: error: --scripted: the module of {target} defines no scripted_client(); define one that "
        "returns a typedagent.testing client (ScriptedClient([...]), as the bundled examples do), or replay a "
        "recorded run with --replay CASSETTE\n"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"version": 1}', "--replay: ReplayClient: 'broken.json' has no 'calls' list"),
        (b'{"version": 1, "calls": "none"}', "--replay: ReplayClient: 'broken.json' has no 'calls' list"),
        (b'{"version": 1, "calls": [1]}', "--replay: ReplayClient: 'broken.json': call 1 is not an object"),
        (b"\xff\xfe{}", "--replay: 'utf-8' codec can't decode byte 0xff"),
    ],
)
def test_run_replay_of_an_unusable_cassette_is_a_usage_error(
    cli: Streams, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes, message: str
) -> None:
    """A cassette with no usable ``calls`` (or not UTF-8) is one usage error line, exit 2, never a traceback."""
    (tmp_path / "broken.json").write_bytes(content)
    monkeypatch.chdir(tmp_path)
    assert cli("run", str(ROOT / "examples" / "support_triage.py") + ":agent", "hi", "--replay", "broken.json") == 2
    lines = cli.err.getvalue().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"typedagent run: error: {message}")


def test_run_deps_json_file_that_is_not_utf8(cli: Streams, tmp_path: Path) -> None:
    """``--deps-json @file`` with bytes that are not UTF-8 is a usage error naming the file."""
    deps = tmp_path / "deps.json"
    deps.write_bytes(b'{"repository": "caf\xe9"}')
    assert cli("run", "examples/code_review.py:agent", "hi", "--deps-json", f"@{deps}", "--scripted") == 2
    assert cli.err.getvalue() == (
        f"typedagent run: error: --deps-json: {deps} is not UTF-8 text (invalid continuation byte at byte 19): "
        "save it as UTF-8\n"
    )


def test_check_model_ids(cli: Streams, tmp_path: Path) -> None:
    """An unknown Claude-like model id is a warning line (exit 0); a ``provider:`` prefix fails the definition."""
    source = """
        from pydantic import BaseModel
        from typedagent import OutputTool, define_agent

        class Out(BaseModel):
            answer: str

        agent = define_agent(name="typo", model="{model}", output=OutputTool(Out, description="The answer."))
    """
    typo = _module(tmp_path, source.format(model="claude-snonet-4-6"), name="typo_model")
    assert cli("check", typo) == 0
    assert cli.err.getvalue().splitlines() == [
        f"warn  {typo}:agent: model 'claude-snonet-4-6' is not a model the installed anthropic SDK knows: did you "
        "mean 'claude-sonnet-4-6'? A model newer than the SDK still works (upgrade anthropic to stop this warning); "
        "a misspelt one fails every call with a 404.",
        f"ok    {typo}:agent  typo: 0 helpers, output 'final_output'",
        "checked 1 agent: no problems",
    ]
    prefixed = _module(tmp_path, source.format(model="anthropic:claude-sonnet-4-6"), name="prefixed_model")
    second = Streams()
    assert second("check", prefixed) == 1
    assert "define_agent(model='anthropic:claude-sonnet-4-6'): 'anthropic:' names a provider" in second.err.getvalue()


def test_check_output_limits_count_strict_schemas_together() -> None:
    """Strict tools and the native format count together against the API's limits; over one is a problem."""
    many = {"type": "object", "properties": {f"f{n}": {"type": "string"} for n in range(13)}, "required": []}
    assert exceeded_limit([many], None) is None
    assert exceeded_limit([many], many) == "26 optional parameters, over the limit of 24"
    unions = {
        "type": "object",
        "properties": {f"u{n}": {"anyOf": [{"type": "string"}, {"type": "null"}]} for n in range(17)},
    }
    assert exceeded_limit([], {**unions, "required": list(unions["properties"])}) == (
        "17 parameters with union types, over the limit of 16"
    )
    assert exceeded_limit([{"type": "object", "properties": {}}] * 21, None) == "21 strict tools, over the limit of 20"
    nested = {"type": "object", "properties": {"inner": {"type": "array", "items": many}}, "required": ["inner"]}
    assert exceeded_limit([nested, many], None) == "26 optional parameters, over the limit of 24"
    referenced = {"type": "object", "properties": {"x": {"$ref": "#/$defs/M"}}, "required": ["x"], "$defs": {"M": many}}
    assert exceeded_limit([referenced, many], None) is None  # what sits behind a $ref is not counted
    assert exceeded_limit([{"type": "object", "properties": {"anything": True}}], None) is None


def test_check_output_problems_of_a_native_agent_over_the_limits() -> None:
    """An agent whose strict helpers and native output go over the limits gets one problem saying what to do."""
    optional: dict[str, Any] = {f"field_{n}": (str | None, None) for n in range(13)}
    wide_output = pydantic.create_model("Wide", **optional)
    schema = {"type": "object", "properties": {f"p{n}": {"type": "string"} for n in range(12)}, "required": []}
    wide = HelperTool(
        definition={"name": "wide", "description": "Take many optional parameters.", "input_schema": schema},
        handler=lambda data: "",
        strict=True,
    )

    agent = define_agent(
        name="wide", model="claude-sonnet-4-6", output=OutputTool(wide_output, mode="native"), helpers=[wide]
    )
    assert check_agent(agent) == [
        "strict schemas: 25 optional parameters, over the limit of 24. The API compiles every strict schema of a "
        "request together (strict tools and the native output's format) and refuses one over its limits: set strict "
        "only on the tools that need it, simplify the output type, or use mode='tool' (without strict) or "
        "mode='prompted'"
    ]
    old = define_agent(
        name="old", model="anthropic.claude-3-5-sonnet-20241022-v2:0", output=OutputTool(wide_output), helpers=[wide]
    )
    assert check_agent(old) == [
        "strict tools ('wide'): model 'anthropic.claude-3-5-sonnet-20241022-v2:0' does not take strict: true; drop "
        "strict, or use a newer model"
    ]

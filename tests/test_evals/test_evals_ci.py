"""Evals where CI runs them: the bundled examples' suites on replayed cassettes, ``typedagent eval``, pytest."""

from __future__ import annotations

import importlib.util
import io
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from typedagent.__main__ import main
from typedagent.evals import load_dataset, run_evals_sync
from typedagent.testing import FakeAnthropicServer, ReplayClient

ROOT = Path(__file__).resolve().parents[2]
EVALS = ROOT / "examples" / "evals"
EXAMPLES = ["invoice_extraction", "research_agent", "support_triage", "code_review"]


def _example(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_suite_passes_on_its_replayed_cassette(name: str) -> None:
    """Each bundled example's eval suite passes twice per case, every recorded call replayed, no network.

    The cassettes were recorded from the examples' scripted models (examples/evals/record_cassettes.py):
    there is no API key here, so they are not real API traffic.
    """
    agent = _example(name).agent
    client = ReplayClient(EVALS / "cassettes" / f"{name}.json")
    report = run_evals_sync(load_dataset(EVALS / f"{name}.eval.yaml", agent), agent, repeat=2, client=client)
    assert report.problems == []
    assert [run.passed for run in report.runs] == [True, True]
    assert len(report.runs[0].scores) >= 5
    client.assert_all_played()


def _eval(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["eval", *args], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_cli_eval_replays_a_cassette_and_writes_reports(tmp_path: Path) -> None:
    """``typedagent eval`` prints the table, writes JSON, HTML and JUnit, and exits 0 when thresholds hold."""
    code, out, err = _eval(
        str(ROOT / "examples" / "support_triage.py") + ":agent",
        str(EVALS / "support_triage.eval.yaml"),
        "--cassette",
        str(EVALS / "cassettes" / "support_triage.json"),
        "--repeat",
        "2",
        "--json",
        str(tmp_path / "r.json"),
        "--html",
        str(tmp_path / "r.html"),
        "--junit",
        str(tmp_path / "r.xml"),
    )
    assert code == 0, err
    assert "vpn_drops_hourly" in out
    assert "suite pass rate 100% (min 100%): PASSED" in out
    assert json.loads((tmp_path / "r.json").read_text())["repeat"] == 2
    assert "<svg" in (tmp_path / "r.html").read_text()
    assert 'name="vpn_drops_hourly"' in (tmp_path / "r.xml").read_text()


def test_cli_eval_exits_1_when_a_threshold_fails(tmp_path: Path) -> None:
    """A case below its threshold makes the command exit 1, and the baseline comparison shows the regression."""
    text = (EVALS / "support_triage.eval.yaml").read_text().replace("category: network", "category: hardware")
    wrong = tmp_path / "wrong.eval.yaml"
    wrong.write_text(text)
    target = str(ROOT / "examples" / "support_triage.py") + ":agent"
    cassette = str(EVALS / "cassettes" / "support_triage.json")
    code, _, _ = _eval(
        target, str(EVALS / "support_triage.eval.yaml"), "--cassette", cassette, "--json", str(tmp_path / "b.json")
    )
    assert code == 0
    code, out, _ = _eval(target, str(wrong), "--cassette", cassette, "--baseline", str(tmp_path / "b.json"))
    assert code == 1
    assert "threshold failed: case 'vpn_drops_hourly'" in out
    assert "regressed 100% → 0%" in out


def test_cli_eval_usage_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No API key and no cassette, a bad dataset, a bad baseline or cassette: exit 2 with one line."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    target = str(ROOT / "examples" / "support_triage.py") + ":agent"
    dataset = str(EVALS / "support_triage.eval.yaml")
    code, _, err = _eval(target, dataset)
    assert (code, "ANTHROPIC_API_KEY is not set" in err) == (2, True)
    (tmp_path / "bad.yaml").write_text("cases: 3")
    assert _eval(target, str(tmp_path / "bad.yaml"))[0] == 2
    assert "--baseline" in _eval(target, dataset, "--baseline", str(tmp_path / "bad.yaml"))[2]
    assert "--cassette" in _eval(target, dataset, "--cassette", str(tmp_path / "none.json"))[2]


INI = """
[pytest]
asyncio_default_fixture_loop_scope = function
filterwarnings = ignore::pytest.PytestAssertRewriteWarning
"""


def test_pytest_collects_eval_files_one_item_per_case(pytester: pytest.Pytester) -> None:
    """A ``*.eval.yaml`` is collected as one test per case plus the suite; a failed case fails its test."""
    pytester.makeini(INI)
    for name in ("support_triage", "code_review"):
        text = (EVALS / f"{name}.eval.yaml").read_text()
        text = text.replace(f"agent: ../{name}.py:agent", f"agent: {ROOT / 'examples' / name}.py:agent")
        text = text.replace(f"cassette: cassettes/{name}.json", f"cassette: {EVALS / 'cassettes' / name}.json")
        if name == "code_review":
            text = text.replace("value: request_changes", "value: approve")
        pytester.path.joinpath(f"{name}.eval.yaml").write_text(text)
    result = pytester.runpytest("-p", "no:randomly", "--junitxml=junit.xml", "-v")
    result.assert_outcomes(passed=2, failed=2)  # the failed case fails the suite too
    result.stdout.fnmatch_lines(
        [
            "*code_review.eval.yaml::retry_payment_captures FAILED*",
            "*support_triage.eval.yaml::vpn_drops_hourly PASSED*",
        ]
    )
    assert "FieldEquals(verdict): verdict: expected 'approve', got 'request_changes'" in result.stdout.str()
    assert 'name="vpn_drops_hourly"' in (pytester.path / "junit.xml").read_text()


def test_pytest_eval_file_without_agent_fails_clearly(pytester: pytest.Pytester) -> None:
    """A suite file that names no agent fails its tests with what to add."""
    pytester.makeini(INI)
    pytester.path.joinpath("x.eval.yaml").write_text("cases: [{name: a, prompt: hi}]\n")
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*name the agent to evaluate*"])


def test_cli_eval_records_live_then_replays(
    fake_anthropic_server: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--record`` runs live (here against the fake API on 127.0.0.1) into a cassette that ``--cassette`` replays."""
    triage = _example("support_triage")
    fake_anthropic_server.add(*triage.scripted_client().script)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic_server.base_url)
    target = str(ROOT / "examples" / "support_triage.py") + ":agent"
    dataset = str(EVALS / "support_triage.eval.yaml")
    cassette = tmp_path / "live.json"
    code, _, err = _eval(target, dataset, "--record", str(cassette))
    assert code == 0, err
    assert len(json.loads(cassette.read_text())["calls"]) == 5
    assert _eval(target, dataset, "--cassette", str(cassette))[0] == 0


def test_cli_eval_record_to_an_unwritable_path_is_a_usage_error_before_any_call(
    fake_anthropic_server: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--record`` under a regular file exits 2 naming the path; no case runs, no request is sent."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic_server.base_url)
    (tmp_path / "file").write_text("not a folder")
    cassette = tmp_path / "file" / "live.json"
    target = str(ROOT / "examples" / "support_triage.py") + ":agent"
    code, _, err = _eval(target, str(EVALS / "support_triage.eval.yaml"), "--record", str(cassette))
    assert code == 2
    assert f"--record: RecordingClient cannot write the cassette {str(cassette)!r}" in err
    assert fake_anthropic_server.requests_served == 0


def test_cli_eval_reports_cassette_drift(tmp_path: Path) -> None:
    """A prompt that no longer matches the cassette exits 1 naming what drifted, without a traceback."""
    text = (EVALS / "support_triage.eval.yaml").read_text().replace("Ticket #4812", "Ticket #4813")
    changed = tmp_path / "changed.eval.yaml"
    changed.write_text(text + "repeat: 1\n")
    target = str(ROOT / "examples" / "support_triage.py") + ":agent"
    code, _, err = _eval(target, str(changed), "--cassette", str(EVALS / "cassettes" / "support_triage.json"))
    assert code == 1
    assert err.startswith("typedagent eval: CassetteError: ReplayClient: call 1 does not match recorded call 1")


TRIAGE_TARGET = str(ROOT / "examples" / "support_triage.py") + ":agent"
TRIAGE_DATASET = EVALS / "support_triage.eval.yaml"
TRIAGE_CASSETTE = EVALS / "cassettes" / "support_triage.json"


@pytest.mark.parametrize("flag", ["--json", "--html", "--junit"])
@pytest.mark.parametrize("victim", ["dataset", "cassette", "baseline", "agent"])
def test_cli_eval_refuses_to_overwrite_an_input(tmp_path: Path, flag: str, victim: str) -> None:
    """A report path naming a file the run reads (dataset, cassette, baseline, the agent's module) is a usage error."""
    dataset = tmp_path / "triage.eval.yaml"
    dataset.write_text(TRIAGE_DATASET.read_text())
    cassette = tmp_path / "triage.json"
    cassette.write_text(TRIAGE_CASSETTE.read_text())
    module = tmp_path / "support_triage.py"
    module.write_text((ROOT / "examples" / "support_triage.py").read_text())
    baseline = tmp_path / "baseline.json"
    code, _, err = _eval(f"{module}:agent", str(dataset), "--cassette", str(cassette), "--json", str(baseline))
    assert code == 0, err
    inputs = {"dataset": dataset, "cassette": cassette, "baseline": baseline, "agent": module}
    before = {name: path.read_bytes() for name, path in inputs.items()}
    target = inputs[victim]
    args = [f"{module}:agent", str(dataset), "--cassette", str(cassette), "--baseline", str(baseline)]
    code, out, err = _eval(*args, flag, str(tmp_path / "." / target.name))
    assert code == 2
    assert out == ""
    assert err.startswith(f"typedagent eval: error: {flag} {tmp_path / '.' / target.name} is ")
    assert "an input of this run: write the report somewhere else" in err
    assert {name: path.read_bytes() for name, path in inputs.items()} == before


def test_cli_eval_refuses_one_path_for_two_reports(tmp_path: Path) -> None:
    """Two reports to one file would keep only the last: refused before anything runs."""
    report = str(tmp_path / "report")
    code, _, err = _eval(
        TRIAGE_TARGET, str(TRIAGE_DATASET), "--cassette", str(TRIAGE_CASSETTE), "--json", report, "--html", report
    )
    assert code == 2
    assert f"--html {report} is also where --json writes: give each report its own path" in err


def test_cli_eval_says_which_reports_it_replaced(tmp_path: Path) -> None:
    """An existing report file is replaced, and stderr says so; a new one is just written."""
    (tmp_path / "old.xml").write_text("<old/>")
    code, _, err = _eval(
        TRIAGE_TARGET,
        str(TRIAGE_DATASET),
        "--cassette",
        str(TRIAGE_CASSETTE),
        "--junit",
        str(tmp_path / "old.xml"),
        "--json",
        str(tmp_path / "new.json"),
    )
    assert code == 0, err
    assert err.splitlines() == [
        f"wrote {tmp_path / 'new.json'}",
        f"wrote {tmp_path / 'old.xml'} (replaced the file that was there)",
    ]
    assert "vpn_drops_hourly" in (tmp_path / "old.xml").read_text()


def test_cli_eval_markup_in_a_case_name_and_reports_written_before_printing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A case name with rich markup is printed as it is; the reports are on disk before the table is printed."""
    dataset = tmp_path / "marked.eval.yaml"
    dataset.write_text(TRIAGE_DATASET.read_text().replace("name: vpn_drops_hourly", "name: vpn [/b] drops"))
    reports = ["--json", str(tmp_path / "r.json"), "--junit", str(tmp_path / "r.xml")]
    code, out, err = _eval(TRIAGE_TARGET, str(dataset), "--cassette", str(TRIAGE_CASSETTE), *reports)
    assert code == 0, err
    assert "vpn [/b] drops" in out

    import typedagent.evals

    def broken_console(*args: object, **kwargs: object) -> str:
        assert (tmp_path / "again.json").exists()  # written before the table is formatted
        raise RuntimeError("the console broke")

    monkeypatch.setattr(typedagent.evals, "format_report", broken_console)
    with pytest.raises(RuntimeError, match="the console broke"):
        _eval(TRIAGE_TARGET, str(dataset), "--cassette", str(TRIAGE_CASSETTE), "--json", str(tmp_path / "again.json"))
    assert json.loads((tmp_path / "again.json").read_text())["cases"][0]["name"] == "vpn [/b] drops"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ("repeat: '3'\n", "repeat must be a whole number >= 1, got '3'"),
        ("repeat: -2\n", "repeat must be a whole number >= 1, got -2"),
        ("repeat: 2.5\n", "repeat must be a whole number >= 1, got 2.5"),
        ("repeat: 0\n", "repeat must be a whole number >= 1, got 0"),
        ("repeat: true\n", "repeat must be a whole number >= 1, got True"),
        ("thresholds: {suite_min_pass_rate: abc}\n", "a pass rate is a number from 0 to 1, got 'abc'"),
    ],
)
def test_cli_eval_bad_dataset_values_are_usage_errors(tmp_path: Path, edit: str, message: str) -> None:
    """A dataset value of the wrong type is one usage error line naming it, exit 2, never a traceback."""
    dataset = tmp_path / "bad.eval.yaml"
    dataset.write_text(TRIAGE_DATASET.read_text() + edit)
    code, out, err = _eval(TRIAGE_TARGET, str(dataset), "--cassette", str(TRIAGE_CASSETTE))
    assert (code, out) == (2, "")
    assert err.startswith("typedagent eval: error: DATASET: ")
    assert message in err
    assert len(err.splitlines()) == 1


def test_cli_eval_bad_case_pass_rate_is_a_usage_error(tmp_path: Path) -> None:
    """A case's ``min_pass_rate: abc`` names the case, exit 2."""
    text = TRIAGE_DATASET.read_text().replace("  prompt:", "  min_pass_rate: abc\n  prompt:", 1)
    dataset = tmp_path / "bad.eval.yaml"
    dataset.write_text(text)
    code, _, err = _eval(TRIAGE_TARGET, str(dataset), "--cassette", str(TRIAGE_CASSETTE))
    assert code == 2
    assert "case 'vpn_drops_hourly': Case 'vpn_drops_hourly': min_pass_rate: a pass rate is a number from 0 to 1" in err


@pytest.mark.parametrize("content", ['{"version": 1}', '{"version": 1, "calls": 3}', "{not json", b"\xff\xfe"])
def test_cli_eval_unusable_cassette_is_a_usage_error(tmp_path: Path, content: str | bytes) -> None:
    """A cassette with no calls list, not JSON or not UTF-8 is exit 2 naming --cassette."""
    cassette = tmp_path / "c.json"
    if isinstance(content, bytes):
        cassette.write_bytes(content)
    else:
        cassette.write_text(content)
    code, _, err = _eval(TRIAGE_TARGET, str(TRIAGE_DATASET), "--cassette", str(cassette))
    assert code == 2
    assert err.startswith("typedagent eval: error: --cassette: ")


def test_cli_eval_report_path_that_is_a_folder(tmp_path: Path) -> None:
    """A report path that is a folder is a usage error before anything runs."""
    code, _, err = _eval(
        TRIAGE_TARGET, str(TRIAGE_DATASET), "--cassette", str(TRIAGE_CASSETTE), "--junit", str(tmp_path)
    )
    assert (code, err) == (2, f"typedagent eval: error: --junit {tmp_path} is a folder: give the report a file path\n")

"""Dataset files: YAML and JSON round trips, clear errors, and the JSON Schema for editors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from evals_support import PARIS, City

from typedagent import AgentDefinition
from typedagent.evals import (
    Budget,
    Case,
    Dataset,
    ExpectedOutput,
    LLMJudge,
    Predicate,
    Thresholds,
    ToolCalledWith,
    ToolOrder,
    dataset_json_schema,
    load_dataset,
    save_dataset,
)

SCHEMA = Path(__file__).resolve().parents[2] / "src" / "typedagent" / "evals" / "dataset.schema.json"


def full() -> Dataset[City]:
    """A dataset using file-friendly evaluators with non-default arguments."""
    return Dataset(
        name="cities",
        cases=[
            Case(
                name="paris",
                prompt="Tell me about Paris",
                expected=PARIS,
                metadata={"tag": "capital"},
                evaluators=[ToolCalledWith(tool="lookup", arguments={"city": "Paris"}), ToolOrder(tools=("lookup",))],
                min_pass_rate=0.5,
            ),
            Case(name="rome", prompt="Rome?\nAnswer in two lines.\n"),
        ],
        evaluators=[
            ExpectedOutput(tolerance=1.0, ignore=("tags",)),
            Budget(max_iterations=3),
            LLMJudge(rubric="Be right."),
        ],
        thresholds=Thresholds(case_min_pass_rate=0.8, suite_min_pass_rate=0.9),
    )


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_dataset_round_trips_through_files(agent: AgentDefinition[City, None], tmp_path: Path, suffix: str) -> None:
    """``save_dataset`` then ``load_dataset`` gives back the same dataset, expected outputs typed."""
    path = tmp_path / f"cities{suffix}"
    save_dataset(full(), path)
    loaded = load_dataset(path, agent)
    assert loaded == full()
    assert isinstance(loaded.cases[0].expected, City)


def test_dataset_file_errors_name_the_problem(agent: AgentDefinition[City, None], tmp_path: Path) -> None:
    """Unknown evaluators, arguments and keys, bad expected outputs and bad YAML are refused clearly."""
    path = tmp_path / "bad.yaml"
    cases = {
        "cases: [{name: a, prompt: x, evaluators: [{tool_caled: {tool: x}}]}]": "unknown evaluator 'tool_caled'",
        "cases: [{name: a, prompt: x, evaluators: [{tool_called: {name: x}}]}]": "'tool_called' has no argument 'name'",
        "cases: [{name: a, prompt: x, evaluators: [{budget: 3}]}]": "must be a mapping",
        "cases: [{name: a, prompt: x, evaluators: [{budget: {}, outcome: {}}]}]": "one key naming its kind",
        "cases: [{name: a, prompt: x, evaluators: [{budget: {max_tokens: many}}]}]": "budget:",
        "cases: [{name: a, prompt: x, expected: {name: 3}}]": "case 'a'",
        "cases: [{name: a, promt: x}]": "unknown key 'promt'",
        "cases: [x]": "a case is a mapping",
        "cases: {a: 1}": "'cases' must be a list",
        "name: x": "a mapping with a 'cases' list",
        "cases: []\nagents: x": "unknown key 'agents'",
        "cases: [{name: a, prompt: x}]\nthresholds: {suite: 1}": "thresholds:",
        "cases: [": "not a valid dataset file",
    }
    for text, message in cases.items():
        path.write_text(text)
        with pytest.raises(ValueError, match=message):
            load_dataset(path, agent)


def test_save_dataset_refuses_python_evaluators(tmp_path: Path) -> None:
    """A ``Predicate`` is code, not data: saving says to add it in Python."""
    dataset = Dataset(cases=[Case(name="a", prompt="x")], evaluators=[Predicate(function=bool)])
    with pytest.raises(ValueError, match="cannot be saved in a dataset file"):
        save_dataset(dataset, tmp_path / "x.json")


def test_dataset_json_schema_is_committed_and_typed(agent: AgentDefinition[City, None]) -> None:
    """The committed schema is the generated one; with an agent, ``expected`` is its output's schema."""
    assert json.loads(SCHEMA.read_text()) == dataset_json_schema()
    typed = dataset_json_schema(agent)
    expected = typed["properties"]["cases"]["items"]["properties"]["expected"]
    assert set(expected["properties"]) == {"name", "population", "tags"}
    kinds = [next(iter(entry["properties"])) for entry in typed["properties"]["evaluators"]["items"]["oneOf"]]
    assert "tool_called_with" in kinds
    assert "llm_judge" in kinds


def test_yaml_and_rich_missing_say_what_to_install(
    agent: AgentDefinition[City, None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without PyYAML or rich, YAML files and the console table fail with the extra to install."""
    monkeypatch.setitem(sys.modules, "yaml", None)
    monkeypatch.setitem(sys.modules, "rich.console", None)
    with pytest.raises(ImportError, match=r"typedagent\[evals\]"):
        load_dataset(tmp_path / "x.yaml", agent)
    with pytest.raises(ImportError, match=r"typedagent\[evals\]"):
        save_dataset(full(), tmp_path / "x.yaml")
    save_dataset(full(), tmp_path / "x.json")
    assert load_dataset(tmp_path / "x.json", agent) == full()
    from typedagent.evals import EvalReport, Thresholds, format_report

    empty = EvalReport(suite="s", agent="a", model="m", repeat=1, thresholds=Thresholds(), cases=())
    with pytest.raises(ImportError, match=r"typedagent\[evals\]"):
        format_report(empty)


def test_dataset_json_schema_accepts_the_example_suites_and_rejects_typos() -> None:
    """An editor using the committed schema accepts every bundled suite and flags an unknown evaluator."""
    import jsonschema
    import yaml

    schema = json.loads(SCHEMA.read_text())
    suites = sorted((SCHEMA.parents[3] / "examples" / "evals").glob("*.eval.yaml"))
    assert len(suites) == 4
    for path in suites:
        jsonschema.validate(yaml.safe_load(path.read_text()), schema)
    typo = {"cases": [{"name": "a", "prompt": "x", "evaluators": [{"tool_caled": {"tool": "x"}}]}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(typo, schema)


def test_save_dataset_writes_multi_line_prompts_as_blocks(tmp_path: Path) -> None:
    """A multi-line prompt is a literal block in YAML, as a person would write it."""
    save_dataset(full(), tmp_path / "x.yaml")
    assert "  prompt: |\n    Rome?\n    Answer in two lines.\n" in (tmp_path / "x.yaml").read_text()

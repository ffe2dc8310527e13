"""Datasets as YAML or JSON files: ``load_dataset``, ``save_dataset`` and the files' JSON Schema for editors."""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, NotRequired, cast

import pydantic
import pydantic_core
from typing_extensions import TypedDict, TypeVar  # pydantic needs this TypedDict on Python < 3.12

from .._agent.definition import AgentDefinition
from ._case import Case, Dataset, Thresholds
from ._evaluators import Budget, Contains, ExpectedOutput, FieldEquals, Outcome
from ._judge import LLMJudge
from ._score import Evaluator
from ._tool_checks import ToolCalled, ToolCalledWith, ToolCount, ToolNotCalled, ToolOrder

__all__ = ["EVALUATOR_KINDS", "dataset_json_schema", "load_dataset", "read_file", "save_dataset"]

OutputT = TypeVar("OutputT", default=Any)
DepsT = TypeVar("DepsT", default=None)


class _JudgeSpec(TypedDict):
    """An ``LLMJudge`` in a file: its client is chosen where the evals run."""

    rubric: str
    model: NotRequired[str]
    pass_at: NotRequired[float]
    label: NotRequired[str]


EVALUATOR_KINDS: Final[Mapping[str, Any]] = {
    "expected_output": ExpectedOutput,
    "field_equals": FieldEquals,
    "contains": Contains,
    "outcome": Outcome,
    "budget": Budget,
    "tool_called": ToolCalled,
    "tool_not_called": ToolNotCalled,
    "tool_called_with": ToolCalledWith,
    "tool_order": ToolOrder,
    "tool_count": ToolCount,
    "llm_judge": LLMJudge,
}
"""The evaluators a dataset file can name, by key."""

_FILE_KEYS: Final = frozenset({"$schema", "name", "agent", "cassette", "repeat", "thresholds", "evaluators", "cases"})
_CASE_KEYS: Final = frozenset({"name", "prompt", "deps", "expected", "metadata", "evaluators", "min_pass_rate"})


def _yaml() -> Any:
    try:
        import yaml
    except ImportError:
        raise ImportError(
            "dataset files in YAML need PyYAML: pip install 'typedagent[evals]' (or use a .json dataset file)"
        ) from None
    return yaml


def _spec_adapter(kind: str) -> pydantic.TypeAdapter[Any]:
    return pydantic.TypeAdapter(_JudgeSpec if kind == "llm_judge" else EVALUATOR_KINDS[kind])


def _spec_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of one evaluator's arguments, the same under every pydantic the declared range allows."""
    schema = _spec_adapter(kind).json_schema()
    spec = _JudgeSpec if kind == "llm_judge" else EVALUATOR_KINDS[kind]
    # pydantic before 2.13 leaves a dataclass's docstring out (an editor's hover text), and pydantic before 2.12
    # the `additionalProperties: true` of a dict field (which means the same as leaving it out).
    if dataclasses.is_dataclass(spec) and spec.__doc__:
        schema.setdefault("description", inspect.cleandoc(spec.__doc__))
    for field in cast("dict[str, dict[str, Any]]", schema.get("properties", {})).values():
        if field.get("type") == "object" and "properties" not in field:
            field.setdefault("additionalProperties", True)
    return schema


def _fields(kind: str) -> set[str]:
    if kind == "llm_judge":
        return set(_JudgeSpec.__annotations__)
    return {f.name for f in dataclasses.fields(EVALUATOR_KINDS[kind])}


def _evaluator(entry: object, where: str) -> Evaluator[Any]:
    if isinstance(entry, str):
        entry = {entry: {}}
    if not isinstance(entry, dict) or len(cast("dict[str, Any]", entry)) != 1:
        raise ValueError(f"{where}: an evaluator is one key naming its kind, e.g. `- tool_called: {{tool: search}}`.")
    ((kind, arguments),) = cast("dict[str, Any]", entry).items()
    if kind not in EVALUATOR_KINDS:
        raise ValueError(f"{where}: unknown evaluator {kind!r}; known: {', '.join(sorted(EVALUATOR_KINDS))}.")
    arguments = cast("object", {} if arguments is None else arguments)
    if not isinstance(arguments, dict):
        raise ValueError(f"{where}: the arguments of {kind!r} must be a mapping, got {arguments!r}.")
    unknown = set(cast("dict[str, Any]", arguments)) - _fields(kind)
    if unknown:
        raise ValueError(f"{where}: {kind!r} has no argument {sorted(unknown)[0]!r}; it takes {sorted(_fields(kind))}.")
    try:
        value = _spec_adapter(kind).validate_python(arguments)
    except (pydantic.ValidationError, ValueError) as exc:
        raise ValueError(f"{where}: {kind}: {exc}") from None
    return LLMJudge(**value) if kind == "llm_judge" else value


def read_file(path: str | Path) -> dict[str, Any]:
    """A dataset file's data (YAML for ``.yaml``/``.yml``, JSON otherwise), checked to be a mapping.

    Raises:
        ValueError: the file does not parse or is not a mapping with ``cases``.
        OSError: it cannot be read.
    """
    source = Path(path)
    yaml = _yaml() if source.suffix in (".yaml", ".yml") else None
    try:
        text = source.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}).") from None
    try:
        data = yaml.safe_load(text) if yaml is not None else json.loads(text)
    except Exception as exc:  # YAMLError or JSONDecodeError, with the line
        raise ValueError(f"{path}: not a valid dataset file: {exc}") from None
    if not isinstance(data, dict) or "cases" not in data:
        raise ValueError(f"{path}: a dataset file is a mapping with a 'cases' list.")
    mapping = cast("dict[str, Any]", data)
    unknown = set(mapping) - _FILE_KEYS
    if unknown:
        raise ValueError(f"{path}: unknown key {sorted(unknown)[0]!r}; a dataset file has {sorted(_FILE_KEYS)}.")
    repeat = mapping.get("repeat", 1)
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"{path}: repeat must be a whole number >= 1, got {repeat!r}.")
    return mapping


def load_dataset(path: str | Path, agent: AgentDefinition[OutputT, DepsT]) -> Dataset[OutputT, DepsT]:
    """Read a dataset saved as YAML or JSON, validating expected outputs and deps with the agent's types.

    Raises:
        ValueError: the file is malformed; the message names the case and the field.
        OSError: the file cannot be read.
    """
    data = read_file(path)
    output: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(agent.output.schema)
    deps: pydantic.TypeAdapter[Any] | None = None if agent.deps_type is None else pydantic.TypeAdapter(agent.deps_type)
    cases: list[Case[OutputT, DepsT]] = []
    raw_cases: object = data["cases"]
    if not isinstance(raw_cases, list):
        raise ValueError(f"{path}: 'cases' must be a list.")
    for index, raw in enumerate(cast("list[object]", raw_cases)):
        where = f"{path}: cases[{index}]"
        if not isinstance(raw, dict):
            raise ValueError(f"{where}: a case is a mapping with 'name' and 'prompt'.")
        entry = cast("dict[str, Any]", raw)
        unknown = set(entry) - _CASE_KEYS
        if unknown:
            raise ValueError(f"{where}: unknown key {sorted(unknown)[0]!r}; a case has {sorted(_CASE_KEYS)}.")
        where = f"{path}: case {entry.get('name', index)!r}"
        evaluators = [
            _evaluator(item, f"{where}: evaluators[{n}]") for n, item in enumerate(entry.get("evaluators") or [])
        ]
        try:
            cases.append(
                Case(
                    name=entry.get("name", ""),
                    prompt=entry.get("prompt", ""),
                    deps=cast(
                        "DepsT",
                        None if deps is None or entry.get("deps") is None else deps.validate_python(entry["deps"]),
                    ),
                    expected=None if entry.get("expected") is None else output.validate_python(entry["expected"]),
                    metadata=entry.get("metadata") or {},
                    evaluators=evaluators,
                    min_pass_rate=entry.get("min_pass_rate"),
                )
            )
        except (ValueError, TypeError) as exc:  # a ValidationError, or a value Case refuses
            raise ValueError(f"{where}: {exc}") from None
    try:
        return Dataset(
            name=data.get("name") or Path(path).name.split(".")[0],
            cases=cases,
            evaluators=[
                _evaluator(item, f"{path}: evaluators[{n}]") for n, item in enumerate(data.get("evaluators") or [])
            ],
            thresholds=Thresholds(**cast("dict[str, float]", data.get("thresholds") or {})),
        )
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: thresholds: {exc}") from None


def _evaluator_entry(evaluator: object) -> dict[str, Any]:
    for kind, cls in EVALUATOR_KINDS.items():
        if type(evaluator) is cls and dataclasses.is_dataclass(evaluator):
            fields = _fields(kind)
            values = {f.name: getattr(evaluator, f.name) for f in dataclasses.fields(evaluator) if f.name in fields}
            defaults = {
                f.name: f.default for f in dataclasses.fields(evaluator) if f.default is not dataclasses.MISSING
            }
            changed = {
                name: value for name, value in values.items() if defaults.get(name, dataclasses.MISSING) != value
            }
            return {kind: pydantic_core.to_jsonable_python(changed)}
    raise ValueError(
        f"{type(evaluator).__name__} is Python code and cannot be saved in a dataset file; "
        "add it to the Dataset in Python after load_dataset()."
    )


def save_dataset(dataset: Dataset[Any, Any], path: str | Path) -> None:
    """Write the dataset as YAML (``.yaml``/``.yml``) or JSON; ``load_dataset`` reads it back.

    Raises:
        ValueError: an evaluator is Python code (a ``Predicate``, your own class): files hold data only.
    """
    data: dict[str, Any] = {
        "name": dataset.name,
        "thresholds": dataclasses.asdict(dataset.thresholds),
        "evaluators": [_evaluator_entry(evaluator) for evaluator in dataset.evaluators],
        "cases": [
            {
                key: value
                for key, value in {
                    "name": case.name,
                    "prompt": case.prompt,
                    "deps": pydantic_core.to_jsonable_python(case.deps),
                    "expected": pydantic_core.to_jsonable_python(case.expected),
                    "metadata": dict(case.metadata) or None,
                    "evaluators": [_evaluator_entry(evaluator) for evaluator in case.evaluators] or None,
                    "min_pass_rate": case.min_pass_rate,
                }.items()
                if value is not None
            }
            for case in dataset.cases
        ],
    }
    target = Path(path)
    if target.suffix in (".yaml", ".yml"):
        _yaml()  # a missing PyYAML says which extra to install
        import yaml

        class Dumper(yaml.SafeDumper):
            """Multi-line strings (prompts, documents) as literal blocks, readable and diffable."""

        def text_block(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
            style = "|" if "\n" in value else None
            return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)  # pyright: ignore[reportUnknownMemberType]

        Dumper.add_representer(str, text_block)
        text = yaml.dump(data, Dumper=Dumper, sort_keys=False, allow_unicode=True)
    else:
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    target.write_text(text)


def dataset_json_schema(agent: AgentDefinition[Any, Any] | None = None) -> dict[str, Any]:
    """The JSON Schema of dataset files, for editors (``# yaml-language-server: $schema=...``).

    With ``agent``, ``expected`` and ``deps`` are described by the agent's output and deps types.
    """
    any_value: dict[str, Any] = {}
    expected = any_value if agent is None else pydantic.TypeAdapter(agent.output.schema).json_schema()
    deps = (
        any_value if agent is None or agent.deps_type is None else pydantic.TypeAdapter(agent.deps_type).json_schema()
    )
    evaluator = {
        "oneOf": [
            {
                "type": "object",
                "properties": {kind: _spec_schema(kind)},
                "required": [kind],
                "additionalProperties": False,
            }
            for kind in EVALUATOR_KINDS
        ]
    }
    rate = {"type": "number", "minimum": 0, "maximum": 1}
    case = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "prompt": {"type": "string", "minLength": 1},
            "deps": deps,
            "expected": expected,
            "metadata": {"type": "object"},
            "evaluators": {"type": "array", "items": evaluator},
            "min_pass_rate": rate,
        },
        "required": ["name", "prompt"],
        "additionalProperties": False,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "typedagent eval dataset",
        "type": "object",
        "properties": {
            "$schema": {"type": "string"},
            "name": {"type": "string"},
            "agent": {"type": "string", "description": "MODULE:ATTR of the agent, for pytest collection."},
            "cassette": {"type": "string", "description": "A cassette replayed by pytest, relative to this file."},
            "repeat": {"type": "integer", "minimum": 1},
            "thresholds": {
                "type": "object",
                "properties": {"case_min_pass_rate": rate, "suite_min_pass_rate": rate},
                "additionalProperties": False,
            },
            "evaluators": {"type": "array", "items": evaluator},
            "cases": {"type": "array", "items": case, "minItems": 1},
        },
        "required": ["cases"],
        "additionalProperties": False,
    }

"""Defining agents (SPEC §3): the definition's shape and every definition-time error."""

from __future__ import annotations

import dataclasses
import math
import operator
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter
from support import GOOD, Triage, reflecting, results_of, run, triage_agent

from typedagent import (
    AgentDefinitionError,
    HelperTool,
    OutputTool,
    RunContext,
    ValidationConfig,
    define_agent,
    server_tools,
    tool,
)
from typedagent.testing import ScriptedClient, output_call, tool_call


@tool
def search_kb(query: str, limit: int = 3) -> list[str]:
    """Search the knowledge base; returns article ids.

    Args:
        query: Words to look for.
        limit: How many ids to return at most.
    """
    return []


def test_definition_exposes_its_parts() -> None:
    """AgentDefinition exposes name, model, output, helpers, validators, validation and defaults."""

    def check(out: Triage) -> None:
        return None

    agent = triage_agent(helpers=[search_kb], validators=[check])
    assert agent.name == "triage"
    assert agent.model == "claude-sonnet-4-6"
    assert agent.output.schema is Triage
    assert agent.helpers == (search_kb,)
    assert agent.validators == (check,)
    assert agent.validation == ValidationConfig(max_attempts=3, max_iterations_per_attempt=15)
    assert agent.max_tokens == 4096
    assert agent.prompt_caching is True
    assert agent.max_tool_result_chars == 100_000
    assert agent.deps_type is None
    assert agent.reflection_enabled is False


def test_definition_is_immutable() -> None:
    """AgentDefinition (and its settings) cannot be changed after definition."""
    agent = triage_agent(model_settings={"metadata": {"user_id": "u"}})
    with pytest.raises(dataclasses.FrozenInstanceError):
        agent.model = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        agent.model_settings["metadata"] = {}  # type: ignore[index]


def test_definition_tool_params_exact() -> None:
    """tool_params() is exactly what the API receives: helpers, output, then submit when reflecting."""
    agent = triage_agent(helpers=[search_kb], output=reflecting(name="emit_triage", description="Report it."))
    assert agent.reflection_enabled
    assert agent.tool_params() == [
        {
            "name": "search_kb",
            "description": "Search the knowledge base; returns article ids.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Words to look for."},
                    "limit": {
                        "type": "integer",
                        "default": 3,
                        "description": "How many ids to return at most.",
                    },
                },
                "required": ["query"],
            },
        },
        {
            "name": "emit_triage",
            "description": "Report it.",
            "input_schema": {
                "description": "The output type most tests use.",
                "type": "object",
                "properties": {
                    "severity": {"type": "integer", "minimum": 1, "maximum": 5},
                    "summary": {"type": "string"},
                },
                "required": ["severity", "summary"],
            },
        },
        {
            "name": "submit",
            "description": (
                "Submit your final output for validation. Call this when you are satisfied with your output."
            ),
            "input_schema": {"type": "object", "properties": {}},
        },
    ]


def test_definition_strict_output_tool() -> None:
    """strict=True sends the tool with strict: true and a strict-compatible schema."""
    param = OutputTool(Triage, strict=True).to_param()
    assert param["strict"] is True  # type: ignore[typeddict-item]
    assert param["input_schema"]["additionalProperties"] is False  # type: ignore[index]


def test_definition_no_submit_without_reflection() -> None:
    """Without a reflection handler there is no submit tool, and a helper may be called submit."""
    submit = HelperTool(definition={"name": "submit", "input_schema": {"type": "object"}}, handler=lambda d: "ok")
    agent = triage_agent(helpers=[submit])
    assert [p["name"] for p in agent.tool_params()] == ["submit", "final_output"]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: triage_agent(helpers=[search_kb, search_kb]), "Two helpers are named 'search_kb'"),
        (lambda: triage_agent(helpers=[tool(lambda: 1, name="final_output")]), "has the output tool's name"),
        (
            lambda: triage_agent(output=reflecting(), helpers=[tool(lambda: 1, name="submit")]),
            "clashes with the submit tool",
        ),
        (lambda: tool(lambda: 1, name="bad name!"), "'bad name!' is not a valid tool name"),
        (lambda: tool(lambda: 1, name="x" * 65), "is not a valid tool name"),
        (lambda: OutputTool(Triage, name="has space"), "'has space' is not a valid tool name"),
        (lambda: OutputTool(Opaque), "Opaque cannot produce a JSON schema"),
        (lambda: OutputTool(Triage, reflection_handler=42), "reflection_handler must be callable"),  # type: ignore[arg-type]
        (lambda: OutputTool("Triage"), "needs the output type itself"),
        (lambda: OutputTool(TypeAdapter(int)), "needs the output type itself"),  # type: ignore[arg-type]
        (lambda: ValidationConfig(max_attempts=0), "max_attempts must be an int >= 1"),
        (lambda: ValidationConfig(max_iterations_per_attempt=0), "max_iterations_per_attempt must be an int >= 1"),
        (lambda: ValidationConfig(max_attempts="3"), "max_attempts must be an int >= 1"),  # type: ignore[arg-type]
        (lambda: triage_agent(max_tokens=0), r"max_tokens=\.\.\.\) must be an int >= 1"),
        (lambda: triage_agent(name=""), r"name=\.\.\.\) must be a non-empty string"),
        (lambda: triage_agent(model=None), r"model=\.\.\.\) must be a model id string"),
        (lambda: triage_agent(output=Triage), "wrap your model class as `OutputTool"),
        (lambda: triage_agent(helpers=[print]), "decorate the function with @tool"),
        (lambda: triage_agent(validators=["nope"]), "validators must be callables"),
        (lambda: triage_agent(instructions=42), "must be a string or a callable"),
        (lambda: triage_agent(model_settings={"tools": []}), "model_settings cannot set 'tools'"),
        (
            lambda: HelperTool(definition={"name": "x", "input_schema": {"type": "array"}}, handler=print),
            'needs an \'input_schema\' with "type": "object"',
        ),
        (lambda: HelperTool(definition="x", handler=print), "must be a tool definition dict"),  # type: ignore[arg-type]
        (lambda: HelperTool(definition={"name": "x", "input_schema": {"type": "object"}}, handler=1), "callable"),  # type: ignore[arg-type]
        (lambda: tool(lambda *a: 1, name="star"), r"\*args and \*\*kwargs cannot be described"),
        (lambda: tool(lambda a, /: 1, name="pos"), "is positional-only"),
        (lambda: tool(lambda: 1, name="t", timeout_s=0), "timeout_s must be a finite positive number"),
        (lambda: tool(42), "@tool needs a function"),  # type: ignore[call-overload]
    ],
)
def test_definition_errors_say_how_to_fix(make: Any, message: str) -> None:
    """Invalid definitions raise AgentDefinitionError (a ValueError) at definition time."""
    with pytest.raises(AgentDefinitionError, match=message) as caught:
        make()
    assert isinstance(caught.value, ValueError)


class Opaque:
    """A type pydantic cannot describe."""


def test_definition_run_context_must_be_first() -> None:
    """A RunContext parameter anywhere but first is a definition error."""

    def misplaced(query: str, ctx: RunContext[None]) -> str:
        return query

    with pytest.raises(AgentDefinitionError, match="RunContext must be the first parameter"):
        tool(misplaced)


def test_definition_unschemable_parameter() -> None:
    """A parameter type pydantic cannot describe is a definition error naming the tool."""

    def odd(thing: Opaque) -> str:
        return ""

    with pytest.raises(AgentDefinitionError, match="Tool 'odd': its parameters cannot be turned into a JSON schema"):
        tool(odd)


def test_definition_unresolvable_hints() -> None:
    """Type hints that cannot be resolved are reported with the tool's name."""

    def broken(x: NotDefinedAnywhere) -> str:  # type: ignore[name-defined]  # noqa: F821
        return ""

    with pytest.raises(AgentDefinitionError, match="Tool 'broken': cannot resolve the type hints"):
        tool(broken)


def test_definition_deps_type_recorded() -> None:
    """deps_type is recorded on the definition."""

    class Db(BaseModel):
        url: str

    assert triage_agent(deps_type=Db).deps_type is Db


def test_definition_agent_repr_is_readable() -> None:
    """The definition's repr shows the name and model, not private caches."""
    text = repr(triage_agent())
    assert "name='triage'" in text
    assert "_tool_params" not in text
    assert define_agent(name="n", model="m", output=OutputTool(Triage)).output.name == "final_output"


def test_definition_cannot_be_changed_through_dicts() -> None:
    """Editing tool_params() or the dict given to HelperTool later does not change the agent."""
    definition: dict[str, Any] = {"name": "h", "input_schema": {"type": "object"}}
    agent = triage_agent(helpers=[HelperTool(definition=definition, handler=print)])  # type: ignore[arg-type]
    before = agent.tool_params()
    definition["name"] = "renamed"
    agent.tool_params()[0]["name"] = "hacked"
    agent.output.to_param()["name"] = "hacked"
    assert agent.tool_params() == before
    assert [p["name"] for p in agent.tool_params()] == ["h", "final_output"]
    assert agent.helper("h") is not None


async def test_definition_tool_cannot_be_reassigned_after_define() -> None:
    """A Tool is immutable: assigning fn (or any attribute) raises, and the agent keeps running the original."""
    calls: list[str] = []

    @tool
    def lookup(query: str) -> str:
        """Look up."""
        calls.append(query)
        return "original"

    agent = triage_agent(helpers=[lookup])
    with pytest.raises(AttributeError, match="immutable"):
        lookup.fn = lambda query: "replaced"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        lookup.name = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        del lookup.fn  # type: ignore[misc]
    client = ScriptedClient([tool_call("lookup", {"query": "vpn"}), output_call(GOOD)])
    result = await run(agent, client)
    assert result.ok
    assert calls == ["vpn"]
    assert results_of(result.metadata.messages[2]) == [("toolu_01_001", "original", False)]


def test_definition_tool_input_schema_is_a_copy() -> None:
    """Editing a Tool's input_schema does not change the schema it sends."""
    search_kb.input_schema["properties"]["query"]["type"] = "integer"
    assert search_kb.input_schema["properties"]["query"]["type"] == "string"
    assert search_kb.to_param()["input_schema"]["properties"]["query"]["type"] == "string"  # type: ignore[index]


async def test_definition_model_settings_deeply_copied_and_read_only() -> None:
    """Editing the caller's nested settings later changes nothing; the agent's settings are read-only all the way."""
    thinking: dict[str, Any] = {"type": "enabled", "budget_tokens": 2048}
    stop = ["END"]
    agent = triage_agent(model_settings={"thinking": thinking, "stop_sequences": stop})
    thinking["budget_tokens"] = 99_999
    stop.append("HACKED")
    assert agent.model_settings["thinking"]["budget_tokens"] == 2048
    assert agent.model_settings["stop_sequences"] == ("END",)
    with pytest.raises(TypeError):
        agent.model_settings["thinking"]["budget_tokens"] = 1
    client = ScriptedClient([output_call(GOOD)])
    await run(agent, client)
    request = client.requests[0]
    assert request["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert request["stop_sequences"] == ["END"]
    assert type(request["thinking"]) is dict
    request["thinking"]["budget_tokens"] = 5  # a client editing its request cannot reach the agent
    request["tools"][0]["input_schema"]["properties"] = {}
    assert agent.model_settings["thinking"]["budget_tokens"] == 2048
    assert agent.tool_params()[0]["input_schema"]["properties"] != {}  # type: ignore[index]


def test_definition_output_named_submit_with_reflection() -> None:
    """An output tool named 'submit' cannot turn on reflection mode, whose own tool is called 'submit'."""
    with pytest.raises(AgentDefinitionError, match="'submit' is the tool reflection mode adds"):
        reflecting(name="submit")
    assert OutputTool(Triage, name="submit").name == "submit"  # without reflection the name is free


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"validation": {"max_attempts": 3}}, r"validation=\.\.\.\) must be a ValidationConfig.*ValidationConfig\("),
        ({"helpers": search_kb}, r"helpers=\.\.\.\) must be a list.*helpers=\[search_kb\]"),
        ({"validators": print}, r"validators=\.\.\.\) must be a list.*validators=\[print\]"),
        ({"model_settings": [("temperature", 0)]}, r"model_settings=\.\.\.\) must be a dict"),
    ],
)
def test_definition_wrong_container_says_what_to_pass(overrides: dict[str, Any], message: str) -> None:
    """A dict for validation=, or one tool or validator instead of a list, is a clear definition error."""
    with pytest.raises(AgentDefinitionError, match=message):
        triage_agent(**overrides)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"temprature": 0.5}, r"'temprature' is not a parameter of messages\.create"),
        ({"stop_sequence": ["x"]}, r"did you mean 'stop_sequences'\?"),
        ({"metdata": {}}, r"did you mean 'metadata'\?"),
        (
            {"thinking": {"type": "enabled", "budget_tokens": 4096}},
            r"\['budget_tokens'\] \(4096\) must be below max_tokens",
        ),
        (
            {"thinking": {"type": "enabled", "budget_tokens": 9000}},
            r"\['budget_tokens'\] \(9000\) must be below max_tokens",
        ),
    ],
)
def test_definition_model_settings_checked_against_the_sdk(settings: dict[str, Any], message: str) -> None:
    """Unknown model_settings keys (with a suggestion) and a thinking budget at or above max_tokens fail at once."""
    with pytest.raises(AgentDefinitionError, match=message):
        triage_agent(model_settings=settings)


def test_definition_model_settings_accepts_every_sdk_and_transport_key() -> None:
    """Every messages.create parameter typedagent does not build, the transport options and beta keys pass."""
    settings = {
        "metadata": {"user_id": "u"},
        "stop_sequences": ["END"],
        "service_tier": "auto",
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "extra_body": {"anything": 1},
        "extra_headers": {"x-trace": "1"},
        "extra_query": {"q": "1"},
        "timeout": 30.0,
        "betas": ["some-beta"],
        "mcp_servers": [],
        "context_management": {},
        "container": None,
    }
    assert dict(triage_agent(model_settings=settings).model_settings).keys() == settings.keys()


def test_definition_reflection_handler_signature_checked() -> None:
    """A reflection handler must take exactly the candidate: zero or two required parameters fail at once."""

    def nothing() -> str:
        return ""

    def two(out: Triage, extra: str) -> str:
        return ""

    def keyword_only(out: Triage, *, extra: str) -> str:
        return ""

    for handler in (nothing, two, keyword_only):
        with pytest.raises(AgentDefinitionError, match="reflection_handler must take one argument"):
            OutputTool(Triage, reflection_handler=handler)  # type: ignore[arg-type]

    def optional_extra(out: Triage, style: str = "short") -> str:
        return style

    assert OutputTool(Triage, reflection_handler=optional_extra).reflection_enabled
    assert OutputTool(Triage, reflection_handler=lambda *args: "").reflection_enabled
    no_signature = operator.attrgetter("summary")  # inspect.signature() cannot read it: accepted unchecked
    assert OutputTool(Triage, reflection_handler=no_signature).reflection_enabled


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_definition_numbers_must_be_finite(bad: float) -> None:
    """NaN and infinities are rejected wherever a number is configured, with what to pass instead."""
    schema = {"name": "x", "input_schema": {"type": "object"}}
    makers: list[Any] = [
        lambda: tool(lambda: 1, name="t", timeout_s=bad),
        lambda: HelperTool(definition=schema, handler=print, timeout_s=bad),  # type: ignore[arg-type]
        lambda: triage_agent(max_tokens=bad),
        lambda: triage_agent(max_tool_result_chars=bad),
        lambda: ValidationConfig(max_attempts=bad),  # type: ignore[arg-type]
        lambda: triage_agent(model_settings={"timeout": bad}),
    ]
    for make in makers:
        with pytest.raises(AgentDefinitionError, match=r"finite|int >= 1"):
            make()


def test_definition_validator_signature_checked() -> None:
    """A validator must take (output) or (output, ctx): one that cannot be called either way fails at once."""

    def nothing() -> None:
        return None

    def three(out: Triage, ctx: RunContext[None], extra: str) -> None:
        return None

    for validator in (nothing, three):
        with pytest.raises(AgentDefinitionError, match=r"validators take \(output\) or \(output, ctx\)"):
            triage_agent(validators=[validator])

    def optional_ctx(out: Triage, ctx: object = None) -> None:
        return None

    assert triage_agent(validators=[optional_ctx, lambda *args: None]).validators[0] is optional_ctx


async def test_definition_with_options_returns_a_checked_copy() -> None:
    """with_options replaces what it is given, keeps the rest, and leaves the original agent as it was."""

    def cites(out: Triage) -> None:
        del out

    agent = triage_agent(
        helpers=[search_kb],
        validators=[cites],
        instructions="You triage tickets.",
        model_settings={"stop_sequences": ["END"], "metadata": {"user_id": "u1"}},
    )
    faster = agent.with_options(
        name="triage-fast",
        model="claude-haiku-4-5",
        max_tokens=1024,
        instructions="Be brief.",
        model_settings={**agent.model_settings, "stop_sequences": ["STOP"]},
        validation=ValidationConfig(max_attempts=1),
    )
    assert (faster.name, faster.model, faster.max_tokens, faster.instructions) == (
        "triage-fast",
        "claude-haiku-4-5",
        1024,
        "Be brief.",
    )
    assert faster.model_settings == {"stop_sequences": ("STOP",), "metadata": {"user_id": "u1"}}
    assert faster.validation == ValidationConfig(max_attempts=1)
    assert (faster.output, faster.helpers, faster.validators) == (agent.output, agent.helpers, agent.validators)
    assert faster.tool_params() == agent.tool_params()
    assert (agent.name, agent.model, agent.max_tokens) == ("triage", "claude-sonnet-4-6", 4096)
    assert agent.with_options() == agent
    client = ScriptedClient([output_call(GOOD)])
    result = await run(faster, client)
    assert result.ok is True
    assert (client.requests[0]["model"], client.requests[0]["max_tokens"]) == ("claude-haiku-4-5", 1024)
    assert client.requests[0]["system"].startswith("Be brief.")


def test_definition_with_options_keeps_the_server_tools() -> None:
    """Server tools (web search, code execution) stay on the copy, as every other setting not given does."""
    agent = triage_agent(helpers=[search_kb], server_tools=[server_tools.web_search(max_uses=2)])
    faster = agent.with_options(model="claude-haiku-4-5")
    assert faster.server_tools == agent.server_tools
    assert faster.tool_params() == agent.tool_params()
    assert any(definition["name"] == "web_search" for definition in faster.tool_params())
    assert agent.with_options() == agent


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_tokens": 512}, r"budget_tokens'\] \(1024\) must be below max_tokens \(512\)"),
        ({"model_settings": {"stop_sequence": ["END"]}}, "did you mean 'stop_sequences'"),
        ({"model": ""}, r"model=\.\.\.\) must be a model id string"),
        ({"validation": {"max_attempts": 2}}, "must be a ValidationConfig"),
    ],
)
def test_definition_with_options_runs_the_same_checks(options: dict[str, Any], message: str) -> None:
    """A combination define_agent would refuse is refused by with_options too."""
    agent = triage_agent(model_settings={"thinking": {"type": "enabled", "budget_tokens": 1024}})
    with pytest.raises(AgentDefinitionError, match=message):
        agent.with_options(**options)


@pytest.mark.parametrize(
    ("model", "fix"),
    [
        ("anthropic:claude-sonnet-4-6", "claude-sonnet-4-6"),
        ("bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic.claude-sonnet-4-5-20250929-v1:0"),
        ("google-vertex:claude-sonnet-4-5@20250929", "claude-sonnet-4-5@20250929"),
    ],
)
def test_definition_refuses_a_provider_prefix(model: str, fix: str) -> None:
    """A pydantic-ai style ``provider:`` prefix is refused with the model id to write instead."""
    with pytest.raises(AgentDefinitionError) as raised:
        triage_agent(model=model)
    prefix = model.split(":")[0]
    assert str(raised.value) == (
        f"define_agent(model={model!r}): {prefix + ':'!r} names a provider, as pydantic-ai model strings do; "
        f"typedagent sends the model id as it is to the client you pass (AsyncAnthropic, AsyncAnthropicBedrock, "
        f"AsyncAnthropicVertex): write model={fix!r}."
    )


def test_definition_warns_about_a_misspelt_model() -> None:
    """A Claude-like id the installed SDK does not know is a warning (with a suggestion), pointing at the caller."""
    with pytest.warns(UserWarning, match="is not a model the installed anthropic SDK knows") as record:
        agent = triage_agent(model="claude-snonet-4-6")
    assert agent.model == "claude-snonet-4-6"  # a warning only: a model newer than the SDK must stay usable
    [warning] = record
    with pytest.warns(UserWarning, match="did you mean 'claude-haiku-4-5'") as direct:
        define_agent(name="typo", model="claude-haiku-4-6", output=OutputTool(Triage))
    assert direct[0].filename == __file__  # the line that wrote the id
    assert str(warning.message).startswith(
        "model 'claude-snonet-4-6' is not a model the installed anthropic SDK knows: did you mean "
        "'claude-sonnet-4-6'? A model newer than the SDK still works"
    )


@pytest.mark.parametrize(
    "model",
    [
        "claude-haiku-4-5",
        "claude-sonnet-4-5-20250929",
        "claude-sonnet-4-6-20260217",
        "anthropic.claude-sonnet-4-5-20250929-v1:0",
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "claude-sonnet-4-5@20250929",
        "my-finetune",
        "acme-gateway/sonnet",
    ],
)
def test_definition_accepts_sdk_dated_and_platform_model_ids_silently(
    model: str, recwarn: pytest.WarningsRecorder
) -> None:
    """Every id the SDK names, dated ids, Bedrock and Vertex ids, and a gateway's own names pass without a warning."""
    assert triage_agent(model=model).model == model
    assert list(recwarn) == []


def test_definition_knows_every_model_of_the_sdk(recwarn: pytest.WarningsRecorder) -> None:
    """Each name of the SDK's ``Model`` literal is known: none warns."""
    from typing import get_args

    from anthropic.types import Model

    literal = next(arg for arg in get_args(Model) if arg is not str)
    for model in get_args(literal):
        triage_agent(model=model)
    assert list(recwarn) == []


def test_definition_does_not_import_the_sdk_for_the_model_check() -> None:
    """The model check reads the SDK's model names without importing ``anthropic`` (seconds on a small machine)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from pydantic import BaseModel\n"
        "from typedagent import OutputTool, define_agent\n"
        "class Out(BaseModel):\n"
        "    answer: str\n"
        "define_agent(name='a', model='claude-sonnet-4-6', output=OutputTool(Out))\n"
        "print('anthropic' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False\n"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"thinking": "on"},
            "model_settings['thinking'] is not what messages.create takes in anthropic {version}: it expects "
            "{{'budget_tokens': int, 'type': 'enabled', ",
        ),
        (
            {"stop_sequences": "END"},
            "model_settings['stop_sequences'] is not what messages.create takes in anthropic {version}: it expects "
            "a list of str, got 'END' ('str' instances are not allowed as a Sequence value).",
        ),
        (
            {"service_tier": "fast"},
            "model_settings['service_tier'] is not what messages.create takes in anthropic {version}: it expects "
            "'auto' | 'standard_only', got 'fast'",
        ),
        (
            {"metadata": {"user_id": 3}},
            "model_settings['metadata'] is not what messages.create takes in anthropic {version}: it expects "
            "{{'user_id'?: str | None}}, got {{'user_id': 3}} (user_id: Input should be a valid string).",
        ),
        (
            {"thinking": {"type": "enabled", "budget_tokens": "2048"}},
            # the union member's name before the field differs between SDK releases ("typed-dict" in 2.10)
            "budget_tokens: Input should be a valid integer",
        ),
        (
            {"mcp_servers": "https://mcp.example.com"},
            "model_settings['mcp_servers'] is not what messages.create takes in anthropic {version}: it expects "
            "a list of BetaRequestMCPServerURLDefinitionParam, got 'https://mcp.example.com'",
        ),
        (
            {"extra_headers": ["x-trace"]},
            "model_settings['extra_headers'] must be a dict (the SDK's request option), got list.",
        ),
    ],
)
def test_definition_model_settings_values_checked_against_the_sdk_types(settings: dict[str, Any], message: str) -> None:
    """A value of the wrong type fails at definition, naming the key, what the SDK expects and what was given."""
    from importlib.metadata import version

    with pytest.raises(AgentDefinitionError) as raised:
        triage_agent(model_settings=settings)
    assert message.format(version=version("anthropic")) in str(raised.value)
    with pytest.raises(AgentDefinitionError):
        triage_agent().with_options(model_settings=settings)


def test_model_settings_type_covers_the_sdk_parameters() -> None:
    """``ModelSettings`` has exactly the keys define_agent accepts from the installed SDK: a new SDK key fails here."""
    from typedagent import ModelSettings
    from typedagent._agent.settings import settings_keys

    assert set(ModelSettings.__annotations__) == set(settings_keys())
    assert ModelSettings.__total__ is False

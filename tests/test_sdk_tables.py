"""typedagent's tables of the SDK's closed sets, compared with the installed SDK: a new release fails here, by name.

Each table here is one that no other test compares (the stop reasons, usage iterations, context-management
edits, tool-result blocks, model prices and status-error classes have theirs beside their modules). A failure
names the item the SDK gained or lost and the table to change, so a new ``anthropic`` release shows up as one
precise failure rather than as odd behaviour. ``make test-deps`` runs these against the oldest and the newest
SDK the declared range allows.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from anthropic.resources.beta.messages.messages import AsyncMessages as AsyncBetaMessages
from anthropic.resources.beta.messages.messages import Messages as BetaMessages
from anthropic.resources.messages.messages import AsyncMessages, Messages
from anthropic.types import ContentBlock, ServerToolUsage, ToolUnionParam, Usage
from anthropic.types.beta import BetaContentBlock, BetaServerToolUsage, BetaToolUnionParam, BetaUsage
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from anthropic.types.shared import ErrorType

from typedagent._agent import settings as _settings
from typedagent._agent import tool_definitions as _tool_definitions
from typedagent._api import api_errors as _api_errors
from typedagent._api import batch_results as _batch_results
from typedagent._api import beta as _beta
from typedagent._api import response as _response
from typedagent._observability import span_attributes as _span_attributes
from typedagent._run import server_calls as _server_calls
from typedagent._shared import usage as _usage
from typedagent.testing import _render as _items

ROOT = Path(__file__).resolve().parent.parent


def where(module: ModuleType) -> str:
    """The file of one of typedagent's modules, as the failure messages name it."""
    return str(Path(str(module.__file__)).relative_to(ROOT))


def differences(
    ours: Iterable[str], sdk: Iterable[str], *, gained: Callable[[str], str], lost: Callable[[str], str]
) -> list[str]:
    """One sentence per item the SDK has and the table lacks (``gained``), and per item the other way (``lost``)."""
    ours, sdk = set(ours), set(sdk)
    return [gained(item) for item in sorted(sdk - ours)] + [lost(item) for item in sorted(ours - sdk)]


def parameters(create: Any) -> set[str]:
    """The keyword parameters of a ``messages.create``."""
    return {name for name in inspect.signature(create).parameters if name != "self"}


def literal_types(members: Iterable[Any]) -> dict[str, Any]:
    """The ``type`` of each member of a union of SDK models or TypedDicts (the member, by its type string)."""
    found: dict[str, Any] = {}
    for member in members:
        fields = getattr(member, "model_fields", None)
        annotation = fields["type"].annotation if fields is not None else typing.get_type_hints(member).get("type")
        for value in typing.get_args(annotation):
            if isinstance(value, str):
                found[value] = member
    return found


def content_blocks(union: Any) -> dict[str, Any]:
    """The content blocks of a response, by ``type``: the members of the SDK's (annotated) ``ContentBlock`` union."""
    if typing.get_origin(union) is typing.Annotated:
        union = typing.get_args(union)[0]
    return literal_types(typing.get_args(union))


CREATE = parameters(AsyncMessages.create)
BETA_CREATE = parameters(AsyncBetaMessages.create)
BLOCKS = {**content_blocks(ContentBlock), **content_blocks(BetaContentBlock)}
SETTINGS, BETA, SPANS = where(_settings), where(_beta), where(_span_attributes)

# The parameters of messages.create this version of typedagent was written against, and how it treats each:
# built by typedagent (RESERVED_SETTINGS), passed through from model_settings, or a request option. A new one is
# passed through from model_settings as it is (settings_keys reads the SDK), which is right unless typedagent has
# to build it or trace it.
REVIEWED_CREATE = {
    *_settings.RESERVED_SETTINGS,
    *_settings.TRANSPORT_SETTINGS,
    "container",
    "diagnostics",
    "inference_geo",
    "metadata",
    "output_config",
    "service_tier",
    "speed",
    "stop_sequences",
    "thinking",
    "user_profile_id",
    "workspace_id",
}
# The beta messages.create's own parameters: those typedagent routes to it (BETA_ONLY_SETTINGS), and those it
# does not support yet, which model_settings refuses.
REVIEWED_BETA_ONLY = {
    *_beta.BETA_ONLY_SETTINGS,
    "billing_policy",
    "compaction",
    "fallback_credit_token",
    "fallbacks",
    "thread",
}


def test_sdk_tables_create_parameters_are_the_reviewed_ones() -> None:
    """messages.create takes exactly the parameters reviewed for model_settings, in both clients."""
    assert parameters(Messages.create) == CREATE
    problems = differences(
        REVIEWED_CREATE,
        CREATE,
        gained=lambda name: (
            f"the SDK's messages.create gained parameter {name!r}: model_settings passes it through as it is; if "
            f"typedagent builds it, add it to RESERVED_SETTINGS ({SETTINGS}), else to the ModelSettings type there; "
            f"if a span should carry it, to _REQUEST ({SPANS}); then add it to REVIEWED_CREATE in this file"
        ),
        lost=lambda name: (
            f"the SDK's messages.create no longer accepts {name!r}: remove it from REVIEWED_CREATE in this file, "
            f"from RESERVED_SETTINGS or TRANSPORT_SETTINGS ({SETTINGS}), and from the docs"
        ),
    )
    assert not problems, "\n".join(problems)


def test_sdk_tables_beta_create_parameters_are_the_reviewed_ones() -> None:
    """The beta messages.create adds exactly the reviewed parameters to the standard one."""
    assert parameters(BetaMessages.create) == BETA_CREATE
    problems = differences(
        REVIEWED_BETA_ONLY,
        BETA_CREATE - CREATE,
        gained=lambda name: (
            f"the SDK's beta messages.create gained parameter {name!r}: model_settings refuses it until it is in "
            f"BETA_SETTINGS ({SETTINGS}) and BETA_ONLY_SETTINGS ({BETA}), with the beta header it needs; "
            "then add it to REVIEWED_BETA_ONLY in this file"
        ),
        lost=lambda name: (
            f"the SDK's beta messages.create no longer has {name!r} of its own: remove it from REVIEWED_BETA_ONLY "
            f"in this file, and from BETA_SETTINGS ({SETTINGS}) and BETA_ONLY_SETTINGS ({BETA})"
        ),
    )
    assert not problems, "\n".join(problems)


def test_sdk_tables_reserved_and_beta_settings_are_parameters_the_sdk_accepts() -> None:
    """What model_settings may not set, or sets through the beta resource, are parameters of messages.create."""
    reserved, beta = _settings.RESERVED_SETTINGS, _settings.BETA_SETTINGS
    problems = [
        f"RESERVED_SETTINGS ({SETTINGS}) names {name!r}, which messages.create no longer accepts"
        for name in sorted(reserved - CREATE)
    ] + [
        f"BETA_SETTINGS ({SETTINGS}) names {name!r}, which the beta messages.create no longer accepts"
        for name in sorted(beta - BETA_CREATE)
    ]
    assert not problems, "\n".join(problems)
    assert _settings.settings_keys() == (CREATE - reserved) | beta


def test_sdk_tables_transport_settings_are_the_sdk_request_options() -> None:
    """TRANSPORT_SETTINGS are exactly the request options messages.create takes beside the API's parameters."""
    options = CREATE - MessageCreateParamsNonStreaming.__annotations__.keys() - {"stream"}
    problems = differences(
        _settings.TRANSPORT_SETTINGS,
        options,
        gained=lambda name: (
            f"the SDK's messages.create gained request option {name!r}: add it to TRANSPORT_SETTINGS "
            f"({SETTINGS}) so model_settings takes it"
        ),
        lost=lambda name: f"TRANSPORT_SETTINGS ({SETTINGS}) names {name!r}, which messages.create no longer takes",
    )
    assert not problems, "\n".join(problems)


def test_sdk_tables_span_request_attributes_are_create_parameters() -> None:
    """Each request parameter typedagent's chat span records is one messages.create accepts."""
    problems = [
        f"_REQUEST ({SPANS}) traces {name!r}, which messages.create no longer accepts: remove it, and its "
        "gen_ai.request attribute from docs/observability.md"
        for name in sorted(_span_attributes._REQUEST.keys() - CREATE)
    ]
    assert not problems, "\n".join(problems)


def test_sdk_tables_call_blocks_are_the_sdks() -> None:
    """The blocks read as tool calls are exactly the SDK's content blocks with an id, a name and an input."""
    calls = {kind for kind, block in BLOCKS.items() if {"id", "name", "input"} <= block.model_fields.keys()}
    tables = f"CALL_KINDS ({where(_server_calls)}) and SERVER_CALL_PREFIXES ({where(_items)})"
    problems = differences(
        _response._CALLS,
        calls,
        gained=lambda kind: (
            f"the SDK's content blocks gained the call block {kind!r}: add it to _CALLS ({where(_response)}) "
            f"and, if the API carries it out, to {tables}"
        ),
        lost=lambda kind: (
            f"the SDK's content blocks no longer have the call block {kind!r}: remove it from _CALLS "
            f"({where(_response)}), {tables}"
        ),
    )
    assert not problems, "\n".join(problems)
    assert set(_server_calls.CALL_KINDS) == set(_response._CALLS) - {"tool_use"}
    assert set(_items.SERVER_CALL_PREFIXES) == set(_server_calls.CALL_KINDS)


def test_sdk_tables_server_results_are_the_blocks_answering_a_call() -> None:
    """is_server_result picks exactly the SDK's content blocks that carry the tool_use_id of a call."""
    results = {kind for kind, block in BLOCKS.items() if "tool_use_id" in block.model_fields}
    problems = differences(
        {kind for kind in BLOCKS if _server_calls.is_server_result({"type": kind})},
        results,
        gained=lambda kind: (
            f"the SDK's content block {kind!r} answers a server call, but is_server_result "
            f"({where(_server_calls)}) does not see it: the tool hooks would miss its result"
        ),
        lost=lambda kind: (
            f"is_server_result ({where(_server_calls)}) takes the SDK's content block {kind!r} for a server "
            "call's result, but it answers no call"
        ),
    )
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("usage", "server"), [(Usage, ServerToolUsage), (BetaUsage, BetaServerToolUsage)])
def test_sdk_tables_usage_counters_are_the_sdks_token_counts(usage: type[Any], server: type[Any]) -> None:
    """The counters read from a response's usage are exactly the SDK's integer ``*_tokens`` and request counts."""
    tokens = {
        name
        for name, field in usage.model_fields.items()
        if name.endswith("_tokens") and int in (field.annotation, *typing.get_args(field.annotation))
    }
    counters = f"COUNTERS ({where(_usage)}) and _COUNTERS ({where(_response)})"
    problems = differences(
        _usage.COUNTERS,
        tokens,
        gained=lambda name: (
            f"the SDK's {usage.__name__} gained the token count {name!r}: add it to {counters}, and to TokenUsage"
        ),
        lost=lambda name: (
            f"the SDK's {usage.__name__} no longer has the token count {name!r}: remove it from {counters}"
        ),
    ) + differences(
        _usage.REQUEST_COUNTERS,
        server.model_fields,
        gained=lambda name: (
            f"the SDK's {server.__name__} gained the counter {name!r}: add it to REQUEST_COUNTERS "
            f"({where(_usage)}) and TokenUsage"
        ),
        lost=lambda name: (
            f"the SDK's {server.__name__} no longer has the counter {name!r}: remove it from "
            f"REQUEST_COUNTERS ({where(_usage)})"
        ),
    )
    assert not problems, "\n".join(problems)
    assert _response._COUNTERS == _usage.COUNTERS


def test_sdk_tables_anthropic_defined_tools_are_each_classified() -> None:
    """Every Anthropic-defined tool type of the SDK is a server tool or a client tool, by exactly one prefix."""
    kinds = (literal_types(typing.get_args(ToolUnionParam)) | literal_types(typing.get_args(BetaToolUnionParam))).keys()
    prefixes = (*_tool_definitions.SERVER_TOOL_PREFIXES, *_tool_definitions.CLIENT_TOOL_PREFIXES)
    problems = []
    for kind in sorted(kinds - {"custom", "mcp_toolset"}):
        matches = [prefix for prefix in prefixes if kind.startswith(prefix)]
        if len(matches) != 1:
            problems.append(
                f"the SDK's tool type {kind!r} matches {len(matches)} of SERVER_TOOL_PREFIXES and "
                f"CLIENT_TOOL_PREFIXES ({where(_tool_definitions)}), not exactly one: add the prefix of its family "
                "to the one that runs it (the API, or your code)"
            )
    problems += [
        f"{prefix!r} of {where(_tool_definitions)} matches no tool type of the SDK any more: remove it"
        for prefix in prefixes
        if not any(kind.startswith(prefix) for kind in kinds)
    ]
    assert not problems, "\n".join(problems)


def test_sdk_tables_every_error_type_has_a_status() -> None:
    """ERROR_TYPE_STATUSES gives each error type of the SDK's ErrorType a status; the retryable ones are among them."""
    statuses = _api_errors.ERROR_TYPE_STATUSES
    documented = {"request_timeout_error", "request_too_large"}  # the API's, not (yet) in the SDK's ErrorType
    problems = differences(
        statuses.keys() - documented,
        typing.get_args(ErrorType),
        gained=lambda kind: (
            f"the SDK's ErrorType gained {kind!r}: add its HTTP status to ERROR_TYPE_STATUSES ({where(_api_errors)}), "
            f"and to RETRYABLE ({where(_batch_results)}) if it is transient"
        ),
        lost=lambda kind: (
            f"ERROR_TYPE_STATUSES ({where(_api_errors)}) names {kind!r}, which the SDK's ErrorType no longer has"
        ),
    )
    problems += [
        f"RETRYABLE ({where(_batch_results)}) names {kind!r}, which ERROR_TYPE_STATUSES does not know"
        for kind in sorted(_batch_results.RETRYABLE - statuses.keys())
    ]
    assert not problems, "\n".join(problems)
    assert set(_api_errors.STATUS_TYPES.values()) <= statuses.keys()


def test_sdk_tables_differences_name_each_item() -> None:
    """The helper behind these tests names every item each side lacks, with the sentence given for it."""
    found = differences(
        {"a", "b"}, {"b", "c", "d"}, gained=lambda item: f"gained {item}", lost=lambda item: f"lost {item}"
    )
    assert found == ["gained c", "gained d", "lost a"]
    assert differences({"x"}, {"x"}, gained=str, lost=str) == []


# The docs name messages.create parameters in two places: the keys of model_settings examples, and the
# gen_ai.request.* span attributes (one per request parameter, in a table row `gen_ai.request.a`, `.b`).
PAGES = sorted([*ROOT.glob("*.md"), *(ROOT / "docs").rglob("*.md")])
SETTINGS_DICT = re.compile(r"model_settings\s*=\s*\{|\{\*\*[\w.]*model_settings,")
SETTINGS_KEY = re.compile(r"""model_settings\[["'](\w+)["']\]""")
ATTRIBUTE = re.compile(r"gen_ai\.request\.(\w+)")
ATTRIBUTE_SHORTHAND = re.compile(r"`\.(\w+)`")
DELIBERATE = {("docs/concepts.md", "metdata")}
"""Names the docs show on purpose although the SDK refuses them: the typo example of define_agent's check."""


def _top_level_keys(text: str, start: int) -> list[str]:
    """The string keys of the dict display whose contents start at ``start`` (nested dicts' keys left out)."""
    keys, depth, index = [], 0, start
    while index < len(text) and depth >= 0:
        char = text[index]
        if char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
        elif char in "\"'" and depth == 0:
            end = text.index(char, index + 1)
            if re.match(r"\s*:", text[end + 1 :]):
                keys.append(text[index + 1 : end])
            index = end
        index += 1
    return keys


def parameter_names(text: str) -> list[str]:
    """The messages.create parameters a page names: model_settings keys and gen_ai.request attributes."""
    names = [key for match in SETTINGS_DICT.finditer(text) for key in _top_level_keys(text, match.end())]
    names += SETTINGS_KEY.findall(text)
    for line in text.splitlines():
        attributes = ATTRIBUTE.findall(line)
        names += attributes
        if attributes:
            names += ATTRIBUTE_SHORTHAND.findall(line)
    return names


def test_sdk_tables_docs_parameter_scan_finds_each_form() -> None:
    """The docs scan reads settings keys (top level only), subscripts and request attributes, shorthand included."""
    text = (
        'x = define_agent(model_settings={"thinking": {"type": "enabled"}, "metadata": {}})\n'
        'y = {**agent.model_settings, "stop_sequences": ["END"]} and model_settings["timeout"]\n'
        "| `gen_ai.request.max_tokens`, `.top_k` | set |\n"
        "`.not_an_attribute` alone, and model_settings={...}\n"
    )
    assert parameter_names(text) == ["thinking", "metadata", "stop_sequences", "timeout", "max_tokens", "top_k"]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_sdk_tables_docs_name_only_parameters_the_sdk_accepts(page: Path) -> None:
    """Every messages.create parameter a page names is one the installed SDK (or its beta resource) accepts."""
    where = str(page.relative_to(ROOT))
    accepted = CREATE | BETA_CREATE
    wrong = [name for name in parameter_names(page.read_text()) if name not in accepted]
    assert [name for name in wrong if (where, name) not in DELIBERATE] == [], (
        f"{where} names parameters the SDK's messages.create does not accept"
    )
    for deliberate_page, name in DELIBERATE:
        if deliberate_page == where:
            assert name in wrong, f"{where} no longer shows {name!r}: remove it from DELIBERATE"

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
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from anthropic.resources.beta.messages.messages import AsyncMessages as AsyncBetaMessages
from anthropic.resources.beta.messages.messages import Messages as BetaMessages
from anthropic.resources.messages.messages import AsyncMessages, Messages
from anthropic.types import ContentBlock, ServerToolUsage, ToolUnionParam, Usage
from anthropic.types.beta import BetaContentBlock, BetaServerToolUsage, BetaToolUnionParam, BetaUsage
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from anthropic.types.shared import ErrorType

from typedagent._api_errors import ERROR_TYPE_STATUSES, STATUS_TYPES
from typedagent._batch_results import RETRYABLE
from typedagent._beta import BETA_ONLY_SETTINGS
from typedagent._definition import BETA_SETTINGS, RESERVED_SETTINGS, TRANSPORT_SETTINGS, settings_keys
from typedagent._response import _CALLS, _COUNTERS
from typedagent._server_calls import CALL_KINDS, is_server_result
from typedagent._span_attributes import _REQUEST
from typedagent._tool_definitions import CLIENT_TOOL_PREFIXES, SERVER_TOOL_PREFIXES
from typedagent._usage import COUNTERS, REQUEST_COUNTERS
from typedagent.testing._items import SERVER_CALL_PREFIXES

ROOT = Path(__file__).resolve().parent.parent


def differences(ours: Iterable[str], sdk: Iterable[str], *, gained: str, lost: str) -> list[str]:
    """One sentence per item the SDK has and the table lacks (``gained``), and per item the other way (``lost``).

    ``gained`` and ``lost`` are formats with ``{!r}`` for the item.
    """
    ours, sdk = set(ours), set(sdk)
    return [gained.format(item) for item in sorted(sdk - ours)] + [lost.format(item) for item in sorted(ours - sdk)]


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

# The parameters of messages.create this version of typedagent was written against, and how it treats each:
# built by typedagent (RESERVED_SETTINGS), passed through from model_settings, or a request option. A new one is
# passed through from model_settings as it is (settings_keys reads the SDK), which is right unless typedagent has
# to build it or trace it.
REVIEWED_CREATE = {
    *RESERVED_SETTINGS,
    *TRANSPORT_SETTINGS,
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
    *BETA_ONLY_SETTINGS,
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
        gained="the SDK's messages.create gained parameter {!r}: model_settings passes it through as it is; if "
        "typedagent builds it, add it to RESERVED_SETTINGS (src/typedagent/_definition.py), if a span should carry "
        "it, to _REQUEST (src/typedagent/_span_attributes.py); then add it to REVIEWED_CREATE in this file",
        lost="the SDK's messages.create no longer accepts {!r}: remove it from REVIEWED_CREATE in this file, "
        "and from RESERVED_SETTINGS or TRANSPORT_SETTINGS (src/typedagent/_definition.py) and the docs",
    )
    assert not problems, "\n".join(problems)


def test_sdk_tables_beta_create_parameters_are_the_reviewed_ones() -> None:
    """The beta messages.create adds exactly the reviewed parameters to the standard one."""
    assert parameters(BetaMessages.create) == BETA_CREATE
    problems = differences(
        REVIEWED_BETA_ONLY,
        BETA_CREATE - CREATE,
        gained="the SDK's beta messages.create gained parameter {!r}: model_settings refuses it until it is in "
        "BETA_SETTINGS (src/typedagent/_definition.py) and BETA_ONLY_SETTINGS (src/typedagent/_beta.py), with the "
        "beta header it needs; then add it to REVIEWED_BETA_ONLY in this file",
        lost="the SDK's beta messages.create no longer has {!r} of its own: remove it from REVIEWED_BETA_ONLY in "
        "this file, and from BETA_SETTINGS and BETA_ONLY_SETTINGS",
    )
    assert not problems, "\n".join(problems)


def test_sdk_tables_reserved_and_beta_settings_are_parameters_the_sdk_accepts() -> None:
    """What model_settings may not set, or sets through the beta resource, are parameters of messages.create."""
    problems = [
        f"RESERVED_SETTINGS (src/typedagent/_definition.py) names {name!r}, which messages.create no longer accepts"
        for name in sorted(RESERVED_SETTINGS - CREATE)
    ] + [
        f"BETA_SETTINGS (src/typedagent/_definition.py) names {name!r}, which the beta messages.create no longer "
        "accepts"
        for name in sorted(BETA_SETTINGS - BETA_CREATE)
    ]
    assert not problems, "\n".join(problems)
    assert settings_keys() == (CREATE - RESERVED_SETTINGS) | BETA_SETTINGS


def test_sdk_tables_transport_settings_are_the_sdk_request_options() -> None:
    """TRANSPORT_SETTINGS are exactly the request options messages.create takes beside the API's parameters."""
    options = CREATE - MessageCreateParamsNonStreaming.__annotations__.keys() - {"stream"}
    problems = differences(
        TRANSPORT_SETTINGS,
        options,
        gained="the SDK's messages.create gained request option {!r}: add it to TRANSPORT_SETTINGS "
        "(src/typedagent/_definition.py) so model_settings takes it",
        lost="TRANSPORT_SETTINGS (src/typedagent/_definition.py) names {!r}, which messages.create no longer takes",
    )
    assert not problems, "\n".join(problems)


def test_sdk_tables_span_request_attributes_are_create_parameters() -> None:
    """Each request parameter typedagent's chat span records is one messages.create accepts."""
    problems = [
        f"_REQUEST (src/typedagent/_span_attributes.py) traces {name!r}, which messages.create no longer accepts: "
        "remove it, and its gen_ai.request attribute from docs/observability.md"
        for name in sorted(_REQUEST.keys() - CREATE)
    ]
    assert not problems, "\n".join(problems)


def test_sdk_tables_call_blocks_are_the_sdks() -> None:
    """The blocks read as tool calls are exactly the SDK's content blocks with an id, a name and an input."""
    calls = {kind for kind, block in BLOCKS.items() if {"id", "name", "input"} <= block.model_fields.keys()}
    problems = differences(
        _CALLS,
        calls,
        gained="the SDK's content blocks gained the call block {!r}: add it to _CALLS (src/typedagent/_response.py) "
        "and, if the API carries it out, to CALL_KINDS (src/typedagent/_server_calls.py) and SERVER_CALL_PREFIXES "
        "(src/typedagent/testing/_items.py)",
        lost="the SDK's content blocks no longer have the call block {!r}: remove it from _CALLS "
        "(src/typedagent/_response.py), CALL_KINDS and SERVER_CALL_PREFIXES",
    )
    assert not problems, "\n".join(problems)
    assert set(CALL_KINDS) == set(_CALLS) - {"tool_use"}
    assert set(SERVER_CALL_PREFIXES) == set(CALL_KINDS)


def test_sdk_tables_server_results_are_the_blocks_answering_a_call() -> None:
    """is_server_result picks exactly the SDK's content blocks that carry the tool_use_id of a call."""
    results = {kind for kind, block in BLOCKS.items() if "tool_use_id" in block.model_fields}
    problems = differences(
        {kind for kind in BLOCKS if is_server_result({"type": kind})},
        results,
        gained="the SDK's content block {!r} answers a server call, but is_server_result "
        "(src/typedagent/_server_calls.py) does not see it: the tool hooks would miss its result",
        lost="is_server_result (src/typedagent/_server_calls.py) takes the SDK's content block {!r} for a server "
        "call's result, but it answers no call",
    )
    assert not problems, "\n".join(problems)


def test_sdk_tables_usage_counters_are_the_sdks_token_counts() -> None:
    """The token counters read from a response's usage are exactly the SDK's integer ``*_tokens`` fields."""
    for usage, server in ((Usage, ServerToolUsage), (BetaUsage, BetaServerToolUsage)):
        tokens = {
            name
            for name, field in usage.model_fields.items()
            if name.endswith("_tokens") and int in (field.annotation, *typing.get_args(field.annotation))
        }
        problems = differences(
            COUNTERS,
            tokens,
            gained=f"the SDK's {usage.__name__} gained the token count {{!r}}: add it to COUNTERS "
            "(src/typedagent/_usage.py), _COUNTERS (src/typedagent/_response.py) and TokenUsage",
            lost=f"the SDK's {usage.__name__} no longer has the token count {{!r}}: remove it from COUNTERS "
            "(src/typedagent/_usage.py) and _COUNTERS (src/typedagent/_response.py)",
        ) + differences(
            REQUEST_COUNTERS,
            server.model_fields,
            gained=f"the SDK's {server.__name__} gained the counter {{!r}}: add it to REQUEST_COUNTERS "
            "(src/typedagent/_usage.py) and TokenUsage",
            lost=f"the SDK's {server.__name__} no longer has the counter {{!r}}: remove it from REQUEST_COUNTERS "
            "(src/typedagent/_usage.py)",
        )
        assert not problems, "\n".join(problems)
    assert _COUNTERS == COUNTERS


def test_sdk_tables_anthropic_defined_tools_are_each_classified() -> None:
    """Every Anthropic-defined tool type of the SDK is a server tool or a client tool, by exactly one prefix."""
    kinds = (literal_types(typing.get_args(ToolUnionParam)) | literal_types(typing.get_args(BetaToolUnionParam))).keys()
    problems = []
    for kind in sorted(kinds - {"custom", "mcp_toolset"}):
        matches = [prefix for prefix in (*SERVER_TOOL_PREFIXES, *CLIENT_TOOL_PREFIXES) if kind.startswith(prefix)]
        if len(matches) != 1:
            problems.append(
                f"the SDK's tool type {kind!r} matches {len(matches)} of SERVER_TOOL_PREFIXES and "
                "CLIENT_TOOL_PREFIXES (src/typedagent/_tool_definitions.py), not exactly one: add the prefix of its "
                "family to the one that runs it (the API, or your code)"
            )
    problems += [
        f"{prefix!r} of src/typedagent/_tool_definitions.py matches no tool type of the SDK any more: remove it"
        for prefix in (*SERVER_TOOL_PREFIXES, *CLIENT_TOOL_PREFIXES)
        if not any(kind.startswith(prefix) for kind in kinds)
    ]
    assert not problems, "\n".join(problems)


def test_sdk_tables_every_error_type_has_a_status() -> None:
    """ERROR_TYPE_STATUSES gives each error type of the SDK's ErrorType a status; the retryable ones are among them."""
    documented = {"request_timeout_error", "request_too_large"}  # the API's, not (yet) in the SDK's ErrorType
    problems = differences(
        ERROR_TYPE_STATUSES.keys() - documented,
        typing.get_args(ErrorType),
        gained="the SDK's ErrorType gained {!r}: add its HTTP status to ERROR_TYPE_STATUSES "
        "(src/typedagent/_api_errors.py), and to RETRYABLE (src/typedagent/_batch_results.py) if it is transient",
        lost="ERROR_TYPE_STATUSES (src/typedagent/_api_errors.py) names {!r}, which the SDK's ErrorType no longer has",
    )
    problems += [
        f"RETRYABLE (src/typedagent/_batch_results.py) names {kind!r}, which ERROR_TYPE_STATUSES does not know"
        for kind in sorted(RETRYABLE - ERROR_TYPE_STATUSES.keys())
    ]
    assert not problems, "\n".join(problems)
    assert set(STATUS_TYPES.values()) <= ERROR_TYPE_STATUSES.keys()


def test_sdk_tables_differences_name_each_item() -> None:
    """The helper behind these tests names every item each side lacks, with the sentence given for it."""
    assert differences({"a", "b"}, {"b", "c", "d"}, gained="gained {!r}", lost="lost {!r}") == [
        "gained 'c'",
        "gained 'd'",
        "lost 'a'",
    ]
    assert differences({"x"}, {"x"}, gained="{!r}", lost="{!r}") == []


# The docs name messages.create parameters in two places: the keys of model_settings examples, and the
# gen_ai.request.* span attributes (one per request parameter, in a table row `gen_ai.request.a`, `.b`).
PAGES = sorted([ROOT / "README.md", ROOT / "MIGRATION.md", ROOT / "ERROR_HANDLING.md", *(ROOT / "docs").rglob("*.md")])
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

"""``model_settings``: the ``ModelSettings`` type checkers see, and the check of keys and values at definition."""

from __future__ import annotations

import difflib
import functools
import importlib.metadata
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, NotRequired, Required, get_args, get_origin

import pydantic
from typing_extensions import TypedDict, is_typeddict

from .._shared.errors import AgentDefinitionError
from .._shared.frozen import thaw
from .._shared.numbers import is_finite_number

if TYPE_CHECKING:
    from anthropic import Timeout
    from anthropic.types import ContainerParams, DiagnosticsParam, MetadataParam, OutputConfigParam, ThinkingConfigParam
    from anthropic.types.beta import (
        BetaContainerParams,
        BetaContextManagementConfigParam,
        BetaRequestMCPServerURLDefinitionParam,
    )

__all__ = [
    "BETA_SETTINGS",
    "RESERVED_SETTINGS",
    "TRANSPORT_SETTINGS",
    "ModelSettings",
    "check_thinking_budget",
    "checked_settings",
    "settings_keys",
]

RESERVED_SETTINGS: Final = frozenset(
    {"model", "messages", "system", "tools", "tool_choice", "max_tokens", "stream", "cache_control"}
)
TRANSPORT_SETTINGS: Final = frozenset({"extra_body", "extra_headers", "extra_query", "timeout"})
"""The SDK's per-request options, accepted by every ``messages.create``."""
BETA_SETTINGS: Final = frozenset({"betas", "mcp_servers", "context_management", "container"})
"""Parameters of the beta ``messages.create`` accepted too (a beta client sends them)."""


class ModelSettings(TypedDict, total=False):
    """The ``messages.create`` parameters an agent may add to each request: ``define_agent(model_settings=...)``.

    Type checkers catch a misspelt key (``{"stop_sequence": [...]}``) and a value of the wrong shape; a plain
    dict literal with the right keys type-checks as it is. ``define_agent`` checks the same at run time, against
    the installed SDK. Every key is optional; the values are the SDK's own parameter types.

    Example:
        ``define_agent(..., model_settings={"thinking": {"type": "enabled", "budget_tokens": 2048}})``
    """

    container: ContainerParams | BetaContainerParams | str | None
    """The code execution container to use: an id, or an id and skills (a beta parameter for skills)."""
    diagnostics: DiagnosticsParam | None
    """Diagnostics the API returns with the response."""
    inference_geo: str | None
    """Where the model runs (data residency)."""
    metadata: MetadataParam
    """Request metadata: ``{"user_id": ...}``."""
    output_config: OutputConfigParam
    """Output settings, such as ``{"effort": "high"}``."""
    service_tier: Literal["auto", "standard_only"]
    """Priority capacity, when the organisation has it."""
    speed: Literal["fast", "standard"] | None
    """The speed mode of models that have one."""
    stop_sequences: Sequence[str]
    """Strings that end the response when the model writes them (a list, never one string)."""
    thinking: ThinkingConfigParam
    """Extended thinking: ``{"type": "enabled", "budget_tokens": N}`` (N below ``max_tokens``), or
    ``{"type": "adaptive"}``."""
    user_profile_id: str
    """The user profile the request is made for."""
    workspace_id: str
    """The workspace the request is billed to."""
    betas: Sequence[str]
    """Beta features to turn on (the request then goes through ``client.beta.messages``)."""
    mcp_servers: Iterable[BetaRequestMCPServerURLDefinitionParam]
    """MCP servers the API connects to (beta)."""
    context_management: BetaContextManagementConfigParam | None
    """Compaction and context editing (beta)."""
    extra_body: Mapping[str, object]
    """More JSON for the request body: a parameter newer than the SDK."""
    extra_headers: Mapping[str, str]
    """More HTTP headers of the request."""
    extra_query: Mapping[str, object]
    """More query parameters of the request."""
    timeout: float | Timeout | None
    """The SDK's timeout of each request, in seconds."""


@functools.cache
def settings_keys() -> frozenset[str]:
    """What ``model_settings`` may hold: the SDK's ``messages.create`` parameters typedagent does not build.

    That is the installed SDK's parameters, its transport options (``extra_body``, ``timeout``, …) and the
    beta parameters ``BETA_SETTINGS``. Read from the SDK's own ``MessageCreateParams`` once, on the first
    agent with settings (importing the SDK then, not with typedagent).
    """
    from anthropic.types.beta.message_create_params import MessageCreateParamsBase as BetaParams
    from anthropic.types.message_create_params import MessageCreateParamsBase as Params

    beta = BETA_SETTINGS & BetaParams.__annotations__.keys()
    return frozenset(Params.__annotations__.keys() - RESERVED_SETTINGS | TRANSPORT_SETTINGS | beta)


@functools.cache
def _parameter_types() -> Mapping[str, Any]:
    """The type of each parameter of the SDK's ``messages.create`` (the beta one's for the beta parameters)."""
    from anthropic.types.beta.message_create_params import MessageCreateParamsBase as BetaParams
    from anthropic.types.message_create_params import MessageCreateParamsBase as Params

    types = dict(typing.get_type_hints(Params))
    beta = typing.get_type_hints(BetaParams)
    types.update({key: beta[key] for key in BETA_SETTINGS & beta.keys()})
    return {key: _eager(value) for key, value in types.items() if key not in RESERVED_SETTINGS}


def _eager(annotation: Any) -> Any:
    """``Iterable[X]`` as ``Sequence[X]``, so that a value is validated at once.

    pydantic validates an iterable only as it is consumed: a string would pass as an iterable of characters.
    """
    if get_origin(annotation) is Iterable:
        return Sequence[get_args(annotation)]  # type: ignore[misc]
    return annotation


@functools.cache
def _adapter(key: str) -> pydantic.TypeAdapter[Any]:
    return pydantic.TypeAdapter(_parameter_types()[key])


def checked_settings(model_settings: Mapping[str, Any], max_tokens: int) -> dict[str, Any]:
    """``model_settings`` as a dict, once every key is a parameter of the SDK and every value fits its type.

    Raises:
        AgentDefinitionError: a key typedagent builds itself, a key the SDK does not take (with a suggestion), a
            value of the wrong type (naming what the SDK expects), or a thinking budget at or above ``max_tokens``.
    """
    settings = dict(model_settings)
    reserved = sorted(RESERVED_SETTINGS & settings.keys())
    if reserved:
        raise AgentDefinitionError(
            f"model_settings cannot set {', '.join(map(repr, reserved))}: typedagent builds those itself "
            "(use max_tokens= and prompt_caching= on define_agent)."
        )
    if settings:
        known = settings_keys()
        for key, value in settings.items():
            if key not in known:
                raise AgentDefinitionError(_unknown_setting(key, known))
            _check_value(key, value)
    check_thinking_budget(settings.get("thinking"), max_tokens)
    return settings


def _check_value(key: str, value: object) -> None:
    if key in TRANSPORT_SETTINGS:
        _check_transport(key, value)
        return
    try:
        _adapter(key).validate_python(thaw(value), strict=True)  # an agent's own settings are read-only views
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) + ': ' if error['loc'] else ''}{error['msg']}"
            for error in exc.errors(include_url=False)[:3]
        )
        raise AgentDefinitionError(
            f"model_settings[{key!r}] is not what messages.create takes in anthropic {_sdk_version()}: it expects "
            f"{describe(_parameter_types()[key])}, got {value!r} ({problems})."
        ) from None


def _check_transport(key: str, value: object) -> None:
    if key == "timeout":
        if isinstance(value, int | float) and not (is_finite_number(value) and value > 0):
            raise AgentDefinitionError(
                f"model_settings['timeout'] must be a finite positive number of seconds, got {value!r}."
            )
        return
    if not isinstance(value, Mapping):
        raise AgentDefinitionError(
            f"model_settings[{key!r}] must be a dict (the SDK's request option), got {type(value).__name__}."
        )


def describe(annotation: Any, depth: int = 0) -> str:
    """A parameter type as a reader knows it: ``{'type': 'enabled', 'budget_tokens': int}``, ``'auto' | 'x'``."""
    origin = get_origin(annotation)
    if origin in (Required, NotRequired):
        return describe(get_args(annotation)[0], depth)
    if origin is Literal:
        return " | ".join(repr(value) for value in get_args(annotation))
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        return " | ".join(dict.fromkeys(describe(arg, depth) for arg in get_args(annotation)))
    if origin in (list, Sequence, Iterable, typing.List):  # noqa: UP006 - the SDK's own annotations use List
        (item,) = get_args(annotation) or (Any,)
        return f"a list of {describe(item, depth + 1)}"
    if annotation is type(None):
        return "None"
    if is_typeddict(annotation):
        if depth:
            return str(annotation.__name__)
        hints = typing.get_type_hints(annotation, include_extras=True)
        total = bool(getattr(annotation, "__total__", True))
        required = {
            name
            for name, hint in hints.items()
            if get_origin(hint) is Required or (total and get_origin(hint) is not NotRequired)
        }
        ordered = sorted(hints.items(), key=lambda item: item[0] not in required)  # the required keys first
        fields = [f"{name!r}{'' if name in required else '?'}: {describe(hint, depth + 1)}" for name, hint in ordered]
        return "{" + ", ".join(fields) + "}"
    return str(getattr(annotation, "__name__", annotation))


def _sdk_version() -> str:
    return importlib.metadata.version("anthropic")


def _unknown_setting(key: str, known: frozenset[str]) -> str:
    close = difflib.get_close_matches(key, sorted(known), n=1)
    hint = (
        f"did you mean {close[0]!r}?"
        if close
        else f"the parameters it takes are {', '.join(sorted(known))}. A parameter the SDK does not know yet "
        "can be sent as extra_body={...}."
    )
    return f"model_settings key {key!r} is not a parameter of messages.create in anthropic {_sdk_version()}: {hint}"


def check_thinking_budget(thinking: object, max_tokens: int) -> None:
    """Raise ``AgentDefinitionError`` when a thinking setting's budget is not below ``max_tokens``."""
    if not isinstance(thinking, Mapping):
        return
    budget = thinking.get("budget_tokens")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if isinstance(budget, int) and budget >= max_tokens:
        raise AgentDefinitionError(
            f"model_settings['thinking']['budget_tokens'] ({budget}) must be below max_tokens ({max_tokens}): "
            "the thinking budget is part of each response's max_tokens. Raise define_agent(max_tokens=...) or "
            "lower the budget."
        )

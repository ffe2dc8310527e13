"""The checks of ``define_agent``'s arguments, each raising ``AgentDefinitionError`` with what to write instead."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from typing import Any

from .._shared.errors import AgentDefinitionError
from .config import ValidationConfig
from .fallback import Alternative, FallbackPolicy
from .models import check_model, model_warning
from .output import OutputTool
from .remote import Toolset
from .tools import HelperTool

__all__ = ["check_caching", "check_containers", "check_fallback_options", "check_fields", "output_format_left_out"]


def check_fields(
    name: object,
    model: object,
    output: object,
    instructions: object,
    max_tokens: object,
    max_tool_result_chars: object,
) -> None:
    if not isinstance(name, str) or not name:
        raise AgentDefinitionError(f"define_agent(name=...) must be a non-empty string, got {name!r}.")
    if not isinstance(model, str) or not model:
        raise AgentDefinitionError(f"define_agent(model=...) must be a model id string, got {model!r}.")
    check_model(model)
    warning = model_warning(model)
    if warning is not None:
        # Pointing at the caller of define_agent (or with_options, which calls it): where the id is written.
        warnings.warn(warning, UserWarning, stacklevel=3)
    if not isinstance(output, OutputTool):
        raise AgentDefinitionError(
            f"define_agent(output=...) must be an OutputTool, got {type(output).__name__}: "
            "wrap your model class as `OutputTool(MyModel)`."
        )
    if instructions is not None and not (isinstance(instructions, str) or callable(instructions)):
        raise AgentDefinitionError("define_agent(instructions=...) must be a string or a callable taking RunContext.")
    for label, value in (("max_tokens", max_tokens), ("max_tool_result_chars", max_tool_result_chars)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise AgentDefinitionError(f"define_agent({label}=...) must be an int >= 1, got {value!r}.")


def check_caching(prompt_caching: object) -> None:
    if not (isinstance(prompt_caching, bool) or prompt_caching in ("5m", "1h")):
        raise AgentDefinitionError(
            f"define_agent(prompt_caching=...) must be True, False, '5m' or '1h', got {prompt_caching!r}: True "
            "caches for 5 minutes, '1h' keeps the tools and system prompt cached for an hour."
        )


def check_containers(helpers: object, validators: object, validation: object, model_settings: object) -> None:
    for label, value in (("helpers", helpers), ("validators", validators)):
        if callable(value) or isinstance(value, HelperTool | Toolset | str) or not isinstance(value, Iterable):
            shown = getattr(value, "__name__", None) or "..."
            raise AgentDefinitionError(
                f"define_agent({label}=...) must be a list, got {type(value).__name__}: "
                f"write {label}=[{shown}] even for one."
            )
    if validation is not None and not isinstance(validation, ValidationConfig):
        raise AgentDefinitionError(
            f"define_agent(validation=...) must be a ValidationConfig, got {type(validation).__name__}: "
            "write validation=ValidationConfig(max_attempts=..., max_iterations_per_attempt=...)."
        )
    if model_settings is not None and not isinstance(model_settings, Mapping):
        raise AgentDefinitionError(
            f"define_agent(model_settings=...) must be a dict of messages.create parameters, "
            f"got {type(model_settings).__name__}."
        )


def output_format_left_out(settings: dict[str, Any], output: OutputTool[Any]) -> dict[str, Any]:
    """``settings``, once sure they leave ``output_config.format`` out: it is the output's, sent in native mode."""
    output_config = settings.get("output_config")
    if isinstance(output_config, Mapping) and output_config.get("format") is not None:  # pyright: ignore[reportUnknownMemberType]
        raise AgentDefinitionError(
            "model_settings['output_config']['format'] is the output's format, which typedagent builds from the "
            f"output type ({output.type_name}): use OutputTool({output.type_name}, mode='native') for output the API "
            "holds to the schema, and keep only the other output_config keys (such as 'effort') in model_settings."
        )
    return settings


def check_fallback_options(chain: tuple[Alternative, ...], on_refusal: object, policy: object) -> None:
    """``define_agent``'s ``fallback_on_refusal`` and ``fallback_policy``, checked against the chain."""
    if not isinstance(on_refusal, bool):
        raise AgentDefinitionError(f"define_agent(fallback_on_refusal=...) must be True or False, got {on_refusal!r}.")
    if on_refusal and not chain:
        raise AgentDefinitionError(
            "define_agent(fallback_on_refusal=True) needs models to move to: add fallback=[...] (model names, or "
            "Alternative(model, client=...))."
        )
    if policy is not None and not isinstance(policy, FallbackPolicy):
        raise AgentDefinitionError(
            f"define_agent(fallback_policy=...) must be a FallbackPolicy, got {type(policy).__name__}."
        )

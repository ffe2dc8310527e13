"""The model id of an agent: a ``provider:`` prefix refused, an id the installed SDK does not know warned about."""

from __future__ import annotations

import difflib
import functools
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Final, Literal, get_args, get_origin

from .._shared.errors import AgentDefinitionError

__all__ = ["check_model", "known_models", "model_warning"]

_PREFIXED: Final = re.compile(r"^(?P<provider>[A-Za-z][A-Za-z0-9_-]*):(?P<model>.+)$")
"""``anthropic:claude-…``, the provider prefix of pydantic-ai's model strings (an ARN starts so too: see below)."""
_PLATFORM: Final = re.compile(r"^arn:|(^|\.)anthropic\.|@")
"""Ids of Claude on cloud platforms: Bedrock (``anthropic.claude-…-v1:0``, ``us.anthropic.…``, ARNs of inference
profiles) and Vertex AI (``claude-…@20250929``). Their names follow the platform's catalogue, not the SDK's."""
_DATED: Final = re.compile(r"^(?P<base>.+)-\d{8}$")


def check_model(model: str) -> None:
    """Refuse a model id written with a provider prefix, saying what to write instead.

    Raises:
        AgentDefinitionError: ``model`` starts with ``provider:``.
    """
    match = _PREFIXED.match(model)
    if match is None or match["provider"] == "arn":
        return
    raise AgentDefinitionError(
        f"define_agent(model={model!r}): {match['provider'] + ':'!r} names a provider, as pydantic-ai model strings "
        "do; typedagent sends the model id as it is to the client you pass (AsyncAnthropic, AsyncAnthropicBedrock, "
        f"AsyncAnthropicVertex): write model={match['model']!r}."
    )


def model_warning(model: str) -> str | None:
    """What is wrong with ``model``, if it looks like a Claude model id the installed SDK does not know; else None.

    Known: every name of the SDK's ``Model`` literal, and those names with a date (``-20250929``). Not judged:
    platform ids (Bedrock, Vertex AI), and ids that resemble no Claude model (a gateway's or a fine-tune's own
    names). A model newer than the SDK is only warned about, never refused.
    """
    known = known_models()
    dated = _DATED.match(model)
    if model in known or (dated is not None and dated["base"] in known) or _PLATFORM.search(model):
        return None
    close = difflib.get_close_matches(model, sorted(known), n=1)
    if not close and not model.startswith("claude"):
        return None
    hint = f"did you mean {close[0]!r}?" if close else f"it knows {', '.join(sorted(known))}."
    return (
        f"model {model!r} is not a model the installed anthropic SDK knows: {hint} A model newer than the SDK "
        "still works (upgrade anthropic to stop this warning); a misspelt one fails every call with a 404."
    )


@functools.cache
def known_models() -> frozenset[str]:
    """The model names of the installed SDK's ``Model`` literal."""
    model_type: Any = _sdk_model_module().Model
    names: set[str] = set()
    for arg in get_args(model_type):
        if get_origin(arg) is Literal:
            names.update(str(name) for name in get_args(arg))
    return frozenset(names)


def _sdk_model_module() -> ModuleType:
    """``anthropic.types.model``, read on its own when the SDK is not imported yet (importing it takes seconds)."""
    loaded = sys.modules.get("anthropic.types.model")
    if loaded is not None:
        return loaded
    spec = importlib.util.find_spec("anthropic")
    origin = None if spec is None or spec.origin is None else Path(spec.origin).parent / "types" / "model.py"
    if origin is not None and origin.is_file():
        standalone = importlib.util.spec_from_file_location("typedagent._sdk_model", origin)
        if standalone is not None and standalone.loader is not None:
            module = importlib.util.module_from_spec(standalone)
            try:
                standalone.loader.exec_module(module)
            except ImportError:  # pragma: no cover - a future SDK whose model.py imports the package
                pass
            else:
                return module
    import anthropic.types.model  # pragma: no cover - the SDK laid out differently: import it after all

    return anthropic.types.model  # pragma: no cover

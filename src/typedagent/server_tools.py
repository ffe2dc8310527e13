"""Server tools: tools the Anthropic API runs itself, declared with ``define_agent(server_tools=[...])``.

The model calls a server tool like any other tool, but the API carries the call out (a web search, a page
fetch, code in a sandbox) and puts the result in the same response: your code never answers it. typedagent
sends the definitions in ``tools`` beside the helpers and the output tool, keeps the calls and their results in
the conversation verbatim, continues a turn the API paused (``stop_reason: "pause_turn"``), and reports each call
and its result to ``on_tool_call`` / ``on_tool_result`` with ``kind="server"``.

The constructors here build the common definitions with typed arguments::

    from typedagent.server_tools import web_fetch, web_search

    agent = define_agent(
        name="researcher",
        model="claude-sonnet-4-6",
        output=OutputTool(Report),
        server_tools=[web_search(max_uses=5, allowed_domains=["python.org"]), web_fetch(citations=True)],
    )

Each uses the newest version of its tool that the installed ``anthropic`` SDK knows (``web_search_20260318`` with
anthropic 2.12, for example); pass ``version=`` to pin another one, e.g. for a model that supports only an
older version. Any other server tool is a plain dict with a ``type`` and a ``name`` (the SDK's typed dicts, such
as ``anthropic.types.WebSearchTool20250305Param``, are such dicts)::

    define_agent(..., server_tools=[{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}])

Server tools are billed by the API on top of tokens (web search per search); see the tools guide of the
documentation for what each costs.
"""

from __future__ import annotations

import functools
import re
import typing
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from ._agent.server_tool_checks import ServerTool
from ._shared.errors import AgentDefinitionError

if TYPE_CHECKING:
    from anthropic.types import UserLocationParam

__all__ = ["ServerTool", "code_execution", "newest_version", "tool_search", "web_fetch", "web_search"]


def web_search(
    *,
    max_uses: int | None = None,
    allowed_domains: Sequence[str] | None = None,
    blocked_domains: Sequence[str] | None = None,
    user_location: UserLocationParam | None = None,
    version: str | None = None,
) -> dict[str, Any]:
    """The web search server tool: the API searches the web and the model reads (and cites) the results.

    Args:
        max_uses: Most searches per request; the API answers further searches with an error result.
        allowed_domains: Search only these domains (not with ``blocked_domains``).
        blocked_domains: Never return results from these domains.
        user_location: Where the user is, for local results:
            ``{"type": "approximate", "city": "Paris", "country": "FR", "timezone": "Europe/Paris"}``.
        version: The tool type to send, e.g. ``"web_search_20250305"``; default: the newest the SDK knows.

    Raises:
        AgentDefinitionError: a setting the API would refuse.
    """
    if allowed_domains is not None and blocked_domains is not None:
        raise AgentDefinitionError("web_search(): pass allowed_domains or blocked_domains, not both.")
    definition = _definition("web_search", version)
    _set_uses(definition, "web_search", max_uses)
    _set_domains(definition, "web_search", allowed_domains=allowed_domains, blocked_domains=blocked_domains)
    if user_location is not None:
        definition["user_location"] = dict(user_location)
    return definition


def web_fetch(
    *,
    max_uses: int | None = None,
    allowed_domains: Sequence[str] | None = None,
    blocked_domains: Sequence[str] | None = None,
    citations: bool = False,
    max_content_tokens: int | None = None,
    version: str | None = None,
) -> dict[str, Any]:
    """The web fetch server tool: the API fetches a page (or PDF) the model names and puts its text in the turn.

    Args:
        max_uses: Most fetches per request.
        allowed_domains: Fetch only from these domains (not with ``blocked_domains``).
        blocked_domains: Never fetch from these domains.
        citations: Let the model cite passages of the fetched documents.
        max_content_tokens: Cut each fetched document at about this many tokens.
        version: The tool type to send, e.g. ``"web_fetch_20250910"``; default: the newest the SDK knows.

    Raises:
        AgentDefinitionError: a setting the API would refuse.
    """
    if allowed_domains is not None and blocked_domains is not None:
        raise AgentDefinitionError("web_fetch(): pass allowed_domains or blocked_domains, not both.")
    definition = _definition("web_fetch", version)
    _set_uses(definition, "web_fetch", max_uses)
    _set_domains(definition, "web_fetch", allowed_domains=allowed_domains, blocked_domains=blocked_domains)
    if citations:
        definition["citations"] = {"enabled": True}
    if max_content_tokens is not None:
        _check_positive(max_content_tokens, "web_fetch(max_content_tokens=...)")
        definition["max_content_tokens"] = max_content_tokens
    return definition


def code_execution(*, version: str | None = None) -> dict[str, Any]:
    """The code execution server tool: the model runs bash commands and edits files in a sandboxed container.

    The container outlives the request: typedagent passes its id back on the execution's next request, so
    later calls see the same files.

    Args:
        version: The tool type to send, e.g. ``"code_execution_20250825"``; default: the newest the SDK knows.
    """
    return _definition("code_execution", version)


def tool_search(kind: Literal["bm25", "regex"] = "bm25", *, version: str | None = None) -> dict[str, Any]:
    """The tool search server tool: the model finds the tools it needs among many deferred ones.

    Mark the helpers it should find with ``defer_loading`` (``HelperTool(definition={..., "defer_loading":
    True}, ...)``); the API loads the ones a search returns.

    Args:
        kind: ``"bm25"`` (natural-language queries) or ``"regex"`` (patterns).
        version: The tool type to send, e.g. ``"tool_search_tool_bm25_20251119"``; default: the newest the SDK
            knows.
    """
    if kind not in ("bm25", "regex"):
        raise AgentDefinitionError(f"tool_search(kind=...) must be 'bm25' or 'regex', got {kind!r}.")
    return _definition(f"tool_search_tool_{kind}", version)


def newest_version(tool: str) -> str:
    """The newest versioned ``type`` of ``tool`` (e.g. ``"web_search"``) in the installed SDK's tool definitions.

    Read from the ``type`` literals of ``anthropic.types.ToolUnionParam`` (the SDK is imported on the first call).

    Raises:
        AgentDefinitionError: the SDK knows no version of ``tool``.
    """
    versions = [kind for kind in _sdk_tool_types() if re.fullmatch(rf"{re.escape(tool)}_\d{{8}}", kind)]
    if not versions:
        raise AgentDefinitionError(f"the installed anthropic SDK knows no version of the {tool!r} tool.")
    return max(versions)


@functools.cache
def _sdk_tool_types() -> frozenset[str]:
    from anthropic.types import ToolUnionParam

    kinds: set[str] = set()
    for param in typing.get_args(ToolUnionParam):
        annotation = typing.get_type_hints(param).get("type")
        kinds.update(value for value in _literals(annotation) if isinstance(value, str))
    return frozenset(kinds)


def _literals(annotation: object) -> tuple[object, ...]:
    if typing.get_origin(annotation) is Literal:
        return typing.get_args(annotation)
    return tuple(value for arg in typing.get_args(annotation) for value in _literals(arg))


def _definition(tool: str, version: str | None) -> dict[str, Any]:
    if version is None:
        version = newest_version(tool)
    elif not (isinstance(version, str) and re.fullmatch(rf"{re.escape(tool)}_\d{{8}}", version)):
        raise AgentDefinitionError(
            f"{tool}(version=...) must be a {tool} tool type such as {newest_version(tool)!r}, got {version!r}."
        )
    return {"type": version, "name": tool}


def _set_uses(definition: dict[str, Any], tool: str, max_uses: int | None) -> None:
    if max_uses is not None:
        _check_positive(max_uses, f"{tool}(max_uses=...)")
        definition["max_uses"] = max_uses


def _set_domains(definition: dict[str, Any], tool: str, **domains: Sequence[str] | None) -> None:
    for key, value in domains.items():
        if value is None:
            continue
        if isinstance(value, str) or not all(isinstance(domain, str) and domain for domain in value):
            raise AgentDefinitionError(f"{tool}({key}=...) must be a list of domain names, got {value!r}.")
        definition[key] = list(value)


def _check_positive(value: object, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise AgentDefinitionError(f"{what} must be an int >= 1, got {value!r}.")

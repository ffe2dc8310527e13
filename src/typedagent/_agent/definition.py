"""``define_agent()`` and the immutable ``AgentDefinition`` it returns."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias, cast, overload

import pydantic
from typing_extensions import TypeVar

from .._shared.frozen import freeze, fresh_copy, thaw
from .._shared.generics import subscriptable
from .checks import check_caching, check_containers, check_fallback_options, check_fields, output_format_left_out
from .config import ValidationConfig
from .context import RunContext
from .delegation import DelegationTool, Prompt, Task, agent_tool
from .fallback import Alternative, FallbackPolicy, fallback_chain
from .output import OutputTool
from .processors import HistoryProcessor, checked_processors
from .remote import Toolset, connect_all
from .settings import ModelSettings, checked_settings
from .tools import Helper
from .toolset import agent_tools, connected_params, tool_params
from .validation import validator_takes_ctx

if TYPE_CHECKING:
    from anthropic.types import ToolParam

    from .server_tool_checks import ServerTool

__all__ = ["AgentDefinition", "Instructions", "PromptCaching", "ValidationConfig", "Validator", "define_agent"]

OutputT = TypeVar("OutputT")
DepsT = TypeVar("DepsT", default=None)
ParentT = TypeVar("ParentT")
InputT = TypeVar("InputT", bound=pydantic.BaseModel)

Validator: TypeAlias = (
    Callable[[OutputT], OutputT | Awaitable[OutputT | None] | None]
    | Callable[[OutputT, RunContext[DepsT]], OutputT | Awaitable[OutputT | None] | None]
)
"""A custom validator: rejects a candidate by raising ``OutputRejected``, keeps it by returning ``None``, or
replaces it by returning a value of the output type; may take the run context."""

Instructions: TypeAlias = str | Callable[[RunContext[DepsT]], str]
"""The system prompt, fixed or built from the run context."""

PromptCaching: TypeAlias = bool | Literal["5m", "1h"]
"""``define_agent(prompt_caching=...)``: ``False`` (off), ``True`` (the default: 5-minute cache entries; ``"5m"``
says the same) or ``"1h"`` (the tools and system prompt kept an hour, at twice the input price to write)."""


@subscriptable
@dataclass(frozen=True, kw_only=True, slots=True)
class AgentDefinition(Generic[OutputT, DepsT]):
    """An agent: model, instructions, helper tools, output tool and validators. Immutable.

    Build one with ``define_agent()``; run it with ``execute_agent()``.
    """

    name: str
    """Agent name (shown in callbacks, errors and logs)."""
    model: str
    """Anthropic model id."""
    output: OutputTool[OutputT]
    """The output: its type, and how the model hands it over (``output.mode``)."""
    instructions: Instructions[DepsT] | None
    """System prompt, fixed or built per run."""
    helpers: tuple[Helper[DepsT], ...]
    """Helper tools the model may call."""
    toolsets: tuple[Toolset, ...]
    """Toolsets given in ``helpers=`` (``typedagent.mcp.MCPToolset``): their tools are known once connected."""
    server_tools: tuple[Mapping[str, Any], ...]
    """Server tools the API runs for the model (web search, web fetch, code execution, …): read-only copies."""
    validators: tuple[Validator[OutputT, DepsT], ...]
    """Custom validators, run on every candidate that passed the schema."""
    validation: ValidationConfig
    """Attempt and iteration limits."""
    max_tokens: int
    """``max_tokens`` of each response."""
    model_settings: Mapping[str, Any]
    """Extra Messages API parameters passed through (thinking, metadata, stop_sequences, …): a deep,
    read-only copy (mappings are read-only views, lists are tuples)."""
    deps_type: type[DepsT] | None
    """Type of the run-time dependencies, or None."""
    prompt_caching: PromptCaching
    """Prompt caching: ``False`` (off), ``True`` or ``"5m"`` (tools and system prompt cached for every run of the
    agent, the conversation for each next call, 5-minute entries), or ``"1h"`` (tools and system prompt in 1-hour
    entries). See docs/caching.md."""
    max_tool_result_chars: int
    """Tool results longer than this are cut, with a visible marker."""
    history_processors: tuple[HistoryProcessor[DepsT], ...] = ()
    """Applied in order before every model call, each to the previous one's messages (on a copy)."""
    fallback: tuple[Alternative, ...] = ()
    """The models a call moves to, in order, when the one before fails (or refuses, with ``fallback_on_refusal``)."""
    fallback_on_refusal: bool = False
    """A refusal (``stop_reason == "refusal"``) moves the call to the next model of ``fallback`` too."""
    fallback_policy: FallbackPolicy = field(default_factory=FallbackPolicy)
    """What moves a call on, how long an execution stays on an alternative, and the circuit breakers' settings."""
    _tool_params: tuple[Mapping[str, Any], ...] = field(repr=False, compare=False)
    """Frozen (read-only views): each request sends a fresh thawed copy, which a client may change."""
    _helpers_by_name: Mapping[str, Helper[DepsT]] = field(repr=False, compare=False)
    _validator_takes_ctx: tuple[bool, ...] = field(repr=False, compare=False)
    _processor_takes_ctx: tuple[bool, ...] = field(default=(), repr=False, compare=False)

    @property
    def reflection_enabled(self) -> bool:
        """True when the output tool has a ``reflection_handler`` (and ``submit`` exists)."""
        return self.output.reflection_enabled

    def tool_params(self) -> list[ToolParam]:
        """The exact tool definitions sent to the API: helpers, server tools, output, and ``submit`` when reflecting.

        The output tool is there in ``"tool"`` mode only: in ``"native"`` and ``"prompted"`` modes the output is
        the text that ends the model's turn.

        A fresh copy: changing it does not change the agent. Typed as the custom tools most entries are; an
        Anthropic-defined tool or a server tool is there as its own definition (``type``, ``name``, settings).
        The tools of the agent's toolsets (MCP servers) are known once connected: ``async with agent.connected()
        as tools:`` gives the whole list, theirs included (after the helpers).
        """
        return cast("list[ToolParam]", fresh_copy(self._tool_params))

    def connected(self) -> AbstractAsyncContextManager[list[ToolParam]]:
        """Hold the agent's toolsets (MCP servers) connected for a block: ``async with agent.connected() as tools:``.

        Each toolset connects (or starts its server) when first needed and closes when no execution uses it any
        more; inside the block, every execution of this agent in this event loop reuses the connections, which
        close cleanly when the block ends. ``tools`` is the exact list of tool definitions a request would send
        now, the toolsets' tools included. Without toolsets the block holds nothing open.

        Raises:
            ConnectionError: a toolset could not be connected (the message says which, why and what to do).
            AgentDefinitionError: a toolset's tool is named like another tool of the agent.
        """
        return _connected(self)

    def helper(self, name: str) -> Helper[DepsT] | None:
        """The helper called ``name``, if any."""
        return self._helpers_by_name.get(name)

    def with_options(
        self,
        *,
        name: str | None = None,
        model: str | None = None,
        instructions: Instructions[DepsT] | None = None,
        max_tokens: int | None = None,
        model_settings: ModelSettings | None = None,
        validation: ValidationConfig | None = None,
        history_processors: Sequence[HistoryProcessor[DepsT]] | None = None,
        fallback: Sequence[str | Alternative] | None = None,
        fallback_on_refusal: bool | None = None,
        fallback_policy: FallbackPolicy | None = None,
    ) -> AgentDefinition[OutputT, DepsT]:
        """A copy of this agent with some options replaced, checked as ``define_agent`` checks a new one.

        An option left out (or ``None``) keeps this agent's value; ``model_settings`` replaces the settings
        as a whole (``{**agent.model_settings, "stop_sequences": ["END"]}`` adds one), and ``fallback`` the
        fallback chain (``fallback=[]`` drops it; a test gives the alternatives testing clients). The output tool,
        helpers, toolsets, server tools, validators and deps type stay, so the copy has this agent's type.

        Raises:
            AgentDefinitionError: the new combination is invalid (a thinking budget above a lower
                ``max_tokens``, an unknown setting, …).
        """
        build = cast("Callable[..., AgentDefinition[OutputT, DepsT]]", define_agent)
        return build(
            name=self.name if name is None else name,
            model=self.model if model is None else model,
            output=self.output,
            instructions=self.instructions if instructions is None else instructions,
            helpers=(*self.helpers, *self.toolsets),
            validators=self.validators,
            validation=self.validation if validation is None else validation,
            max_tokens=self.max_tokens if max_tokens is None else max_tokens,
            model_settings=thaw(self.model_settings) if model_settings is None else model_settings,
            deps_type=self.deps_type,
            prompt_caching=self.prompt_caching,
            max_tool_result_chars=self.max_tool_result_chars,
            server_tools=[thaw(tool) for tool in self.server_tools],
            history_processors=self.history_processors if history_processors is None else history_processors,
            fallback=self.fallback if fallback is None else fallback,
            fallback_on_refusal=self.fallback_on_refusal if fallback_on_refusal is None else fallback_on_refusal,
            fallback_policy=self.fallback_policy if fallback_policy is None else fallback_policy,
        )

    # Overloads: deps none, the parent's or a function of them; with input_type apart (it fixes InputT for pyright).
    @overload
    def as_tool(
        self: AgentDefinition[OutputT, None], *, name: str | None = None, description: str | None = None,
        prompt: Callable[[Task], Prompt] | None = None, deps: None = None, max_depth: int = 5,
    ) -> DelegationTool[object, Task]: ...  # fmt: skip
    @overload
    def as_tool(
        self, *, name: str | None = None, description: str | None = None,
        prompt: Callable[[Task], Prompt] | None = None, deps: None = None, max_depth: int = 5,
    ) -> DelegationTool[DepsT, Task]: ...  # fmt: skip
    @overload
    def as_tool(
        self, *, name: str | None = None, description: str | None = None,
        prompt: Callable[[Task], Prompt] | None = None, deps: Callable[[ParentT], DepsT], max_depth: int = 5,
    ) -> DelegationTool[ParentT, Task]: ...  # fmt: skip
    @overload
    def as_tool(
        self: AgentDefinition[OutputT, None], *, name: str | None = None, description: str | None = None,
        input_type: type[InputT], prompt: Callable[[InputT], Prompt] | None = None, deps: None = None,
        max_depth: int = 5,
    ) -> DelegationTool[object, InputT]: ...  # fmt: skip
    @overload
    def as_tool(
        self, *, name: str | None = None, description: str | None = None, input_type: type[InputT],
        prompt: Callable[[InputT], Prompt] | None = None, deps: None = None, max_depth: int = 5,
    ) -> DelegationTool[DepsT, InputT]: ...  # fmt: skip
    @overload
    def as_tool(
        self, *, name: str | None = None, description: str | None = None, input_type: type[InputT],
        prompt: Callable[[InputT], Prompt] | None = None, deps: Callable[[ParentT], DepsT], max_depth: int = 5,
    ) -> DelegationTool[ParentT, InputT]: ...  # fmt: skip
    def as_tool(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        input_type: type[pydantic.BaseModel] = Task,
        prompt: Callable[[Any], Prompt] | None = None,
        deps: Callable[[Any], Any] | None = None,
        max_depth: int = 5,
    ) -> DelegationTool[Any, Any]:
        """This agent as a helper tool of another: a call runs it as a sub-run, and its output is the call's result.

        It runs on the caller's client, abort event and remaining limits; its usage counts in the caller's metadata
        (``metadata.sub_executions``); a failure is a tool error for the calling model (docs/multi-agent.md).
        Inside another tool, ``await t(ctx, request)`` delegates too, with that tool's ``RunContext``.

        Args:
            name: The tool's name; default: this agent's name.
            description: What the calling model reads about the tool; default: says which agent it runs.
            input_type: The tool's input, a pydantic model; default: one field, ``task: str``.
            prompt: The sub-agent's prompt from the input; default: the ``task`` text, or the input as JSON.
            deps: The sub-agent's deps from the caller's; default: the caller's (None without a ``deps_type``).
            max_depth: Sub-runs nest at most this many levels below the top-level execution; a call past it is a
                tool error for the model that made it.

        Raises:
            AgentDefinitionError: an option is invalid (a tool name, a non-pydantic input type, ``max_depth``).
        """
        return agent_tool(
            self,
            name=name,
            description=description,
            input_type=input_type,
            prompt=prompt,
            deps=deps,
            max_depth=max_depth,
        )


@overload
def define_agent(
    *,
    name: str,
    model: str,
    output: OutputTool[OutputT],
    instructions: Instructions[None] | None = None,
    helpers: Sequence[Helper[None] | Toolset] = (),
    validators: Sequence[Validator[OutputT, None]] = (),
    validation: ValidationConfig | None = None,
    max_tokens: int = 4096,
    model_settings: ModelSettings | None = None,
    deps_type: None = None,
    prompt_caching: PromptCaching = True,
    max_tool_result_chars: int = 100_000,
    server_tools: Sequence[ServerTool] = (),
    history_processors: Sequence[HistoryProcessor[None]] = (),
    fallback: Sequence[str | Alternative] = (),
    fallback_on_refusal: bool = False,
    fallback_policy: FallbackPolicy | None = None,
) -> AgentDefinition[OutputT, None]: ...
@overload
def define_agent(
    *,
    name: str,
    model: str,
    output: OutputTool[OutputT],
    instructions: Instructions[DepsT] | None = None,
    helpers: Sequence[Helper[DepsT] | Toolset] = (),
    validators: Sequence[Validator[OutputT, DepsT]] = (),
    validation: ValidationConfig | None = None,
    max_tokens: int = 4096,
    model_settings: ModelSettings | None = None,
    deps_type: type[DepsT],
    prompt_caching: PromptCaching = True,
    max_tool_result_chars: int = 100_000,
    server_tools: Sequence[ServerTool] = (),
    history_processors: Sequence[HistoryProcessor[DepsT]] = (),
    fallback: Sequence[str | Alternative] = (),
    fallback_on_refusal: bool = False,
    fallback_policy: FallbackPolicy | None = None,
) -> AgentDefinition[OutputT, DepsT]: ...
def define_agent(
    *,
    name: str,
    model: str,
    output: OutputTool[OutputT],
    instructions: Instructions[Any] | None = None,
    helpers: Sequence[Helper[Any] | Toolset] = (),
    validators: Sequence[Validator[OutputT, Any]] = (),
    validation: ValidationConfig | None = None,
    max_tokens: int = 4096,
    model_settings: ModelSettings | None = None,
    deps_type: type[Any] | None = None,
    prompt_caching: PromptCaching = True,
    max_tool_result_chars: int = 100_000,
    server_tools: Sequence[ServerTool] = (),
    history_processors: Sequence[HistoryProcessor[Any]] = (),
    fallback: Sequence[str | Alternative] = (),
    fallback_on_refusal: bool = False,
    fallback_policy: FallbackPolicy | None = None,
) -> AgentDefinition[OutputT, Any]:
    """Define an agent once, in typed code.

    Args:
        name: Agent name (callbacks, errors, logs).
        model: Anthropic model id, e.g. ``"claude-sonnet-4-6"`` (or the platform's id with a Bedrock or Vertex
            client). A ``provider:`` prefix is refused; an id the installed SDK does not know is warned about.
        output: The output tool; ``OutputTool(Model)`` makes ``Model`` the result type.
        instructions: System prompt: a string, or a callable taking the ``RunContext``.
        helpers: Helper tools: ``@tool`` functions or ``HelperTool(definition=..., handler=...)``, and toolsets
            (``typedagent.mcp.MCPToolset``: an MCP server's tools).
        validators: Callables ``(output)`` or ``(output, ctx)``: raise ``OutputRejected``, or return a repair.
        validation: Attempt and iteration limits (``ValidationConfig()`` by default).
        max_tokens: ``max_tokens`` of each response.
        model_settings: Extra Messages API parameters (thinking, metadata, …), keys and values checked against
            the SDK's.
        deps_type: Type of the run-time dependencies passed as ``execute_agent(deps=...)``.
        prompt_caching: ``True`` (the default) caches the tools and system prompt for every run of the agent and
            the conversation for each next call, in 5-minute entries; ``"1h"`` keeps the tools and system prompt an
            hour (a write costs 2x the input price instead of 1.25x); ``False`` turns caching off (and sends the
            system prompt exactly as written: with caching on, a prompt a little under the model's minimum cacheable
            length is padded up to it, see docs/caching.md).
        max_tool_result_chars: Cap on each tool result's length.
        server_tools: Tools the API runs itself: ``typedagent.server_tools`` or ``{"type": ..., "name": ...}`` dicts.
        history_processors: Functions ``(messages)`` or ``(ctx, messages)``, sync or async, that return the messages
            to send instead, applied in order before every model call (``typedagent.history`` has built-ins).
        fallback: Models to move a call to, in order, when the one before fails (overloaded, 5xx, connection
            errors, long rate limits): model names on the same client, or ``Alternative(model, client=...)``.
        fallback_on_refusal: Move a refused call (``stop_reason == "refusal"``) to the next model too.
        fallback_policy: What moves a call on, how long to stay on an alternative, the circuit breakers.

    Returns:
        The immutable ``AgentDefinition[Output, Deps]``.

    Raises:
        AgentDefinitionError: anything invalid, with a message that says how to fix it.
    """
    check_fields(name, model, output, instructions, max_tokens, max_tool_result_chars)
    check_caching(prompt_caching)
    check_containers(helpers, validators, validation, model_settings)
    by_name, toolsets, servers = agent_tools(helpers, output, server_tools)
    processors, processor_takes_ctx = checked_processors(history_processors)
    settings = output_format_left_out(checked_settings(model_settings or {}, max_tokens), output)
    chain = fallback_chain(fallback, model, max_tokens, settings)
    check_fallback_options(chain, fallback_on_refusal, fallback_policy)
    return AgentDefinition(
        name=name,
        model=model,
        output=output,
        instructions=instructions,
        helpers=tuple(by_name.values()),
        toolsets=toolsets,
        server_tools=servers,
        validators=tuple(validators),
        validation=validation or ValidationConfig(),
        max_tokens=max_tokens,
        model_settings=freeze(settings),
        deps_type=deps_type,
        prompt_caching=prompt_caching,
        max_tool_result_chars=max_tool_result_chars,
        history_processors=processors,
        fallback=chain,
        fallback_on_refusal=fallback_on_refusal,
        fallback_policy=fallback_policy or FallbackPolicy(),
        _tool_params=tool_params(by_name.values(), output, servers),
        _helpers_by_name=MappingProxyType(by_name),
        _validator_takes_ctx=tuple(validator_takes_ctx(validator) for validator in validators),
        _processor_takes_ctx=processor_takes_ctx,
    )


@asynccontextmanager
async def _connected(agent: AgentDefinition[Any, Any]) -> AsyncGenerator[list[ToolParam]]:
    async with connect_all(agent.toolsets) as connections:
        yield cast("list[ToolParam]", connected_params(agent._tool_params, len(agent.helpers), connections))

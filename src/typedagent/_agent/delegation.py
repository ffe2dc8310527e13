"""An agent as a helper tool of another (``AgentDefinition.as_tool``): its input, its prompt, its result."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeAlias

import pydantic
import pydantic_core
from typing_extensions import TypeVar

from .._shared.errors import AgentDefinitionError, AgentError, AgentErrorCode
from .._shared.results import ExecuteFailure
from .calling import TOOL_NAME_RE, InvalidToolInput, format_validation_errors
from .context import RunContext
from .output import OutputTool
from .tools import Tool

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam

__all__ = [
    "MAX_DEPTH",
    "STOPPED_BY_PARENT",
    "Delegable",
    "DelegationTool",
    "SubAgentFailed",
    "SubRunStopped",
    "Task",
    "agent_tool",
]

D = TypeVar("D")
InputT = TypeVar("InputT", bound=pydantic.BaseModel)

MAX_DEPTH: Final = 20
"""The deepest ``max_depth`` accepted: deeper chains of agents are a design problem, not a use case."""

Prompt: TypeAlias = "str | Sequence[ContentBlockParam]"
"""What a delegation's ``prompt`` function returns: the sub-agent's prompt, as ``execute_agent`` takes it."""

DelegationTool: TypeAlias = Tool[D, [RunContext[D], InputT], Coroutine[Any, Any, str]]
"""What ``as_tool`` returns: a ``Tool`` whose input is ``InputT``; calling it as ``await t(ctx, request)`` from inside
another tool delegates too."""


class Delegable(Protocol):
    """What delegation reads of an agent (an ``AgentDefinition``, which imports this module)."""

    @property
    def name(self) -> str:
        """The agent's name."""
        ...

    @property
    def output(self) -> OutputTool[Any]:
        """The agent's output tool."""
        ...

    @property
    def deps_type(self) -> type[Any] | None:
        """The agent's deps type."""
        ...


class Task(pydantic.BaseModel):
    """The task to hand over."""

    task: str = pydantic.Field(description="The task, with everything the other agent needs to know to do it.")


STOPPED_BY_PARENT: Final = frozenset(
    {
        AgentErrorCode.TOKEN_BUDGET_EXCEEDED,
        AgentErrorCode.COST_LIMIT_EXCEEDED,
        AgentErrorCode.REQUEST_LIMIT_EXCEEDED,
        AgentErrorCode.TIMEOUT,
        AgentErrorCode.EXECUTION_CANCELLED,
    }
)
"""The failures of a sub-run that only the limits, deadline and abort event it shares with its parent cause."""


class SubRunStopped(Exception):
    """A sub-run a history processor started was stopped by the limits it shares with the execution.

    The execution ends with the same failure (``error``), not with ``HISTORY_PROCESSOR_ERROR``: the processor did
    nothing wrong.
    """

    def __init__(self, error: AgentError) -> None:
        super().__init__(error.message)
        self.error = error


class SubAgentFailed(Exception):
    """A sub-run ended with a failure; its message is what the delegating model reads."""


class _AgentTool(Tool[Any, ..., Any]):
    """A ``Tool`` whose input is a pydantic model (not a function's parameters): an agent made a tool.

    Built as a ``Tool`` of its delegating function (so it is a helper wherever one is), then given the input
    model's own schema: the model's input is the ``input_type`` object, validated with its own validators.
    """

    def __init__(self, fn: Callable[..., Any], *, name: str, description: str, input_type: type[Any]) -> None:
        super().__init__(fn, name=name, description=description)
        schema = input_type.model_json_schema()
        schema.pop("title", None)
        fields = {field: field for field in input_type.model_fields}
        self.__dict__.update(_input_model=input_type, _input_schema=schema, _fields=fields)

    async def invoke(self, tool_input: dict[str, Any], ctx: RunContext[Any]) -> object:
        """Validate the model's input as the input type, then run the sub-agent.

        Raises:
            InvalidToolInput: the input does not match; no sub-run started.
        """
        try:
            request = self._input_model.model_validate(tool_input)
        except pydantic.ValidationError as exc:
            raise InvalidToolInput(
                f"invalid input for tool {self.name!r}:\n{format_validation_errors(exc)}\n"
                "Fix the input and call the tool again."
            ) from None
        return await self.fn(ctx, request)


def agent_tool(
    agent: Delegable,
    *,
    name: str | None,
    description: str | None,
    input_type: type[pydantic.BaseModel],
    prompt: Callable[[Any], Prompt] | None,
    deps: Callable[[Any], Any] | None,
    max_depth: int,
) -> Tool[Any, ..., Any]:
    """``agent.as_tool(...)``: a helper tool that runs ``agent`` as a sub-run of the execution that calls it.

    Raises:
        AgentDefinitionError: an option is invalid; the message says how to fix it.
    """
    tool_name = _checked(agent, name, description, input_type, prompt, deps, max_depth)
    make_prompt = prompt if prompt is not None else _default_prompt
    output = agent.output

    async def delegate(ctx: RunContext[Any], request: pydantic.BaseModel) -> str:
        delegator = ctx._delegator
        if delegator is None:
            raise RuntimeError(
                f"tool {tool_name!r} runs the {agent.name!r} agent inside an execution: call it with the RunContext "
                "a helper tool of a running execution received."
            )
        sub_deps = deps(ctx.deps) if deps is not None else ctx.deps if agent.deps_type is not None else None
        result = await delegator.run_sub_agent(agent, make_prompt(request), sub_deps, max_depth=max_depth)
        if isinstance(result, ExecuteFailure):
            error = result.error
            raise SubAgentFailed(f"the {agent.name!r} agent failed ({error.code}): {error.message}")
        return pydantic_core.to_json(output.to_json(result.output)).decode()

    delegate.__annotations__["request"] = input_type
    delegate.__name__ = tool_name
    delegate.__qualname__ = f"{agent.name}.as_tool"
    text = description if description is not None else _default_description(agent)
    return _AgentTool(delegate, name=tool_name, description=text, input_type=input_type)


def _default_prompt(request: pydantic.BaseModel) -> str:
    """The sub-agent's prompt: the task's text for the default input type, the input as JSON for any other."""
    return request.task if isinstance(request, Task) else request.model_dump_json()


def _default_description(agent: Delegable) -> str:
    return (
        f"Hand a task over to the {agent.name!r} agent; it works on it alone and returns its result "
        f"({agent.output.type_name}) as JSON."
    )


def _checked(
    agent: Delegable,
    name: object,
    description: object,
    input_type: object,
    prompt: object,
    deps: object,
    max_depth: object,
) -> str:
    """The tool's name, once every option of ``as_tool`` is checked."""
    if name is None:
        if not TOOL_NAME_RE.fullmatch(agent.name):
            raise AgentDefinitionError(
                f"Agent {agent.name!r} cannot lend its name to a tool (1-64 characters from a-z, A-Z, 0-9, '_' and "
                "'-'): pass as_tool(name=...)."
            )
        name = agent.name
    elif not isinstance(name, str) or not TOOL_NAME_RE.fullmatch(name):
        raise AgentDefinitionError(
            f"as_tool(name={name!r}) is not a valid tool name: use 1-64 characters from a-z, A-Z, 0-9, '_' and '-'."
        )
    if description is not None and not isinstance(description, str):
        raise AgentDefinitionError(f"as_tool(description=...) must be a string, got {type(description).__name__}.")
    if not (isinstance(input_type, type) and issubclass(input_type, pydantic.BaseModel)):
        raise AgentDefinitionError(
            f"as_tool(input_type=...) must be a pydantic model class (the tool's input), got {input_type!r}."
        )
    for label, value in (("prompt", prompt), ("deps", deps)):
        if value is not None and not callable(value):
            raise AgentDefinitionError(f"as_tool({label}=...) must be a function, got {type(value).__name__}.")
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or not 1 <= max_depth <= MAX_DEPTH:
        raise AgentDefinitionError(f"as_tool(max_depth=...) must be an int from 1 to {MAX_DEPTH}, got {max_depth!r}.")
    return name

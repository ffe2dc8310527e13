"""Helper tools: the raw ``HelperTool`` form, the ``@tool`` decorator, and calling user code sync or async."""

from __future__ import annotations

import copy
import inspect
import types
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, Self, TypeAlias, overload

import pydantic
from typing_extensions import TypeVar

from .._shared.errors import AgentDefinitionError
from .calling import (
    InvalidToolInput,
    call_maybe_async,
    check_timeout,
    check_tool_name,
    copy_function_identity,
    format_validation_errors,
)
from .context import RunContext
from .json_schema import LeanJsonSchema
from .signature import build_input_model, method_owner, parse_docstring
from .tool_definitions import check_definition, strict_param

if TYPE_CHECKING:
    from anthropic.types import ToolParam, ToolUnionParam

__all__ = ["ApprovalCheck", "Helper", "HelperTool", "Tool", "check_approval", "check_external_timeout"]

P = ParamSpec("P")
R = TypeVar("R")
D = TypeVar("D")
DepsT_contra = TypeVar("DepsT_contra", contravariant=True)
P_bound = ParamSpec("P_bound")
R_bound = TypeVar("R_bound")

ApprovalCheck: TypeAlias = Callable[[RunContext[DepsT_contra], dict[str, Any]], bool | Awaitable[bool]]
"""``requires_approval=`` as a predicate: called with the run context and the call's validated arguments (a dict,
by parameter name), it says whether this call needs approval ("only when the path is outside the sandbox")."""


def check_approval(requires_approval: object, external: bool, name: str) -> None:
    """Reject a ``requires_approval`` that is neither a bool nor a predicate, or one on an external tool."""
    if not isinstance(requires_approval, bool) and not callable(requires_approval):
        raise AgentDefinitionError(
            f"Tool {name!r}: requires_approval must be True, False or a predicate (ctx, args) -> bool, "
            f"got {requires_approval!r}."
        )
    if external and requires_approval is not False:
        raise AgentDefinitionError(
            f"Tool {name!r} is external: its calls always wait for a result from outside, which is the decision "
            "itself. Drop requires_approval (or give the tool a handler)."
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class HelperTool:
    """A helper tool in raw form: an Anthropic tool definition and a handler for it.

    The handler receives the model's input (a ``dict``) as-is, may be sync (run in a worker thread)
    or async, and its return value becomes the tool result. With ``handler=None`` the tool is external: its
    result comes from outside the execution, which pauses at each call (``execute_agent(..., pausable=True)``).

    The definition is a custom tool (``name``, ``description``, ``input_schema``), or one of the tools
    Anthropic defines and your code carries out — memory, bash, the text editor — given by its ``type`` and
    ``name`` only (``{"type": "memory_20250818", "name": "memory"}``): the API knows its schema, and the
    handler receives the model's commands.
    """

    definition: ToolUnionParam
    """The tool definition sent to the API (``name``, ``description``, ``input_schema``, …), as given: a custom
    ``ToolParam``, or one of the SDK's typed dicts of the tools Anthropic defines (``MemoryTool20250818Param``, …)."""
    handler: Callable[[dict[str, Any]], object] | None
    """Called with the model's input; sync or async. None: an external tool, whose result comes from outside."""
    sequential: bool = False
    """Run the whole batch of helper calls one by one when this tool is among them."""
    timeout_s: float | None = None
    """A call still running after this many seconds becomes an error result."""
    strict: bool = False
    """Send the tool with Anthropic's ``strict: true``: the model's input always matches the schema (made
    strict-compatible by the SDK's ``transform_schema``). A definition that says ``"strict": True`` itself is sent
    as given, its schema included (a recursive type or a mapping in it is refused, as the API would)."""
    requires_approval: bool | ApprovalCheck[Any] = False
    """Each call waits for a person's decision (``Approve()`` / ``Deny(reason)``) before it runs: True, or a
    predicate ``(ctx, args) -> bool`` given the run context and the model's input, for some calls only."""

    def __post_init__(self) -> None:
        definition: object = self.definition
        if not isinstance(definition, Mapping):
            raise AgentDefinitionError(
                f"HelperTool.definition must be a tool definition dict, got {type(definition).__name__}."
            )
        name = definition.get("name")
        check_tool_name(name, "HelperTool")
        if self.handler is not None and not callable(self.handler):
            raise AgentDefinitionError(
                f"HelperTool {name!r}: handler must be callable (or None for an external tool, whose result comes "
                "from outside)."
            )
        check_approval(self.requires_approval, self.external, str(name))
        # Keep a private copy: editing the caller's dict later must not rename or reshape the tool.
        param = check_definition(dict(copy.deepcopy(definition)))
        if self.strict:
            param = strict_param(param)
        object.__setattr__(self, "definition", param)
        check_timeout(self.timeout_s, str(name))
        check_external_timeout(self.external, self.timeout_s, str(name))

    @property
    def name(self) -> str:
        """The tool's name."""
        return str(typing.cast("Mapping[str, Any]", self.definition)["name"])

    @property
    def external(self) -> bool:
        """True for a tool without a handler: its result comes from outside the execution."""
        return self.handler is None

    def approval_args(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        """The arguments a ``requires_approval`` predicate sees: the model's input (a copy)."""
        return copy.deepcopy(tool_input)

    def to_param(self) -> ToolParam:
        """The definition sent to the API (a fresh copy)."""
        return typing.cast("ToolParam", copy.deepcopy(self.definition))

    async def invoke(self, tool_input: dict[str, Any], ctx: RunContext[Any]) -> object:
        """Run the handler on the model's input."""
        del ctx
        assert self.handler is not None, "an external tool's result comes from outside, never from invoke()"
        return await call_maybe_async(self.handler, tool_input)


class Tool(Generic[DepsT_contra, P, R]):
    """A typed function made into a helper tool by ``@tool``. Immutable.

    Calling the object calls the function unchanged. The input schema comes from the signature
    (pydantic), the description from the docstring, and the model's input is validated before the
    function is called. On a method, read from an instance (``obj.method``) it is bound to that
    instance, like the method itself: ``self`` is not part of its schema. An external tool
    (``tool(fn, external=True)``) has a signature only: its result comes from outside the execution.
    """

    _fn: Callable[P, R]
    _name: str
    _description: str
    _sequential: bool
    _timeout_s: float | None
    _strict: bool
    _takes_ctx: bool
    _fields: Mapping[str, str]
    """Parameter name → the input model's field for it (they differ for names pydantic reserves)."""
    _input_model: type[pydantic.BaseModel]
    _input_schema: dict[str, Any]
    _owner: str | None
    _requires_approval: bool | ApprovalCheck[Any]
    _external: bool

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        sequential: bool = False,
        timeout_s: float | None = None,
        strict: bool = False,
        requires_approval: bool | ApprovalCheck[Any] = False,
        external: bool = False,
    ) -> None:
        if not callable(fn):
            raise AgentDefinitionError(f"@tool needs a function, got {fn!r}.")
        tool_name = check_tool_name(name if name is not None else getattr(fn, "__name__", None), "Tool")
        check_approval(requires_approval, bool(external), tool_name)
        check_external_timeout(bool(external), timeout_s, tool_name)
        summary, param_docs = parse_docstring(inspect.getdoc(fn) or "")
        owner = method_owner(fn)
        takes_ctx, fields, model = build_input_model(fn, tool_name, param_docs, skip_self=owner is not None)
        schema = model.model_json_schema(schema_generator=LeanJsonSchema)
        self.__dict__.update(
            _fn=fn,
            _name=tool_name,
            _description=description if description is not None else summary,
            _sequential=sequential,
            _timeout_s=check_timeout(timeout_s, tool_name),
            _strict=bool(strict),
            _takes_ctx=takes_ctx,
            _fields=fields,
            _input_model=model,
            _input_schema=schema,
            _owner=owner,
            _requires_approval=requires_approval,
            _external=bool(external),
        )
        copy_function_identity(self, fn)

    @property
    def fn(self) -> Callable[P, R]:
        """The decorated function (bound to its instance, for a method read from one)."""
        return self._fn

    @property
    def name(self) -> str:
        """The tool's name."""
        return self._name

    @property
    def description(self) -> str:
        """The description the model reads."""
        return self._description

    @property
    def sequential(self) -> bool:
        """Run the whole batch of helper calls one by one when this tool is among them."""
        return self._sequential

    @property
    def timeout_s(self) -> float | None:
        """A call still running after this many seconds becomes an error result."""
        return self._timeout_s

    @property
    def strict(self) -> bool:
        """Whether the tool is sent with ``strict: true`` (the model's input always matches the schema)."""
        return self._strict

    @property
    def takes_ctx(self) -> bool:
        """Whether the function's first parameter is the ``RunContext``."""
        return self._takes_ctx

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the parameters (a fresh copy)."""
        return copy.deepcopy(self._input_schema)

    @property
    def requires_approval(self) -> bool | ApprovalCheck[Any]:
        """Whether a call waits for a person's decision before it runs: a bool, or a predicate ``(ctx, args)``."""
        return self._requires_approval

    @property
    def external(self) -> bool:
        """True for a tool whose result comes from outside the execution (the function is never called)."""
        return self._external

    @property
    def unbound_method_of(self) -> str | None:
        """The class name, for a method read from its class (no instance to bind ``self`` to); else None."""
        return self._owner

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(
            f"Tool {self.name!r} is immutable: to change {name!r}, make a new tool with tool(fn, ...) instead."
        )

    def __delattr__(self, name: str) -> None:
        self.__setattr__(name, None)

    @overload
    def __get__(self, instance: None, owner: type[Any] | None = None) -> Self: ...
    @overload
    def __get__(
        self: Tool[D, Concatenate[Any, P_bound], R_bound], instance: object, owner: type[Any] | None = None
    ) -> Tool[D, P_bound, R_bound]: ...
    def __get__(self, instance: object, owner: type[Any] | None = None) -> Tool[Any, ..., Any]:
        if instance is None or self._owner is None:
            return self  # through the class, or a plain tool stored on a class: nothing to bind
        bound = copy.copy(self)  # fills the copy's __dict__ directly: immutability is not in the way
        bound.__dict__.update(_fn=types.MethodType(self._fn, instance), _owner=None)
        return bound

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r}, fn={getattr(self.fn, '__qualname__', self.fn)!r})"

    def to_param(self) -> ToolParam:
        """The definition sent to the API."""
        param: dict[str, Any] = {"name": self.name, "input_schema": self.input_schema}
        if self.description:
            param["description"] = self.description
        if self.strict:
            param = strict_param(param)
        return typing.cast("ToolParam", param)

    def approval_args(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        """The model's input validated against the signature: the arguments by parameter name.

        Raises:
            InvalidToolInput: the input does not match.
        """
        try:
            validated = self._input_model.model_validate(tool_input)
        except pydantic.ValidationError as exc:
            raise InvalidToolInput(
                f"invalid input for tool {self.name!r}:\n{format_validation_errors(exc)}\n"
                "Fix the input and call the tool again."
            ) from None
        return {param: getattr(validated, field) for param, field in self._fields.items()}

    async def invoke(self, tool_input: dict[str, Any], ctx: RunContext[Any]) -> object:
        """Validate the model's input against the signature, then call the function.

        Raises:
            InvalidToolInput: the input does not match; the function was not called.
        """
        kwargs = self.approval_args(tool_input)
        if self.takes_ctx:
            return await call_maybe_async(self.fn, ctx, **kwargs)
        return await call_maybe_async(self.fn, **kwargs)


Helper: TypeAlias = HelperTool | Tool[DepsT_contra, ..., Any]
"""Anything accepted in ``define_agent(helpers=[...])``."""


def check_external_timeout(external: bool, timeout_s: float | None, name: str) -> None:
    """Reject a ``timeout_s`` on an external tool: nothing of it runs here to time."""
    if external and timeout_s is not None:
        raise AgentDefinitionError(
            f"Tool {name!r} is external: its result comes from outside, so there is nothing to time out. Drop "
            "timeout_s, or bound the whole execution with ExecutionLimits(timeout_s=...)."
        )

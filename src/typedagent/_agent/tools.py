"""Helper tools: the raw ``HelperTool`` form, the ``@tool`` decorator, and calling user code sync or async."""

from __future__ import annotations

import copy
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, Protocol, Self, TypeAlias, overload

import pydantic
from typing_extensions import TypeVar

from .._shared.errors import AgentDefinitionError
from .._shared.numbers import is_finite_number
from .._shared.threads import call_maybe_async
from .context import RunContext
from .json_schema import LeanJsonSchema
from .signature import build_input_model, method_owner, parse_docstring
from .tool_definitions import check_definition, strict_param

if TYPE_CHECKING:
    from anthropic.types import ToolParam, ToolUnionParam

__all__ = ["Helper", "HelperTool", "Tool", "tool"]

P = ParamSpec("P")
R = TypeVar("R")
D = TypeVar("D")
DepsT_contra = TypeVar("DepsT_contra", contravariant=True)
P_co = ParamSpec("P_co")
R_co = TypeVar("R_co", covariant=True)
P_bound = ParamSpec("P_bound")
R_bound = TypeVar("R_bound")

TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class InvalidToolInput(Exception):
    """The model's input did not match a ``@tool`` function's signature (message is pydantic's detail)."""


def check_tool_name(name: object, what: str) -> str:
    """Return ``name`` if the API accepts it as a tool name, else raise ``AgentDefinitionError``."""
    if not isinstance(name, str) or not TOOL_NAME_RE.fullmatch(name):
        raise AgentDefinitionError(
            f"{what} name {name!r} is not a valid tool name: use 1-64 characters from a-z, A-Z, 0-9, '_' and '-'."
        )
    return name


@dataclass(frozen=True, kw_only=True, slots=True)
class HelperTool:
    """A helper tool in raw form: an Anthropic tool definition and a handler for it.

    The handler receives the model's input (a ``dict``) as-is, may be sync (run in a worker thread)
    or async, and its return value becomes the tool result.

    The definition is a custom tool (``name``, ``description``, ``input_schema``), or one of the tools
    Anthropic defines and your code carries out — memory, bash, the text editor — given by its ``type`` and
    ``name`` only (``{"type": "memory_20250818", "name": "memory"}``): the API knows its schema, and the
    handler receives the model's commands.
    """

    definition: ToolUnionParam
    """The tool definition sent to the API (``name``, ``description``, ``input_schema``, …), as given: a custom
    ``ToolParam``, or one of the SDK's typed dicts of the tools Anthropic defines (``MemoryTool20250818Param``, …)."""
    handler: Callable[[dict[str, Any]], object]
    """Called with the model's input; sync or async."""
    sequential: bool = False
    """Run the whole batch of helper calls one by one when this tool is among them."""
    timeout_s: float | None = None
    """A call still running after this many seconds becomes an error result."""
    strict: bool = False
    """Send the tool with Anthropic's ``strict: true``: the model's input always matches the schema (made
    strict-compatible by the SDK's ``transform_schema``). A definition that says ``"strict": True`` itself is sent
    as given, its schema included."""

    def __post_init__(self) -> None:
        definition: object = self.definition
        if not isinstance(definition, Mapping):
            raise AgentDefinitionError(
                f"HelperTool.definition must be a tool definition dict, got {type(definition).__name__}."
            )
        name = definition.get("name")
        check_tool_name(name, "HelperTool")
        if not callable(self.handler):
            raise AgentDefinitionError(f"HelperTool {name!r}: handler must be callable.")
        # Keep a private copy: editing the caller's dict later must not rename or reshape the tool.
        param = check_definition(dict(copy.deepcopy(definition)))
        if self.strict:
            param = strict_param(param)
        object.__setattr__(self, "definition", param)
        check_timeout(self.timeout_s, str(name))

    @property
    def name(self) -> str:
        """The tool's name."""
        return str(typing.cast("Mapping[str, Any]", self.definition)["name"])

    def to_param(self) -> ToolParam:
        """The definition sent to the API (a fresh copy)."""
        return typing.cast("ToolParam", copy.deepcopy(self.definition))

    async def invoke(self, tool_input: dict[str, Any], ctx: RunContext[Any]) -> object:
        """Run the handler on the model's input."""
        del ctx
        return await call_maybe_async(self.handler, tool_input)


class Tool(Generic[DepsT_contra, P, R]):
    """A typed function made into a helper tool by ``@tool``. Immutable.

    Calling the object calls the function unchanged. The input schema comes from the signature
    (pydantic), the description from the docstring, and the model's input is validated before the
    function is called. On a method, read from an instance (``obj.method``) it is bound to that
    instance, like the method itself: ``self`` is not part of its schema.
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

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        sequential: bool = False,
        timeout_s: float | None = None,
        strict: bool = False,
    ) -> None:
        if not callable(fn):
            raise AgentDefinitionError(f"@tool needs a function, got {fn!r}.")
        tool_name = check_tool_name(name if name is not None else getattr(fn, "__name__", None), "Tool")
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

    async def invoke(self, tool_input: dict[str, Any], ctx: RunContext[Any]) -> object:
        """Validate the model's input against the signature, then call the function.

        Raises:
            InvalidToolInput: the input does not match; the function was not called.
        """
        try:
            validated = self._input_model.model_validate(tool_input)
        except pydantic.ValidationError as exc:
            raise InvalidToolInput(
                f"invalid input for tool {self.name!r}:\n{format_validation_errors(exc)}\n"
                "Fix the input and call the tool again."
            ) from None
        kwargs = {param: getattr(validated, field) for param, field in self._fields.items()}
        if self.takes_ctx:
            return await call_maybe_async(self.fn, ctx, **kwargs)
        return await call_maybe_async(self.fn, **kwargs)


Helper: TypeAlias = HelperTool | Tool[DepsT_contra, ..., Any]
"""Anything accepted in ``define_agent(helpers=[...])``."""


class _ToolDecorator(Protocol):
    @overload
    def __call__(
        self, fn: Callable[Concatenate[RunContext[D], P_co], R_co], /
    ) -> Tool[D, Concatenate[RunContext[D], P_co], R_co]: ...
    @overload
    def __call__(self, fn: Callable[P_co, R_co], /) -> Tool[object, P_co, R_co]: ...


@overload
def tool(
    fn: Callable[Concatenate[RunContext[D], P], R],
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    sequential: bool = False,
    timeout_s: float | None = None,
    strict: bool = False,
) -> Tool[D, Concatenate[RunContext[D], P], R]: ...
@overload
def tool(
    fn: Callable[P, R],
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    sequential: bool = False,
    timeout_s: float | None = None,
    strict: bool = False,
) -> Tool[object, P, R]: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    sequential: bool = False,
    timeout_s: float | None = None,
    strict: bool = False,
) -> _ToolDecorator: ...
def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    sequential: bool = False,
    timeout_s: float | None = None,
    strict: bool = False,
) -> Tool[Any, ..., Any] | _ToolDecorator:
    """Make a typed function a helper tool: ``@tool``, ``@tool(name=...)`` or ``tool(fn, ...)``.

    The input schema comes from the signature (pydantic), the description from the docstring (its
    ``Args:`` section describes the parameters). An optional first parameter annotated
    ``RunContext[Deps]`` receives the run context and is not part of the schema.

    Args:
        fn: The function (sync or async).
        name: Tool name; defaults to the function's name.
        description: Tool description; defaults to the docstring's summary.
        sequential: When this tool is in a batch of helper calls, run the batch one by one.
        timeout_s: A call still running after this many seconds becomes an error result.
        strict: Send the tool with Anthropic's ``strict: true``, so the model's input always matches the schema.

    Raises:
        AgentDefinitionError: the name is invalid or the signature cannot be turned into a schema.
    """
    if fn is None:

        def decorate(f: Callable[..., Any]) -> Tool[Any, ..., Any]:
            return Tool(
                f, name=name, description=description, sequential=sequential, timeout_s=timeout_s, strict=strict
            )

        return typing.cast("_ToolDecorator", decorate)
    # Declared, so that pyright solves the deps parameter (it cannot from the function alone).
    made: Tool[Any, ..., Any] = Tool(
        fn, name=name, description=description, sequential=sequential, timeout_s=timeout_s, strict=strict
    )
    return made


def check_timeout(timeout_s: float | None, name: str) -> float | None:
    """Reject per-tool timeouts that are not finite positive numbers (NaN and infinity included)."""
    if timeout_s is not None and not (is_finite_number(timeout_s) and timeout_s > 0):
        raise AgentDefinitionError(
            f"Tool {name!r}: timeout_s must be a finite positive number of seconds (or None for no timeout), "
            f"got {timeout_s!r}."
        )
    return timeout_s


def copy_function_identity(wrapper: object, fn: object) -> None:
    """Copy the function's name and docs onto the ``Tool`` so it still looks like the function."""
    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        value = getattr(fn, attr, None)
        if value is not None:
            wrapper.__dict__[attr] = value


def format_validation_errors(exc: pydantic.ValidationError) -> str:
    """One ``- path: message`` line per pydantic error."""
    return "\n".join(f"- {line}" for line in validation_error_lines(exc))


def validation_error_lines(exc: pydantic.ValidationError) -> list[str]:
    """``path: message`` for each pydantic error (``(root)`` for whole-object errors)."""
    lines: list[str] = []
    for error in exc.errors(include_url=False):
        path = ".".join(str(part) for part in error["loc"]) or "(root)"
        lines.append(f"{path}: {error['msg']}")
    return lines

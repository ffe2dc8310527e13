"""The output tool (whose input is the agent's typed result) and the automatic ``submit`` tool."""

from __future__ import annotations

import copy
import inspect
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Final, Generic, cast, get_args, get_origin

import pydantic
from typing_extensions import TypeForm, TypeVar

from .._shared.errors import AgentDefinitionError
from .._shared.generics import subscriptable
from .json_schema import LeanJsonSchema
from .tools import check_tool_name

if TYPE_CHECKING:
    from anthropic.types import ToolParam

__all__ = ["SUBMIT_TOOL_NAME", "WRAPPER_KEY", "OutputTool", "preview_text", "submit_tool_param", "type_name"]

OutputT = TypeVar("OutputT")

SUBMIT_TOOL_NAME: Final = "submit"
SUBMIT_TOOL_DESCRIPTION: Final = (
    "Submit your final output for validation. Call this when you are satisfied with your output."
)


class _DefaultDescription(str):
    """The description ``OutputTool`` starts from when none is passed (a ``str`` a caller cannot pass by accident)."""

    __slots__ = ()


DEFAULT_OUTPUT_DESCRIPTION: Final[str] = _DefaultDescription(
    "Hand over the final output. Its input is the result of the task."
)
"""The output tool's description when none is passed and the output type has no docstring."""
WRAPPER_KEY: Final = "value"
"""The one property of the tool input that holds an output whose JSON schema is not an object."""


def submit_tool_param() -> ToolParam:
    """The automatically added ``submit`` tool (reflection mode only)."""
    return {
        "name": SUBMIT_TOOL_NAME,
        "description": SUBMIT_TOOL_DESCRIPTION,
        "input_schema": {"type": "object", "properties": {}},
    }


@subscriptable
@dataclass(frozen=True, slots=True)
class OutputTool(Generic[OutputT]):
    """The tool whose input *is* the agent's output; its JSON schema comes from ``schema``.

    Args:
        schema: The output type: a pydantic model, a dataclass, a ``TypedDict``, ``list[X]``, a scalar
            (``int``, ``str``, ``bool``, ``float``), a ``Literal[...]``, an enum, or a union of models with a
            discriminator (``Annotated[A | B, Field(discriminator="kind")]``): any type pydantic validates.
            A type whose JSON schema is not an object is wrapped for the tool input as ``{"value": ...}``
            (the API requires an object) and unwrapped for you.
        name: Tool name the model calls to hand over its output.
        description: Tool description the model reads. By default the output type's docstring (which then
            leaves the input schema, where pydantic put it: the model reads it once), else a generic sentence.
        reflection_handler: Turns on reflection mode: each output call is parsed and this handler's
            text (a preview of the candidate) goes back to the model, which refines by calling the
            output tool again and finishes by calling ``submit``. Sync or async.
        strict: Send the tool with Anthropic's ``strict: true`` (the schema is made strict-compatible
            by the SDK's ``transform_schema``).
    """

    schema: TypeForm[OutputT]
    _: KW_ONLY
    name: str = "final_output"
    description: str = DEFAULT_OUTPUT_DESCRIPTION
    reflection_handler: Callable[[OutputT], str | Awaitable[str]] | None = None
    strict: bool = False
    _adapter: pydantic.TypeAdapter[OutputT] = field(init=False, repr=False, compare=False)
    _wrapper: type[pydantic.BaseModel] | None = field(init=False, repr=False, compare=False)
    _input_schema: dict[str, Any] = field(init=False, repr=False, compare=False)
    """The tool input's JSON schema with every constraint (``strict`` tools send a transformed one)."""
    _param: ToolParam = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_tool_name(self.name, "OutputTool")
        adapter, schema = self._adapt()
        wrapper = None
        if inline_root(schema).get("type") == "object":
            schema = inline_root(schema)
        else:
            wrapper = pydantic.create_model(
                "OutputInput", __config__=pydantic.ConfigDict(extra="forbid"), value=(cast("Any", self.schema), ...)
            )
            schema = wrapper.model_json_schema(schema_generator=LeanJsonSchema)
        schema.pop("title", None)
        if self.reflection_handler is not None:
            self._check_reflection_handler(self.reflection_handler)
        object.__setattr__(self, "_input_schema", copy.deepcopy(schema))
        if isinstance(self.description, _DefaultDescription):
            docstring = schema.pop("description", None) if wrapper is None else None
            resolved = docstring if isinstance(docstring, str) and docstring else str(self.description)
            object.__setattr__(self, "description", resolved)
        param: dict[str, Any] = {"name": self.name, "description": self.description, "input_schema": schema}
        if self.strict:
            if is_recursive(schema):
                raise AgentDefinitionError(
                    f"OutputTool {self.name!r}: {self.type_name} is recursive, and strict tools cannot use "
                    "recursive schemas (the API refuses them): use strict=False, whose output is still validated."
                )
            from anthropic import transform_schema  # only strict tools pay for importing the SDK

            param["input_schema"] = transform_schema(schema)
            param["strict"] = True
        object.__setattr__(self, "_adapter", adapter)
        object.__setattr__(self, "_wrapper", wrapper)
        object.__setattr__(self, "_param", cast("ToolParam", param))

    def _adapt(self) -> tuple[pydantic.TypeAdapter[OutputT], dict[str, Any]]:
        form = cast("object", self.schema)
        if form is None or isinstance(form, str | int | float | Mapping | list | pydantic.TypeAdapter):
            raise AgentDefinitionError(
                f"OutputTool needs the output type itself as its schema, got {form!r}: declare `class "
                "Output(BaseModel): ...` and pass `OutputTool(Output)`, or a type such as `OutputTool(list[Item])`."
            )
        try:
            adapter = pydantic.TypeAdapter(self.schema)
            return adapter, adapter.json_schema(schema_generator=LeanJsonSchema)
        except Exception as exc:
            raise AgentDefinitionError(
                f"OutputTool {self.name!r}: {self.type_name} cannot produce a JSON schema, so the model cannot be "
                f"told its shape: {exc}"
            ) from exc

    def _check_reflection_handler(self, handler: object) -> None:
        if not callable(handler):
            raise AgentDefinitionError(f"OutputTool {self.name!r}: reflection_handler must be callable.")
        if self.name == SUBMIT_TOOL_NAME:
            raise AgentDefinitionError(
                f"OutputTool {self.name!r}: {SUBMIT_TOOL_NAME!r} is the tool reflection mode adds to end an attempt; "
                "give the output tool another name."
            )
        try:
            signature = inspect.signature(handler)
        except (TypeError, ValueError):
            return  # a builtin without a signature: it is called and its failure shown to the model
        try:
            signature.bind(self.schema)
        except TypeError:
            raise AgentDefinitionError(
                f"OutputTool {self.name!r}: reflection_handler must take one argument, the candidate "
                f"{self.type_name}, and return the preview text; "
                f"{getattr(handler, '__qualname__', handler)!r}{signature} cannot be called that way."
            ) from None

    @property
    def type_name(self) -> str:
        """The output type as it reads in messages: ``Triage``, ``list[Item]``, ``Literal['a', 'b']``."""
        return type_name(self.schema)

    @property
    def reflection_enabled(self) -> bool:
        """Whether output calls are previewed and ``submit`` ends the attempt."""
        return self.reflection_handler is not None

    @property
    def wrapped(self) -> bool:
        """Whether the tool input is ``{"value": <output>}``: the output type's JSON schema is not an object."""
        return self._wrapper is not None

    def to_param(self) -> ToolParam:
        """The definition sent to the API (a fresh copy)."""
        return copy.deepcopy(self._param)

    def parse(self, tool_input: Mapping[str, Any]) -> OutputT:
        """The typed output an output-tool input stands for: validated, and unwrapped from ``{"value": ...}``.

        Turns a raw candidate (``AgentError.last_output``, ``AttemptRecord.candidate``) back into the type.

        Raises:
            pydantic.ValidationError: the input does not match the output type; the error locations are the
                input's own (``value.0.name`` for a wrapped output).
        """
        if self._wrapper is None:
            return self._adapter.validate_python(tool_input)
        parsed: OutputT = getattr(self._wrapper.model_validate(tool_input), WRAPPER_KEY)
        return parsed

    def to_input(self, output: OutputT) -> dict[str, Any]:
        """The output-tool input the model would send for ``output`` (JSON-ready; wrapped when the type needs it)."""
        value = self._adapter.dump_python(output, mode="json")
        return {WRAPPER_KEY: value} if self._wrapper is not None else dict(value)

    def to_json(self, output: OutputT) -> Any:
        """The output as JSON-ready data, unwrapped: what journals and reports store."""
        return self._adapter.dump_python(output, mode="json")

    def from_json(self, data: object) -> OutputT:
        """The typed output that ``to_json`` data stands for.

        Raises:
            pydantic.ValidationError: the data does not fit the output type (it changed since it was stored).
        """
        return self._adapter.validate_python(data)

    def checked(self, value: object) -> OutputT:
        """``value`` as a value of the output type, if it is one: what a validator may return to replace the output.

        Checked by pydantic in strict mode, and the result must equal ``value``: a dict is not a model, ``"3"``
        is not an ``int``, a list of dicts is not a ``list[Item]``.

        Raises:
            ValueError: it is not (``pydantic.ValidationError`` is one).
        """
        checked = self._adapter.validate_python(value, strict=True)
        if checked != value:
            raise ValueError(f"{type(value).__name__} is not {self.type_name}")
        return checked


def type_name(form: object) -> str:
    """A type as it reads in a message: ``Triage``, ``list[Item]``, ``Literal['a', 'b']``."""
    if get_origin(form) is Annotated:
        return type_name(get_args(form)[0])
    if isinstance(form, type) and not getattr(form, "__args__", None):
        return form.__qualname__.rpartition("<locals>.")[2]  # a class defined in a function reads as its name
    return re.sub(r"\b(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_])", "", repr(form))


def preview_text(output_name: str, preview: object) -> tuple[str, str | None]:
    """The text a reflection handler's return value shows the model, and a warning when it is not a ``str``."""
    if isinstance(preview, str):
        return preview, None
    try:
        text = str(preview)
    except Exception:
        text = f"<{type(preview).__name__} object>"
    warning = (
        f"reflection_handler of output tool {output_name!r} returned {type(preview).__name__}, not str; "
        "its str() was shown to the model"
    )
    return text, warning


def inline_root(schema: dict[str, Any]) -> dict[str, Any]:
    """Make a root ``$ref`` into ``$defs`` (what pydantic emits for a recursive model) the object schema itself.

    The ``$defs`` stay, for the references inside it.
    """
    ref = schema.get("$ref")
    defs = schema.get("$defs")
    prefix = "#/$defs/"
    if not (isinstance(ref, str) and ref.startswith(prefix) and isinstance(defs, dict)):
        return schema
    root = dict(cast("dict[str, Any]", defs)[ref.removeprefix(prefix)])
    root["$defs"] = defs
    return root


def is_recursive(schema: dict[str, Any]) -> bool:
    """Whether a ``$defs`` entry refers back to itself, directly or through others."""
    defs: dict[str, Any] = schema.get("$defs", {})
    edges = {name: _refs(body) for name, body in defs.items()}

    def reaches(start: str, target: str, seen: set[str]) -> bool:
        for name in edges.get(start, ()):
            if name == target or (name not in seen and reaches(name, target, seen | {name})):
                return True
        return False

    return any(reaches(name, name, {name}) for name in edges)


def _refs(node: object) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in cast("dict[str, object]", node).items():
            if key == "$ref" and isinstance(value, str):
                found.add(value.rsplit("/", 1)[-1])
            else:
                found |= _refs(value)
    elif isinstance(node, list):
        for item in cast("list[object]", node):
            found |= _refs(item)
    return found

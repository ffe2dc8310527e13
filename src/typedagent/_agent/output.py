"""The output tool (whose input is the agent's typed result) and the automatic ``submit`` tool."""

from __future__ import annotations

import copy
import inspect
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Final, Generic, Literal, TypeAlias, cast, get_args, get_origin

import pydantic
from typing_extensions import TypeForm, TypeVar

from .._shared.errors import AgentDefinitionError
from .._shared.frozen import freeze
from .._shared.generics import subscriptable
from .calling import check_tool_name
from .json_schema import LeanJsonSchema
from .strict_schema import strict_schema

if TYPE_CHECKING:
    from anthropic.types import ToolParam

__all__ = [
    "OUTPUT_MODES",
    "SUBMIT_TOOL_NAME",
    "WRAPPER_KEY",
    "OutputMode",
    "OutputTool",
    "preview_text",
    "submit_tool_param",
    "type_name",
]

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

OutputMode: TypeAlias = Literal["tool", "native", "prompted"]
"""How the model hands over its output: an output tool's input, or JSON text held to the schema by the API
(``native``) or asked for in the system prompt (``prompted``)."""
OUTPUT_MODES: Final[tuple[OutputMode, ...]] = ("tool", "native", "prompted")


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
    """How the model hands over the agent's output, whose type (and JSON schema) is ``schema``.

    By default the output is the input of an output tool the model calls. ``mode`` picks another way: in
    ``"native"`` and ``"prompted"`` modes no output tool is offered, and the output is the JSON text of the response
    that ends the model's turn (``docs/outputs.md`` has a table of which mode to choose when). In every mode the
    output goes through the same validation, validators, feedback and attempts.

    Args:
        schema: The output type: a pydantic model, a dataclass, a ``TypedDict``, ``list[X]``, a scalar
            (``int``, ``str``, ``bool``, ``float``), a ``Literal[...]``, an enum, or a union of models with a
            discriminator (``Annotated[A | B, Field(discriminator="kind")]``): any type pydantic validates.
            A type whose JSON schema is not an object is wrapped for the tool input as ``{"value": ...}``
            (the API requires an object) and unwrapped for you.
        mode: ``"tool"`` (the default): the output is an output tool's input. ``"native"``: the output is the
            response's JSON text, held to the schema by the API itself (``output_config.format``, the schema made
            compatible by the SDK's ``transform_schema``); it works with extended thinking, where a tool cannot
            be forced. ``"prompted"``: the output is JSON read from the response's text (fenced, or with prose
            around it), its schema given in the system prompt; for platforms or models without structured outputs.
        name: Tool name the model calls to hand over its output (``"tool"`` mode).
        description: Tool description the model reads (``"tool"`` mode). By default the output type's docstring
            (which then leaves the input schema, where pydantic put it: the model reads it once), else a generic
            sentence.
        reflection_handler: Turns on reflection mode: each output (an output call, or in ``"native"`` and
            ``"prompted"`` modes a JSON answer) is parsed and this handler's text (a preview of the candidate) goes
            back to the model, which refines by handing over another output and finishes by calling ``submit``.
            Sync or async.
        strict: Send the output tool with Anthropic's ``strict: true`` (the schema is made strict-compatible
            by the SDK's ``transform_schema``); ``"tool"`` mode only.

    Raises:
        AgentDefinitionError: the type has no JSON schema, an option is invalid, or (``"native"`` mode, or
            ``strict=True``) the schema holds what the API's constrained decoding cannot express: a recursive type,
            a mapping (``dict[str, X]``), a field of type ``Any``.
    """

    schema: TypeForm[OutputT]
    _: KW_ONLY
    mode: OutputMode = "tool"
    name: str = "final_output"
    description: str = DEFAULT_OUTPUT_DESCRIPTION
    reflection_handler: Callable[[OutputT], str | Awaitable[str]] | None = None
    strict: bool = False
    _adapter: pydantic.TypeAdapter[OutputT] = field(init=False, repr=False, compare=False)
    _wrapper: type[pydantic.BaseModel] | None = field(init=False, repr=False, compare=False)
    _input_schema: dict[str, Any] = field(init=False, repr=False, compare=False)
    """The tool input's JSON schema with every constraint: a prompted answer's too (``strict`` tools and native
    output send a transformed one)."""
    _param: ToolParam = field(init=False, repr=False, compare=False)
    _format: Mapping[str, Any] | None = field(init=False, repr=False, compare=False)
    """``"native"`` mode: the ``output_config.format`` sent with each request (read-only)."""

    def __post_init__(self) -> None:
        self._check_mode()
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
            subject = f"OutputTool {self.name!r} (strict=True): {self.type_name}"
            advice = "Use strict=False (or mode='prompted', without strict): the output is validated all the same."
            param["input_schema"] = strict_schema(copy.deepcopy(schema), subject, advice)
            param["strict"] = True
        output_format = None
        if self.mode == "native":
            subject = f"OutputTool(mode='native'): {self.type_name}"
            advice = "Use mode='tool' (without strict) or mode='prompted': the output is validated all the same."
            # the schema with its docstring: no tool description carries it in this mode
            whole = copy.deepcopy(self._input_schema)
            output_format = {"type": "json_schema", "schema": strict_schema(whole, subject, advice)}
        object.__setattr__(self, "_format", None if output_format is None else freeze(output_format))
        object.__setattr__(self, "_adapter", adapter)
        object.__setattr__(self, "_wrapper", wrapper)
        object.__setattr__(self, "_param", cast("ToolParam", param))

    def _check_mode(self) -> None:
        mode = cast("object", self.mode)
        if mode not in OUTPUT_MODES:
            raise AgentDefinitionError(
                f"OutputTool mode must be 'tool', 'native' or 'prompted', got {mode!r}: 'tool' hands the output over "
                "as a tool call, 'native' as JSON text the API holds to the schema, 'prompted' as JSON text."
            )
        if self.strict and mode != "tool":
            raise AgentDefinitionError(
                f"OutputTool(mode={mode!r}) cannot be strict: strict=True sends the output tool with strict: true, and "
                f"mode={mode!r} offers no output tool. "
                + (
                    "Native output is held to the schema by the API already: drop strict=True."
                    if mode == "native"
                    else "For output the API holds to the schema, use mode='native'."
                )
            )

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
        """The output tool's definition sent to the API (a fresh copy).

        In ``"native"`` and ``"prompted"`` modes no output tool is sent: this is the definition ``"tool"`` mode would
        send, whose ``input_schema`` is the schema of the JSON answer.
        """
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

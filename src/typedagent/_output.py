"""The output tool (whose input is the agent's typed result) and the automatic ``submit`` tool."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any, Final, Generic, cast

import pydantic
from typing_extensions import TypeVar

from ._errors import AgentDefinitionError
from ._tools import check_tool_name

if TYPE_CHECKING:
    from anthropic.types import ToolParam

__all__ = ["SUBMIT_TOOL_NAME", "OutputTool", "preview_text", "submit_tool_param"]

OutputT = TypeVar("OutputT", bound=pydantic.BaseModel)

SUBMIT_TOOL_NAME: Final = "submit"
SUBMIT_TOOL_DESCRIPTION: Final = (
    "Submit your final output for validation. Call this when you are satisfied with your output."
)
DEFAULT_OUTPUT_DESCRIPTION: Final = "Hand over the final output. Its input is the result of the task."


def submit_tool_param() -> ToolParam:
    """The automatically added ``submit`` tool (reflection mode only)."""
    return {
        "name": SUBMIT_TOOL_NAME,
        "description": SUBMIT_TOOL_DESCRIPTION,
        "input_schema": {"type": "object", "properties": {}},
    }


@dataclass(frozen=True, slots=True)
class OutputTool(Generic[OutputT]):
    """The tool whose input *is* the agent's output; its JSON schema comes from ``schema``.

    Args:
        schema: The pydantic model class of the output.
        name: Tool name the model calls to hand over its output.
        description: Tool description the model reads.
        reflection_handler: Turns on reflection mode: each output call is parsed and this handler's
            text (a preview of the candidate) goes back to the model, which refines by calling the
            output tool again and finishes by calling ``submit``. Sync or async.
        strict: Send the tool with Anthropic's ``strict: true`` (the schema is made strict-compatible
            by the SDK's ``transform_schema``).
    """

    schema: type[OutputT]
    _: KW_ONLY
    name: str = "final_output"
    description: str = DEFAULT_OUTPUT_DESCRIPTION
    reflection_handler: Callable[[OutputT], str | Awaitable[str]] | None = None
    strict: bool = False
    _param: ToolParam = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not (isinstance(self.schema, type) and issubclass(self.schema, pydantic.BaseModel)):
            raise AgentDefinitionError(
                f"OutputTool needs a pydantic model class as its schema, got {self.schema!r}: "
                "declare `class Output(BaseModel): ...` and pass `OutputTool(Output)`."
            )
        check_tool_name(self.name, "OutputTool")
        if self.reflection_handler is not None:
            self._check_reflection_handler(self.reflection_handler)
        schema = self._input_schema()
        param: dict[str, Any] = {"name": self.name, "description": self.description, "input_schema": schema}
        if self.strict:
            if is_recursive(schema):
                raise AgentDefinitionError(
                    f"OutputTool {self.name!r}: {self.schema.__name__} is recursive, and strict tools cannot use "
                    "recursive schemas (the API refuses them): use strict=False, whose output is still validated."
                )
            from anthropic import transform_schema  # only strict tools pay for importing the SDK

            param["input_schema"] = transform_schema(schema)
            param["strict"] = True
        object.__setattr__(self, "_param", cast("ToolParam", param))

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
                f"{self.schema.__name__}, and return the preview text; "
                f"{getattr(handler, '__qualname__', handler)!r}{signature} cannot be called that way."
            ) from None

    def _input_schema(self) -> dict[str, Any]:
        try:
            schema = inline_root(self.schema.model_json_schema())
        except Exception as exc:
            raise AgentDefinitionError(
                f"OutputTool {self.name!r}: {self.schema.__name__} cannot produce a JSON schema: {exc}"
            ) from exc
        if schema.get("type") != "object":
            raise AgentDefinitionError(
                f"OutputTool {self.name!r}: {self.schema.__name__} must produce a JSON object schema "
                f"(got type {schema.get('type')!r}); wrap the value in a model with named fields."
            )
        schema.pop("title", None)
        return schema

    @property
    def reflection_enabled(self) -> bool:
        """Whether output calls are previewed and ``submit`` ends the attempt."""
        return self.reflection_handler is not None

    def to_param(self) -> ToolParam:
        """The definition sent to the API (a fresh copy)."""
        return copy.deepcopy(self._param)


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

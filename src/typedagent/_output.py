"""The output tool (whose input is the agent's typed result) and the automatic ``submit`` tool."""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any, Final, Generic, cast

import pydantic
from typing_extensions import TypeVar

from ._errors import AgentDefinitionError
from ._tools import check_tool_name

if TYPE_CHECKING:
    from anthropic.types import ToolParam

__all__ = ["SUBMIT_TOOL_NAME", "OutputTool", "submit_tool_param"]

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
        if self.reflection_handler is not None and not callable(self.reflection_handler):
            raise AgentDefinitionError(f"OutputTool {self.name!r}: reflection_handler must be callable.")
        try:
            schema: dict[str, Any] = self.schema.model_json_schema()
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
        param: dict[str, Any] = {"name": self.name, "description": self.description, "input_schema": schema}
        if self.strict:
            from anthropic import transform_schema  # only strict tools pay for importing the SDK

            param["input_schema"] = transform_schema(schema)
            param["strict"] = True
        object.__setattr__(self, "_param", cast("ToolParam", param))

    @property
    def reflection_enabled(self) -> bool:
        """Whether output calls are previewed and ``submit`` ends the attempt."""
        return self.reflection_handler is not None

    def to_param(self) -> ToolParam:
        """The definition sent to the API (a fresh copy)."""
        return copy.deepcopy(self._param)

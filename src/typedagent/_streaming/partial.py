"""Partial outputs: the output read while it streams, against an all-optional model of the output type.

The output is an output call's input (tool mode) or a JSON answer's text (native and prompted modes).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import TYPE_CHECKING, Annotated, Any, Generic, Union, cast, get_args, get_origin

import pydantic
from typing_extensions import TypeVar, is_typeddict

from .._run.json_text import complete_object, json_start
from .events import Partial

if TYPE_CHECKING:
    from .._agent.output import OutputTool

__all__ = ["PartialReader", "partial_model"]

OutputT = TypeVar("OutputT")

_BUILDING: set[object] = set()


class PartialReader(Generic[OutputT]):
    """Reads the output from the JSON streamed so far: what has arrived, and what of it is valid."""

    __slots__ = ("_dump", "_model", "_output")

    def __init__(self, output: OutputTool[OutputT]) -> None:
        self._output = output
        schema = cast("object", output.schema)
        self._model = None if output.wrapped else partial_model(schema)
        self._dump = is_typeddict(schema)
        """A ``TypedDict`` output's partial is a dict of the keys present, as its outputs are dicts."""

    def read(self, source: str) -> tuple[dict[str, Any], Partial[OutputT] | None]:
        """The input parsed so far (strings cut where the stream is) and the partial output it stands for."""
        from jiter import from_json

        try:
            raw: object = from_json(source.encode(), partial_mode="trailing-strings")
        except ValueError:
            return {}, None
        if not isinstance(raw, dict):
            return {}, None
        return self._interpret(cast("dict[str, Any]", raw))

    def read_text(self, text: str) -> tuple[dict[str, Any], Partial[OutputT] | None] | None:
        """A JSON answer's text so far (native, prompted): None until its JSON object starts.

        Prose or a Markdown fence before the object is skipped, and whatever follows it once it is complete.
        """
        start = json_start(text)
        if start is None:
            return None
        whole = complete_object(text, start)
        return self.read(text[start:]) if whole is None else self._interpret(whole)

    def _interpret(self, data: dict[str, Any]) -> tuple[dict[str, Any], Partial[OutputT] | None]:
        if self._model is None:
            whole = self._whole(data)
            return data, None if whole is None else Partial(value=whole)
        partial = _validate_present(self._model, data)
        if self._dump:
            return data, Partial(value=partial.model_dump(exclude_unset=True))
        return data, Partial(value=partial)

    def _whole(self, data: dict[str, Any]) -> OutputT | None:
        """An output that is not an object (``{"value": ...}``): shown once it validates as it stands."""
        try:
            return self._output.parse(data)
        except pydantic.ValidationError:
            return None


def _validate_present(model: type[pydantic.BaseModel], data: dict[str, Any]) -> pydantic.BaseModel:
    """``data`` validated by the partial model; the fields that do not validate (yet) are left out."""
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        invalid = {error["loc"][0] for error in exc.errors() if error["loc"]}
    # Every field is optional and extra keys are ignored, so what is left once the invalid fields are out validates.
    return model.model_validate({key: value for key, value in data.items() if key not in invalid})


def partial_model(form: object) -> type[pydantic.BaseModel] | None:
    """A pydantic model with the fields of ``form`` (a model, dataclass or ``TypedDict``), each optional.

    Nested models become partial too; constraints and validators are left out, so that a value still being
    written is shown when its type fits. None for any other type.
    """
    return _partial_class(form) if isinstance(form, type) and get_origin(form) is None else None


@functools.cache
def _partial_class(form: type[Any]) -> type[pydantic.BaseModel] | None:
    fields = _fields(form)
    if fields is None:
        return None
    _BUILDING.add(form)
    try:
        definitions: dict[str, Any] = {
            name: (_optional(_partial_type(annotation)), pydantic.Field(default=None, alias=alias))
            for name, (annotation, alias) in fields.items()
        }
    finally:
        _BUILDING.discard(form)
    name = f"Partial{getattr(form, '__name__', 'Output')}"
    config = pydantic.ConfigDict(populate_by_name=True, extra="ignore")
    return pydantic.create_model(name, __config__=config, **definitions)


def _fields(form: type[Any]) -> dict[str, tuple[Any, str | None]] | None:
    """Each field's annotation and the name it has in the JSON, for a model, a dataclass or a ``TypedDict``."""
    if issubclass(form, pydantic.BaseModel):
        return {name: (info.annotation, info.alias) for name, info in form.model_fields.items()}
    if dataclasses.is_dataclass(form) or is_typeddict(form):
        return {name: (hint, None) for name, hint in typing.get_type_hints(form).items() if not name.startswith("_")}
    return None


def _partial_type(annotation: Any) -> Any:
    if annotation in _BUILDING:
        return Any  # a recursive type: below the first level, its values are taken as they come
    origin = get_origin(annotation)
    if origin is Annotated:
        return _partial_type(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return Union[tuple(_partial_type(arg) for arg in get_args(annotation))]  # noqa: UP007
    if origin is list and get_args(annotation):
        return list[_partial_type(get_args(annotation)[0])]  # type: ignore[misc]
    nested = partial_model(annotation)
    return annotation if nested is None else nested


def _optional(annotation: Any) -> Any:
    return Union[annotation, None]  # noqa: UP007

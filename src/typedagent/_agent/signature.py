"""A function's signature and docstring as a tool: its input model, parameter descriptions and summary."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pydantic

from .._shared.errors import AgentDefinitionError
from .context import RunContext

__all__ = ["build_input_model", "is_run_context", "method_owner", "parse_docstring"]


def method_owner(fn: Callable[..., Any]) -> str | None:
    """The class whose body defines ``fn`` as a method (its first parameter is ``self``), else None."""
    parts = getattr(fn, "__qualname__", "").split(".")
    if len(parts) < 2 or parts[-2] == "<locals>":
        return None
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None
    return parts[-2] if params[:1] == ["self"] else None


def build_input_model(
    fn: Callable[..., Any], name: str, param_docs: Mapping[str, str], *, skip_self: bool = False
) -> tuple[bool, dict[str, str], type[pydantic.BaseModel]]:
    """Build the pydantic model of ``fn``'s parameters (minus ``self`` and a leading ``RunContext``).

    Returns whether ``fn`` takes the context, each parameter's field name in the model, and the model.
    """
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise AgentDefinitionError(f"Tool {name!r}: cannot resolve the type hints of its function: {exc}") from exc
    params = list(inspect.signature(fn).parameters.values())[1 if skip_self else 0 :]
    takes_ctx = bool(params) and is_run_context(hints.get(params[0].name))
    if takes_ctx:
        params = params[1:]
    fields: dict[str, Any] = {}
    names: dict[str, str] = {}
    for param in params:
        check_parameter(param, hints, name)
        annotation = hints.get(param.name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        field = field_name(param.name, names.values(), len(names))
        alias = param.name if field != param.name else None
        description = param_docs.get(param.name)
        fields[field] = (annotation, pydantic.Field(default, alias=alias, description=description))
        names[param.name] = field
    try:
        model = pydantic.create_model(f"{name}_input", **fields)
        model.model_json_schema()
    except Exception as exc:
        raise AgentDefinitionError(
            f"Tool {name!r}: its parameters cannot be turned into a JSON schema: {unschemable(hints, names, exc)}"
        ) from exc
    return takes_ctx, names, model


def check_parameter(param: inspect.Parameter, hints: Mapping[str, Any], name: str) -> None:
    """Reject a parameter the model cannot fill in by name."""
    if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
        raise AgentDefinitionError(
            f"Tool {name!r}: *args and **kwargs cannot be described to the model; use named parameters."
        )
    if param.kind is inspect.Parameter.POSITIONAL_ONLY:
        raise AgentDefinitionError(f"Tool {name!r}: parameter {param.name!r} is positional-only; make it a normal one.")
    if is_run_context(hints.get(param.name)):
        raise AgentDefinitionError(f"Tool {name!r}: RunContext must be the first parameter.")


def field_name(param: str, taken: Iterable[str], index: int) -> str:
    """The input model's field for ``param``: the name itself, unless pydantic reserves or shadows it.

    ``json``, ``schema``, ``model_*`` and ``_*`` clash with ``BaseModel``'s own names; such a parameter
    becomes a field under another name, with the parameter's name as its alias (what the model sends).
    """
    if not (hasattr(pydantic.BaseModel, param) or param.startswith(("model_", "_"))):
        return param
    field = f"param_{index}"
    while field in set(taken):
        field += "_"
    return field


def unschemable(hints: Mapping[str, Any], names: Mapping[str, str], exc: Exception) -> str:
    """Why the parameters have no JSON schema: the parameter whose type has none, and where such values belong."""
    for param in names:
        annotation = hints.get(param, Any)
        try:
            pydantic.TypeAdapter(annotation).json_schema()
        except Exception:
            type_name = getattr(annotation, "__qualname__", None) or repr(annotation)
            return (
                f"parameter {param!r} has type {type_name}, which the model cannot send as JSON. Parameters are "
                "what the model fills in; pass objects such as connections and clients as dependencies instead: "
                "declare define_agent(deps_type=...), pass execute_agent(..., deps=...), and take "
                "`ctx: RunContext[YourDeps]` as the tool's first parameter to use ctx.deps."
            )
    return str(exc)


def is_run_context(annotation: object) -> bool:
    """Whether an annotation is ``RunContext`` or ``RunContext[...]``."""
    return annotation is RunContext or typing.get_origin(annotation) is RunContext


_SECTION_RE = re.compile(r"^(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?|Notes?):\s*$")
_ARG_RE = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?:\s*(.*)$")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into the description and the ``Args:`` descriptions."""
    description: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    arg_indent = 0
    for line in doc.splitlines():
        stripped = line.strip()
        header = _SECTION_RE.match(stripped)
        if header and not line.startswith((" ", "\t")):
            section, current = header.group(1), None
            continue
        if section is None:
            description.append(line)
        elif section in ("Args", "Arguments", "Parameters") and stripped:
            arg = _ARG_RE.match(stripped)
            indent = len(line) - len(line.lstrip())
            if arg and (current is None or indent <= arg_indent):
                current, arg_indent = typing.cast("str", arg.group(1)).lstrip("*"), indent
                params[current] = arg.group(2).strip()
            elif current is not None:
                params[current] = f"{params[current]} {stripped}".strip()
    return "\n".join(description).strip(), params

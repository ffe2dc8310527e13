"""``AgentError`` as JSON, for pydantic: how a durable engine's data converter carries a failed result.

Importing this module gives ``AgentError`` its ``__get_pydantic_core_schema__`` and its ``__pydantic_serializer__``
(``results`` imports it, so every ``ExecuteFailure`` pydantic reads or writes has them). Its cause, an exception,
travels as its text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, cast, get_args

from .errors import AgentError, AgentErrorCode, ErrorContext

__all__ = ["agent_error_schema"]


def agent_error_schema(error_type: type[Any], code_type: type[Any], contexts: Sequence[type[Any]]) -> Any:
    """The pydantic core schema of ``AgentError``: the code, the message, the context, the last output, the cause.

    The cause, an exception, travels as its text and is read back as a ``RuntimeError`` carrying that text.
    """
    by_name = {context.__name__: context for context in contexts}
    by_fields = {frozenset(field.name for field in dataclasses.fields(context)): context for context in contexts}

    def to_json(error: Any) -> dict[str, Any]:
        cause = error.cause
        return {
            "code": error.code.value,
            "message": error.message,
            "context_type": type(error.context).__name__,
            "context": dataclasses.asdict(error.context),
            "last_output": error.last_output,
            "cause": None if cause is None else f"{type(cause).__name__}: {cause}",
        }

    def from_json(value: object) -> Any:
        if isinstance(value, error_type):
            return value
        if not isinstance(value, dict):
            raise ValueError(f"an AgentError is read from a JSON object, got {type(value).__name__}")
        data = cast("dict[str, Any]", value)
        fields = cast("dict[str, Any]", data["context"])
        # Written by this schema, the context names its class; written as a plain dataclass (pydantic's to_json
        # of a result, which Temporal's converter uses), its field names tell (each context has its own).
        context_type = by_name.get(data.get("context_type", "")) or by_fields[frozenset(fields)]
        cause = data.get("cause")
        return error_type(
            code=code_type(data["code"]),
            message=data["message"],
            context=context_type(**{key: _tuples(item) for key, item in fields.items()}),
            last_output=data.get("last_output"),
            cause=None if cause is None else RuntimeError(str(cause)),
        )

    from pydantic_core import core_schema

    return core_schema.no_info_plain_validator_function(
        from_json, serialization=core_schema.plain_serializer_function_ser_schema(to_json)
    )


def _tuples(value: object) -> object:
    """JSON arrays back to the tuples the contexts hold."""
    if isinstance(value, list):
        return tuple(_tuples(item) for item in cast("list[object]", value))
    return value


def _pydantic_schema(cls: type[Any], source: object, handler: object) -> Any:
    return agent_error_schema(cls, AgentErrorCode, get_args(ErrorContext))


def _serializer() -> Any:
    from pydantic_core import SchemaSerializer

    return SchemaSerializer(agent_error_schema(AgentError, AgentErrorCode, get_args(ErrorContext)))


# Class attributes set from here keep errors.py free of pydantic. The schema serves a TypeAdapter; the serializer
# serves pydantic_core.to_json without a schema (Temporal's pydantic converter writes a workflow's result that
# way), which would otherwise write an AgentError as a plain dataclass and fail on its cause, an exception.
setattr(AgentError, "__get_pydantic_core_schema__", classmethod(_pydantic_schema))  # noqa: B010
setattr(AgentError, "__pydantic_serializer__", _serializer())  # noqa: B010

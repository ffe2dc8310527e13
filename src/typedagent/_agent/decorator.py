"""``@tool``: a typed function made a helper tool, used bare, with options, or called on the function."""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, Protocol, overload

from typing_extensions import TypeVar

from .context import RunContext
from .tools import ApprovalCheck, Tool

__all__ = ["tool"]

P = ParamSpec("P")
R = TypeVar("R")
D = TypeVar("D")
P_co = ParamSpec("P_co")
R_co = TypeVar("R_co", covariant=True)


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
    requires_approval: bool | ApprovalCheck[D] = False,
    external: bool = False,
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
    requires_approval: bool | ApprovalCheck[Any] = False,
    external: bool = False,
) -> Tool[object, P, R]: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    sequential: bool = False,
    timeout_s: float | None = None,
    strict: bool = False,
    requires_approval: bool | ApprovalCheck[Any] = False,
    external: bool = False,
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
    requires_approval: bool | ApprovalCheck[Any] = False,
    external: bool = False,
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
        requires_approval: Each call waits for a person's ``Approve()`` or ``Deny(reason)`` before it runs: True,
            or a predicate ``(ctx, args) -> bool`` given the run context and the validated arguments by name.
        external: The function is a signature only: each call's result comes from outside the execution
            (``ExternalResult``), which pauses for it (``execute_agent(..., pausable=True)``).

    Raises:
        AgentDefinitionError: the name is invalid or the signature cannot be turned into a schema.
    """
    options: dict[str, Any] = {
        "name": name,
        "description": description,
        "sequential": sequential,
        "timeout_s": timeout_s,
        "strict": strict,
        "requires_approval": requires_approval,
        "external": external,
    }
    if fn is None:

        def decorate(f: Callable[..., Any]) -> Tool[Any, ..., Any]:
            return Tool(f, **options)

        return typing.cast("_ToolDecorator", decorate)
    # Declared, so that pyright solves the deps parameter (it cannot from the function alone).
    made: Tool[Any, ..., Any] = Tool(fn, **options)
    return made

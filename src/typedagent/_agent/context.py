"""The run context handed to tools, validators and dynamic instructions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic

from typing_extensions import TypeVar

from .._shared.generics import subscriptable
from .._shared.results import TokenUsage

__all__ = ["RunContext"]

DepsT_co = TypeVar("DepsT_co", covariant=True, default=None)


@subscriptable
@dataclass(frozen=True, kw_only=True, slots=True)
class RunContext(Generic[DepsT_co]):
    """What a tool, validator or instructions callable can see of the running execution.

    Declare it as the first parameter of a ``@tool`` function (``ctx: RunContext[Db]``) or the second
    parameter of a validator to receive it.
    """

    deps: DepsT_co
    """The ``deps`` passed to ``execute_agent``."""
    agent_name: str
    """Name of the running agent."""
    model: str
    """Model the agent runs on."""
    attempt: int
    """Current attempt (1-based)."""
    iteration: int
    """Current iteration within the attempt (0 before the first API call)."""
    tokens: TokenUsage
    """Tokens used so far in this execution."""

"""The inputs of ``execute_many``: ``RunInput``, their keys, and reading them one at a time."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any, Generic, cast

import pydantic_core
from typing_extensions import TypeVar

from .._agent.definition import AgentDefinition
from .._shared.generics import subscriptable

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam

__all__ = ["Input", "RunInput", "Source", "derived_key", "fingerprint", "prepare"]

DepsT = TypeVar("DepsT", default=None)


@subscriptable
@dataclass(frozen=True, slots=True)
class RunInput(Generic[DepsT]):
    """One input of ``execute_many``: a prompt, its run-time deps, and the key that identifies it.

    Example:
        ``RunInput("Ticket 17: VPN drops", deps=Account(id=17), key="ticket-17")``
    """

    prompt: str | Sequence[ContentBlockParam]
    """The user's input: a string or a list of content blocks."""
    _: KW_ONLY
    deps: DepsT = None  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]
    """Run-time dependencies (required when the agent declares ``deps_type``)."""
    key: str | None = None
    """Identifies the input in results and in the journal; derived from the position when omitted."""

    def __post_init__(self) -> None:
        if self.key is not None and (not isinstance(self.key, str) or not self.key):
            raise TypeError(f"RunInput.key must be a non-empty str or None, got {self.key!r}.")


@dataclass(frozen=True, slots=True)
class Input:
    index: int
    key: str
    derived: bool
    prompt: str | Sequence[ContentBlockParam]
    deps: Any


def derived_key(index: int) -> str:
    """The key of an input given without one: its position, as ``#<index>``."""
    return f"#{index}"


def fingerprint(prompt: object, deps: object) -> str:
    """A short hash of an input (its prompt, and its deps when they serialise to JSON), to spot changed inputs."""
    digest = hashlib.sha256(json.dumps(prompt, sort_keys=True, default=str).encode())
    # Deps like a database pool do not serialise: the prompt alone identifies such an input.
    with contextlib.suppress(pydantic_core.PydanticSerializationError):
        digest.update(pydantic_core.to_json(deps))
    return digest.hexdigest()[:16]


def prepare(item: object, index: int, agent: AgentDefinition[Any, Any]) -> Input:
    prompt: object
    if isinstance(item, RunInput):
        run_input = cast("RunInput[Any]", item)  # type: ignore[redundant-cast]  # pyright leaves it partly Unknown
        prompt, deps, key = run_input.prompt, run_input.deps, run_input.key
    else:
        prompt, deps, key = item, None, None
    where = f"input {index}" if key is None else f"input {index} (key {key!r})"
    kind = type(prompt).__name__
    if not isinstance(prompt, str) and not (
        isinstance(prompt, Sequence) and all(isinstance(block, dict) for block in cast("Sequence[object]", prompt))
    ):
        raise TypeError(
            f"{where} is a {kind}: each input must be a prompt (a str or a list of content blocks) or a RunInput."
        )
    if not (prompt.strip() if isinstance(prompt, str) else prompt):
        raise TypeError(f"{where} has an empty prompt: give the model something to work on, or leave it out.")
    if agent.deps_type is not None and deps is None:
        raise TypeError(
            f"{where} has no deps, but agent {agent.name!r} declares deps_type={agent.deps_type.__name__}: "
            "pass RunInput(prompt, deps=...)."
        )
    text = cast("str | Sequence[ContentBlockParam]", prompt)
    if key is None:
        return Input(index, derived_key(index), True, text, deps)
    return Input(index, key, False, text, deps)


class Source:
    """Reads the inputs one at a time, only when there is room for another execution."""

    def __init__(self, inputs: Iterable[Any] | AsyncIterable[Any]) -> None:
        self.sync: Iterator[Any] | None = None
        self.aiter: AsyncIterator[Any] | None = None
        if isinstance(inputs, AsyncIterable):
            self.aiter = aiter(inputs)
        else:
            self.sync = iter(inputs)
        self.index = 0

    async def next(self) -> tuple[int, object] | None:
        """The next item and its index, or None at the end."""
        try:
            if self.sync is not None:
                item = next(self.sync)
            else:
                assert self.aiter is not None
                item = await anext(self.aiter)
        except (StopIteration, StopAsyncIteration):
            return None
        index, self.index = self.index, self.index + 1
        return index, item

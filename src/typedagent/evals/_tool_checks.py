"""Evaluators of tool use, read from the run's conversation: called, not called, called with, order, count."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._compare import differences, plain
from ._score import EvalContext, Score

__all__ = ["ToolCalled", "ToolCalledWith", "ToolCount", "ToolNotCalled", "ToolOrder"]


def _names(context: EvalContext[Any]) -> list[str]:
    return [use.name for use in context.tool_uses]


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCalled:
    """The model called the tool ``tool`` at least once."""

    tool: str
    """The tool's name."""

    @property
    def name(self) -> str:
        """``ToolCalled(tool)``."""
        return f"ToolCalled({self.tool})"

    def evaluate(self, context: EvalContext[Any], /) -> Score:
        """Look for a call."""
        names = _names(context)
        count = names.count(self.tool)
        return Score.check(self.name, count > 0, f"called {count} time(s); tools called: {names or 'none'}")


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolNotCalled:
    """The model never called the tool ``tool``."""

    tool: str
    """The tool's name."""

    @property
    def name(self) -> str:
        """``ToolNotCalled(tool)``."""
        return f"ToolNotCalled({self.tool})"

    def evaluate(self, context: EvalContext[Any], /) -> Score:
        """Look for a call."""
        count = _names(context).count(self.tool)
        return Score.check(self.name, count == 0, f"called {count} time(s)")


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCalledWith:
    """Some call of ``tool`` had these arguments (others may be there too; numbers within ``tolerance``)."""

    tool: str
    """The tool's name."""
    arguments: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Arguments the call must have, with these values."""
    tolerance: float = 0.0
    """Largest absolute difference of two numbers that still counts as equal."""

    @property
    def name(self) -> str:
        """``ToolCalledWith(tool)``."""
        return f"ToolCalledWith({self.tool})"

    def evaluate(self, context: EvalContext[Any], /) -> Score:
        """Compare every call of the tool with the arguments."""
        calls = [use for use in context.tool_uses if use.name == self.tool]
        if not calls:
            return Score.check(self.name, False, f"{self.tool!r} was never called")
        wanted = plain(self.arguments)
        closest: list[str] = []
        for use in calls:
            problems = differences(wanted, plain(use.input), tolerance=self.tolerance)
            if not problems:
                return Score.check(self.name, True, f"called with {dict(self.arguments)!r}")
            if not closest or len(problems) < len(closest):
                closest = problems
        return Score.check(self.name, False, f"no call of {self.tool!r} matches: {'; '.join(closest)}")


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolOrder:
    """The tools were called in this order (other calls may come between them)."""

    tools: tuple[str, ...]
    """Tool names, in the order they must first appear."""

    @property
    def name(self) -> str:
        """``ToolOrder(a > b > …)``."""
        return f"ToolOrder({' > '.join(self.tools)})"

    def evaluate(self, context: EvalContext[Any], /) -> Score:
        """Find the tools as a subsequence of the calls."""
        names = _names(context)
        position = 0
        for tool in self.tools:
            try:
                position = names.index(tool, position) + 1
            except ValueError:
                return Score.check(self.name, False, f"no call of {tool!r} after the ones before it; calls: {names}")
        return Score.check(self.name, True, f"calls: {names}")


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCount:
    """The number of calls of ``tool`` (of every tool when it is empty) lies between ``min`` and ``max``."""

    tool: str = ""
    """The tool's name; empty counts every tool call (the output tool's included)."""
    min: int = 0
    """Fewest calls."""
    max: int | None = None
    """Most calls (None: no limit)."""

    @property
    def name(self) -> str:
        """``ToolCount(tool)``."""
        return f"ToolCount({self.tool or 'all'})"

    def evaluate(self, context: EvalContext[Any], /) -> Score:
        """Count the calls."""
        names = _names(context)
        count = names.count(self.tool) if self.tool else len(names)
        ok = count >= self.min and (self.max is None or count <= self.max)
        limit = f"{self.min}..{'' if self.max is None else self.max}"
        return Score.check(self.name, ok, f"{count} call(s), expected {limit}")

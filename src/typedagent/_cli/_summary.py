"""The figures shown after a run (``Summary``), and the plain JSON of event fields (``to_json``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, cast

import pydantic_core

from .._shared.results import ExecutionMetadata, TokenUsage

__all__ = ["Summary", "duration", "plural", "to_json", "usd"]


def to_json(value: object) -> Any:
    """Plain JSON data for events: dataclasses, pydantic models and tokens (with their total)."""
    if isinstance(value, TokenUsage):
        return {**pydantic_core.to_jsonable_python(value), "total": value.total}
    return pydantic_core.to_jsonable_python(value, fallback=str)


@dataclass(frozen=True, slots=True)
class Summary:
    """The figures shown after a run: attempts, iterations, tool calls, tokens, time, estimated cost."""

    attempts: int
    iterations: int
    tool_calls: Counter[str]
    tokens: TokenUsage
    latency_ms: float
    cost_usd: float | None = None
    cache_savings_usd: float | None = None

    @classmethod
    def of(cls, metadata: ExecutionMetadata) -> Summary:
        """Count from the metadata; tool calls are the ``tool_use`` blocks of the conversation."""
        calls: Counter[str] = Counter()
        for message in cast("list[dict[str, Any]]", metadata.messages):
            content = message["content"]
            if message["role"] == "assistant" and not isinstance(content, str):
                calls.update(block["name"] for block in content if block["type"] in _CALL_BLOCKS)
        return cls(
            len(metadata.attempts),
            metadata.iterations,
            calls,
            metadata.tokens,
            metadata.latency_ms,
            metadata.cost_usd,
            metadata.cache_savings_usd,
        )

    def counts(self) -> str:
        """``1 attempt · 5 iterations · 6 tool calls (search_kb, read_article x2, …) · 12 ms``."""
        total = sum(self.tool_calls.values())
        names = ", ".join(name if n == 1 else f"{name} x{n}" for name, n in self.tool_calls.items())
        return (
            f"{plural(self.attempts, 'attempt')} · {plural(self.iterations, 'iteration')} · "
            f"{plural(total, 'tool call')}{f' ({names})' if names else ''} · {duration(self.latency_ms)}"
        )

    def token_line(self) -> str:
        """``3,410 tokens (input 2,078 · output 452 · cache write 920 · cache read 3,680)``."""
        t = self.tokens
        requests = "".join(
            f" · {count:,} {noun if count == 1 else plural}"
            for count, noun, plural in (
                (t.web_search_requests, "web search", "web searches"),
                (t.web_fetch_requests, "web fetch", "web fetches"),
            )
            if count
        )
        return (
            f"{t.total:,} tokens (input {t.input_tokens:,} · output {t.output_tokens:,} · "
            f"cache write {t.cache_creation_input_tokens:,} · cache read {t.cache_read_input_tokens:,}){requests}"
        )

    def cost_line(self) -> str | None:
        """``est. cost $0.0123 · prompt cache saved $0.0045``; None when the model has no known price.

        The cache's effect is left out when nothing was read from or written to the cache.
        """
        if self.cost_usd is None:
            return None
        if not (self.tokens.cache_read_input_tokens or self.tokens.cache_creation_input_tokens):
            return f"est. cost {usd(self.cost_usd)}"
        saved = self.cache_savings_usd or 0.0
        effect = f"prompt cache saved {usd(saved)}" if saved >= 0 else f"prompt cache cost {usd(-saved)} more"
        return f"est. cost {usd(self.cost_usd)} · {effect}"

    def as_json(self) -> dict[str, Any]:
        """The same figures for ``--json-events``."""
        return {
            "attempts": self.attempts,
            "iterations": self.iterations,
            "tool_calls": dict(self.tool_calls),
            "tokens": to_json(self.tokens),
            "latency_ms": round(self.latency_ms, 3),
            "cost_usd": self.cost_usd,
            "cache_savings_usd": self.cache_savings_usd,
        }


_CALL_BLOCKS = ("tool_use", "server_tool_use", "mcp_tool_use")


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def duration(ms: float) -> str:
    return f"{ms:.1f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def usd(amount: float) -> str:
    """Dollars, with four decimals below a dollar (cents would hide what a small run costs)."""
    return f"${amount:,.2f}" if amount >= 1 else f"${amount:.4f}"

"""What ``typedagent batch`` shows: a live progress bar (rich, on a terminal) or plain lines, then a summary."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final, TextIO

from .._many.many import ManyResult
from .._shared.results import ExecuteFailure, TokenUsage

__all__ = ["BatchStats", "BatchView", "make_view"]

PLAIN_EVERY_S: Final = 10.0
"""How often plain progress lines are written when stderr is not a terminal."""


@dataclass(slots=True)
class BatchStats:
    """Counts of one batch run, updated as results arrive."""

    total: int | None
    """Inputs in the file (None when unknown)."""
    started: float = field(default_factory=time.monotonic)
    executed: int = 0
    """Finished in this run."""
    resumed: int = 0
    """Read back from the results file (finished in an earlier run)."""
    interrupted: int = 0
    """Stopped by Ctrl-C before finishing; they run again on resume."""
    failures: Counter[str] = field(default_factory=Counter)
    """Failed inputs (this run and earlier ones) by error code."""
    examples: dict[str, str] = field(default_factory=dict)
    """The first failed key of each error code."""
    tokens: TokenUsage = field(default_factory=TokenUsage)
    """Tokens of the executions of this run."""
    cost_usd: float | None = 0.0
    """Cost of this run's executions; None once one of them has no price."""

    def add(self, item: ManyResult[Any]) -> None:
        """Count one result."""
        result = item.result
        if isinstance(result, ExecuteFailure) and result.error.code == "EXECUTION_CANCELLED" and not item.resumed:
            self.interrupted += 1
            return
        if item.resumed:
            self.resumed += 1
        else:
            self.executed += 1
            self.tokens += result.metadata.tokens
            cost = getattr(result.metadata, "cost_usd", None)
            self.cost_usd = None if cost is None or self.cost_usd is None else self.cost_usd + cost
        if isinstance(result, ExecuteFailure):
            code = str(result.error.code)
            self.failures[code] += 1
            self.examples.setdefault(code, item.key)

    @property
    def done(self) -> int:
        """Inputs with a final result: this run's and resumed ones."""
        return self.executed + self.resumed

    @property
    def failed(self) -> int:
        """Inputs whose result is a failure."""
        return sum(self.failures.values())

    def rate(self) -> float:
        """Executions per second in this run."""
        elapsed = time.monotonic() - self.started
        return self.executed / elapsed if elapsed > 0 else 0.0

    def eta_s(self) -> float | None:
        """Seconds left at the current rate, when the total is known."""
        rate = self.rate()
        if self.total is None or rate <= 0:
            return None
        return max(0, self.total - self.done) / rate

    def cost_text(self) -> str:
        """``$1.23``, or ``n/a`` when no price is known for the model."""
        if self.cost_usd is None:
            return "n/a"
        # Cents hide what a small run costs: show four decimals below a dollar.
        return f"${self.cost_usd:,.2f}" if self.cost_usd >= 1 or self.cost_usd == 0 else f"${self.cost_usd:.4f}"

    def line(self) -> str:
        """The figures as one plain line."""
        total = f"/{self.total:,}" if self.total is not None else ""
        eta = self.eta_s()
        return (
            f"{self.done:,}{total} done · {self.failed:,} failed · {self.rate():.1f}/s · "
            f"{self.tokens.total:,} tokens · cost {self.cost_text()} · ETA {_duration(eta)}"
        )


class BatchView:
    """Plain progress lines (a pipe, a log file, no rich)."""

    def __init__(self, stream: TextIO, stats: BatchStats) -> None:
        self.stream = stream
        self.stats = stats
        self._last = time.monotonic()

    def start(self, label: str, output: str, resumed_from: int) -> None:
        """Announce the run."""
        total = f"{self.stats.total:,} inputs" if self.stats.total is not None else "inputs"
        again = f" · {resumed_from:,} already in {output}, read back" if resumed_from else ""
        self.write(f"▶ {label} · {total} → {output}{again}")

    def update(self) -> None:
        """Show the current figures (plain: at most every few seconds)."""
        now = time.monotonic()
        if now - self._last >= PLAIN_EVERY_S:
            self._last = now
            self.write(self.stats.line())

    def note(self, text: str) -> None:
        """A one-off message (Ctrl-C, a torn line cut off)."""
        self.write(text)

    def stop(self) -> None:
        """End the live display."""

    def write(self, text: str) -> None:
        """Write one line."""
        self.stream.write(text + "\n")
        self.stream.flush()

    def summary(self, output: str, interrupted: bool) -> None:
        """The figures, and one row per error code."""
        stats = self.stats
        self.write(stats.line())
        if stats.failures:
            width = max(len(code) for code in stats.failures)
            self.write(f"{'error code'.ljust(width)}  inputs  first key")
            for code, count in stats.failures.most_common():
                self.write(f"{code.ljust(width)}  {count:>6,}  {stats.examples[code]}")
        self.write(self.closing(output, interrupted))

    def closing(self, output: str, interrupted: bool) -> str:
        """The last line: where the results are, and how to resume."""
        stats = self.stats
        if interrupted:
            return (
                f"interrupted: {stats.done:,} results are in {output}; {stats.interrupted:,} stopped in flight. "
                "Run the same command again to resume."
            )
        ok = stats.done - stats.failed
        return f"{ok:,} succeeded, {stats.failed:,} failed · results in {output}"


class RichView(BatchView):
    """A live rich progress bar on a terminal; the same summary as a table."""

    def __init__(self, stream: TextIO, stats: BatchStats) -> None:
        super().__init__(stream, stats)
        from rich.console import Console
        from rich.progress import BarColumn, Progress, SpinnerColumn, TaskProgressColumn, TextColumn

        self.console = Console(file=stream, highlight=False, markup=False, emoji=False)
        self.progress = Progress(
            SpinnerColumn(),
            BarColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[figures]}"),
            console=self.console,
            transient=False,
        )
        self.task = self.progress.add_task("batch", total=stats.total, figures="")

    def start(self, label: str, output: str, resumed_from: int) -> None:
        """Announce the run and start the bar."""
        super().start(label, output, resumed_from)
        self.progress.start()
        self.update()

    def update(self) -> None:
        """Move the bar and refresh the figures."""
        stats = self.stats
        total = f"/{stats.total:,}" if stats.total is not None else ""
        figures = (
            f"{stats.done:,}{total} · {stats.failed:,} failed · {stats.rate():.1f}/s · "
            f"{stats.tokens.total:,} tokens · {stats.cost_text()} · ETA {_duration(stats.eta_s())}"
        )
        self.progress.update(self.task, completed=stats.done, figures=figures)

    def note(self, text: str) -> None:
        """A message above the bar."""
        self.progress.console.print(text)

    def stop(self) -> None:
        """Stop the bar (leaving its last state on screen)."""
        self.update()
        self.progress.stop()

    def write(self, text: str) -> None:
        """Write one line through rich."""
        self.console.print(text)

    def summary(self, output: str, interrupted: bool) -> None:
        """The figures as a table by error code."""
        from rich.table import Table

        stats = self.stats
        if stats.failures:
            table = Table(title="failed inputs by error code", title_justify="left")
            table.add_column("error code")
            table.add_column("inputs", justify="right")
            table.add_column("first key")
            for code, count in stats.failures.most_common():
                table.add_row(code, f"{count:,}", stats.examples[code])
            self.console.print(table)
        self.write(self.closing(output, interrupted))


def make_view(stream: TextIO, stats: BatchStats) -> BatchView:
    """A rich progress bar when stderr is a terminal and rich is installed; plain lines otherwise."""
    if stream.isatty():
        try:
            return RichView(stream, stats)
        except ImportError:
            pass
    return BatchView(stream, stats)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"

"""Where progress goes: plain lines, or rich ones (colour and a live status line) when rich is installed."""

from __future__ import annotations

from typing import Any, TextIO

__all__ = ["Lines", "Part", "RichLines", "make_lines"]

Part = str | tuple[str, str]
"""A piece of a line: plain text, or ``(text, rich style)``."""


class Lines:
    """Writes lines to a stream; plain text. ``RichLines`` adds colour and a live status line."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def line(self, *parts: Part) -> None:
        """Write one line made of ``parts``."""
        self.stream.write("".join(p if isinstance(p, str) else p[0] for p in parts) + "\n")
        self.stream.flush()

    def status(self, text: str) -> None:
        """Show what is happening right now (only a terminal can show it)."""

    def close(self) -> None:
        """Remove the status line."""


class RichLines(Lines):
    """``Lines`` through rich: styles on a terminal, none in a pipe, and a spinner with the current step."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)
        from rich.console import Console

        # soft_wrap: long lines stay whole in logs; markup/emoji off: model text is never interpreted.
        self.console = Console(file=stream, highlight=False, soft_wrap=True, markup=False, emoji=False)
        self._status: Any = None

    def line(self, *parts: Part) -> None:
        """Write one line made of ``parts``, styled."""
        from rich.text import Text

        self.console.print(Text.assemble(*parts))

    def status(self, text: str) -> None:
        """Update the spinner line (terminals only)."""
        if not self.console.is_terminal:
            return
        if self._status is None:
            self._status = self.console.status(text)
            self._status.start()
        else:
            self._status.update(text)

    def close(self) -> None:
        """Stop the spinner."""
        if self._status is not None:
            self._status.stop()
            self._status = None


def make_lines(stream: TextIO) -> Lines:
    """Rich lines when rich is installed (the ``cli`` extra), plain lines otherwise."""
    try:
        return RichLines(stream)
    except ImportError:
        return Lines(stream)

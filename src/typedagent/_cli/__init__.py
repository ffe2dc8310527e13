"""The ``typedagent`` command line: ``run``, ``check`` and ``demo`` (see ``typedagent.__main__``)."""

from ._main import main

__all__ = ["main"]

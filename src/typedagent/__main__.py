"""The ``typedagent`` command (also ``python -m typedagent``).

``typedagent run MODULE:ATTR PROMPT``
    Run an agent once: live progress on stderr, the validated output as JSON on stdout. Exit status
    0 on success, 1 when the execution fails (its error code is printed), 2 on usage errors.
    Options: ``--deps-json``, ``--max-attempts``, ``--replay``/``--record CASSETTE``, ``--json-events``,
    ``--approve`` (ask on the terminal about tool calls that need approval) and ``--state-file``: a run that
    pauses at such calls writes its state there and exits with status 3.
``typedagent resume MODULE:ATTR STATE --approve-all | --deny-all | --decisions FILE``
    Resume a paused run from its state file, deciding the calls it waits on; the options of ``run`` apply.
``typedagent check MODULE[:ATTR]...``
    Validate agent definitions offline, for CI; ``--show-tools`` prints what the API will receive.
``typedagent demo``
    Run the bundled example agents; the model is scripted when no ``ANTHROPIC_API_KEY`` is set.
"""

from __future__ import annotations

import sys

from ._cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())

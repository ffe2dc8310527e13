"""The ``typedagent`` command (also ``python -m typedagent``).

``typedagent run MODULE:ATTR PROMPT``
    Run an agent once: live progress on stderr, the validated output as JSON on stdout. Exit status
    0 on success, 1 when the execution fails (its error code is printed), 2 on usage errors.
    Options: ``--deps-json``, ``--max-attempts``, ``--replay``/``--record CASSETTE``, ``--json-events``.
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

"""pytest plugin for typedagent (registered through the ``pytest11`` entry point).

Fixtures:
    scripted_client: an empty ``ScriptedClient``; add responses with ``.add(...)``.
"""

from __future__ import annotations

import pytest

from ._scripted import ScriptedClient


@pytest.fixture
def scripted_client() -> ScriptedClient:
    """An empty ``ScriptedClient`` for the test; add responses with ``.add(...)``."""
    return ScriptedClient()

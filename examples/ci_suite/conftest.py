"""One test per scripted conversation in scenarios/ (see scenario_files.py for the file format)."""

from __future__ import annotations

import pytest
from scenario_files import ALL, Scenario


@pytest.fixture(params=ALL, ids=[scenario.name for scenario in ALL])
def scenario(request: pytest.FixtureRequest) -> Scenario:
    """Each scripted conversation in scenarios/, one test per file."""
    return request.param  # type: ignore[no-any-return]

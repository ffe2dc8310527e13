"""Fixtures of the evals tests (the helpers are in ``evals_support.py``)."""

from __future__ import annotations

import pytest
from evals_support import City, city_agent

from typedagent import AgentDefinition

pytest_plugins = ["pytester"]


@pytest.fixture
def agent() -> AgentDefinition[City, None]:
    """The city agent."""
    return city_agent()

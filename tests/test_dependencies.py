"""The declared dependency ranges are true statements: `make test-deps` runs the suite at both of their ends.

Two of these tests run only there (``TYPEDAGENT_TEST_MATRIX``, set by the Makefile): each checks that its pass
installed what it claims to test, so a resolver that quietly lifted a minimum cannot make the lowest pass vacuous.
"""

from __future__ import annotations

import os
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
RUNTIME = [Requirement(line) for line in PYPROJECT["project"]["dependencies"]]
MATRIX = os.environ.get("TYPEDAGENT_TEST_MATRIX")


def _lower_bound(requirement: Requirement) -> Version:
    (bound,) = [Version(spec.version) for spec in requirement.specifier if spec.operator == ">="]
    return bound


def test_dependencies_each_runtime_range_has_one_lower_bound() -> None:
    """Every runtime dependency names its minimum with one ``>=``: the lowest pass installs exactly that."""
    assert {req.name for req in RUNTIME} == {"anthropic", "pydantic", "typing-extensions"}
    for requirement in RUNTIME:
        assert _lower_bound(requirement) in requirement.specifier, requirement


def test_dependencies_matrix_group_pins_what_dev_pins() -> None:
    """The test-matrix group is a subset of the dev extra with the same pins: the matrix runs the same tools."""
    dev = {Requirement(line).name: Requirement(line) for line in PYPROJECT["project"]["optional-dependencies"]["dev"]}
    group = [Requirement(line) for line in PYPROJECT["dependency-groups"]["test-matrix"]]
    assert group
    for requirement in group:
        assert requirement.name in dev, f"{requirement.name} is in the test-matrix group but not in the dev extra"
        assert requirement.specifier == dev[requirement.name].specifier, requirement.name
        assert [spec.operator for spec in requirement.specifier] == ["=="], requirement


@pytest.mark.skipif(MATRIX != "lowest", reason="only in `make test-lowest`")
def test_dependencies_lowest_pass_runs_the_declared_minimums() -> None:
    """The lowest pass has each runtime dependency at the lower bound pyproject.toml declares, not above it."""
    installed = {req.name: Version(version(req.name)) for req in RUNTIME}
    assert installed == {req.name: _lower_bound(req) for req in RUNTIME}


@pytest.mark.skipif(MATRIX != "highest", reason="only in `make test-highest`")
def test_dependencies_highest_pass_is_not_older_than_the_lock() -> None:
    """The highest pass has each runtime dependency at the locked version or newer."""
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    # the project itself has no locked version (it is dynamic, read from typedagent/_shared/version.py)
    locked = {package["name"]: Version(package["version"]) for package in lock["package"] if "version" in package}
    for requirement in RUNTIME:
        assert Version(version(requirement.name)) >= locked[requirement.name], requirement.name

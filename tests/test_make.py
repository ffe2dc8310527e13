"""The Makefile's two entry points, dry-run (``make -n``) in a copy of a fresh clone: what each installs first."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _dry_run(target: str, folder: Path) -> list[str]:
    """The commands ``make TARGET`` would run in ``folder``, one per line."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}  # not a sub-make of ours
    done = subprocess.run(
        ["make", "-n", target], cwd=folder, env=env, capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.splitlines()


@pytest.fixture
def fresh_clone(tmp_path: Path) -> Path:
    """The files make reads, without the .venv/ a clone does not have."""
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def test_make_demo_installs_only_the_library_and_its_command_line(fresh_clone: Path) -> None:
    """`make demo` builds .venv/ with the `cli` extra alone before running the demo: no development tools."""
    commands = _dry_run("demo", fresh_clone)
    installs = [line for line in commands if re.search(r"pip install .*-e ", line)]
    assert installs == ['.venv/bin/python -m pip install --quiet -e ".[cli]"']
    assert commands[0] == "python3 -m venv .venv"
    assert commands.index(installs[0]) < commands.index(".venv/bin/typedagent demo")


def test_make_test_installs_every_extra_it_needs(fresh_clone: Path) -> None:
    """`make test` from a fresh clone installs the development tools before linting."""
    commands = _dry_run("test", fresh_clone)
    installs = [line for line in commands if re.search(r"pip install .*-e ", line)]
    assert installs == ['.venv/bin/python -m pip install --quiet -e ".[dev,cli,aiohttp]"']
    assert commands.index(installs[0]) < commands.index(".venv/bin/ruff check .")


def test_make_ci_entry_point_runs_make_test() -> None:
    """CI runs `.ci/run`, which is `make test` from the repository root."""
    assert (ROOT / ".ci" / "run").read_text().splitlines()[-1] == "make test"

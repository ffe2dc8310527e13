"""The Makefile's entry points, dry-run (``make -n``) in a copy of a fresh clone: what each installs first."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UV_VERSION = re.findall(r"^UV_VERSION := (\S+)$", (ROOT / "Makefile").read_text(), re.M)[0]
BOOTSTRAP = ["python3 -m venv .venv-uv", f".venv-uv/bin/python -m pip install --quiet uv=={UV_VERSION}"]
"""How a machine without uv gets one: the pinned release, with pip, in a venv of its own."""


def _path_without_uv() -> str:
    """The caller's PATH less every folder holding a ``uv``: a machine that has never installed uv."""
    folders = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(folder for folder in folders if folder and not (Path(folder) / "uv").exists())


def _dry_run(folder: Path, *args: str, path: str | None = None) -> list[str]:
    """The commands ``make ARGS`` would run in ``folder``, one per line (with ``path`` as PATH; no uv by default)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}  # not a sub-make of ours
    env.pop("UV", None)
    env["PATH"] = _path_without_uv() if path is None else path
    done = subprocess.run(
        ["make", "-n", "--no-print-directory", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.splitlines()


@pytest.fixture
def fresh_clone(tmp_path: Path) -> Path:
    """The files make reads, without the .venv/ a clone does not have."""
    for name in ("Makefile", "pyproject.toml", "uv.lock"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def _installs(commands: list[str]) -> list[str]:
    return [line for line in commands if re.search(r"\b(pip install|uv sync|uv pip install)\b", line)]


def test_make_demo_installs_only_the_library_and_its_command_line(fresh_clone: Path) -> None:
    """`make demo` on a machine without uv installs uv with pip, then syncs the lock's `cli` extra alone."""
    commands = _dry_run(fresh_clone, "demo")
    assert commands[:2] == BOOTSTRAP
    # --inexact: after `make test`, the demo leaves the development tools installed.
    assert _installs(commands)[1:] == [
        "UV_PROJECT_ENVIRONMENT=.venv .venv-uv/bin/uv sync --locked --python python3 --inexact --extra cli"
    ]
    assert commands.index(_installs(commands)[1]) < commands.index(".venv/bin/typedagent demo")


def test_make_test_installs_every_extra_it_needs(fresh_clone: Path) -> None:
    """`make test` from a fresh clone syncs .venv/ to the lock with the development tools before linting."""
    commands = _dry_run(fresh_clone, "test")
    sync = "UV_PROJECT_ENVIRONMENT=.venv .venv-uv/bin/uv sync --locked --python python3 --extra dev --extra cli"
    sync += " --extra aiohttp"
    assert commands[:2] == BOOTSTRAP
    assert _installs(commands) == [BOOTSTRAP[1], sync]
    assert commands.index(sync) < commands.index(".venv/bin/ruff check .")


def test_make_uses_the_uv_on_path(fresh_clone: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """With a uv on PATH, nothing is installed with pip: that uv syncs the environment."""
    folder = tmp_path_factory.mktemp("bin")
    uv = folder / "uv"
    uv.write_text("#!/bin/sh\n")
    uv.chmod(0o755)
    commands = _dry_run(fresh_clone, "demo", path=os.pathsep.join([str(folder), _path_without_uv()]))
    assert [line for line in commands if "pip install" in line] == []
    assert _installs(commands) == [
        f"UV_PROJECT_ENVIRONMENT=.venv {uv} sync --locked --python python3 --inexact --extra cli"
    ]


def test_make_lock_updates_the_lock_with_uv(fresh_clone: Path) -> None:
    """`make lock` runs `uv lock`; `make lock UPGRADE=1` moves every package to its newest allowed version."""
    assert _dry_run(fresh_clone, "lock") == [*BOOTSTRAP, ".venv-uv/bin/uv lock "]
    assert _dry_run(fresh_clone, "lock", "UPGRADE=1")[-1] == ".venv-uv/bin/uv lock --upgrade"


def test_make_test_deps_runs_pytest_at_both_ends_of_the_ranges_beside_venv(fresh_clone: Path) -> None:
    """`make test-deps` builds .venv-lowest/ and .venv-highest/ from the ranges at once, and runs pytest in each."""
    commands = _dry_run(fresh_clone, "test-deps")
    assert commands[0] == "make -j2 --output-sync=target test-lowest test-highest"
    assert commands[1:3] == BOOTSTRAP  # once, for both passes
    uv = ".venv-uv/bin/uv"
    for end, resolution in (("lowest", "lowest-direct"), ("highest", "highest")):
        expected = [
            f"{uv} venv --quiet --clear --python python3 .venv-{end}",
            f"{uv} pip install --quiet --python .venv-{end}/bin/python --resolution {resolution} "
            '-e ".[aiohttp,cli]" --group test-matrix',
            f"TYPEDAGENT_TEST_MATRIX={end} .venv-{end}/bin/python -m pytest -x -q "
            '-W "ignore:_pytest.python.CallSpec2:pytest.PytestRemovedIn10Warning" '
            '-W "default::pytest.PytestUnraisableExceptionWarning"',
        ]
        positions = [commands.index(line) for line in expected]
        assert positions == sorted(positions)
    assert not [line for line in commands if ".venv/" in line or "UV_PROJECT_ENVIRONMENT" in line]
    assert not [line for line in commands if "coverage" in line or "ruff" in line or "mypy" in line]


def test_make_ci_entry_point_runs_make_test_then_the_matrix() -> None:
    """CI runs `.ci/run`: `make test` from the repository root, then `make test-deps`."""
    commands = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("make ")]
    assert commands == ["make test", "make test-deps"]

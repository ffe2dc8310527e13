"""Finding agents from the command line: ``package.module:attr`` or ``path/to/file.py:attr``."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from typing_extensions import TypeIs

from .definition import AgentDefinition

__all__ = [
    "ImportFailed",
    "Target",
    "UsageError",
    "agents_in",
    "is_agent",
    "load_agent",
    "load_module",
    "split_target",
]


class UsageError(Exception):
    """The command line is wrong (exit status 2); the message is one line saying what to do."""


class ImportFailed(Exception):
    """The target module exists but raised while being imported (its definitions do not build)."""

    def __init__(self, ref: str, error: BaseException) -> None:
        super().__init__(f"importing {ref} failed: {type(error).__name__}: {_one_line(error)}")
        self.error = error


@dataclass(frozen=True, slots=True)
class Target:
    """One agent named on the command line."""

    label: str
    """How the user named it (``module:attr``)."""
    agent: AgentDefinition[Any, Any]
    """The definition found there."""
    module: ModuleType
    """The module that defines it (``run --scripted`` takes its ``scripted_client()``)."""


def split_target(spec: str) -> tuple[str, str | None]:
    """Split ``module:attr`` / ``file.py:attr`` into its parts; the attribute is optional."""
    ref, sep, attr = spec.rpartition(":")
    # "C:\\agents\\x.py" has a colon that is not a separator; so does a spec without any.
    if not sep or not ref or any(ch in attr for ch in "/\\") or attr.endswith(".py"):
        return spec, None
    return ref, attr


def _is_path(ref: str) -> bool:
    return ref.endswith(".py") or "/" in ref or os.sep in ref


def load_module(ref: str) -> ModuleType:
    """Import a module by dotted name (from the current directory, as ``python -m`` would) or by path.

    Raises:
        UsageError: the module or file does not exist.
        ImportFailed: it exists but raised while being imported.
    """
    return _load_file(ref) if _is_path(ref) else _import_name(ref)


def _import_name(name: str) -> ModuleType:
    cwd = os.getcwd()
    if cwd not in sys.path:
        # Console scripts do not put the working directory on sys.path; `python -m` does.
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(f"{exc.name}.")):
            raise UsageError(
                f"no module named {name!r}: run from your project's root, or name a file as path/to/agents.py:agent"
            ) from None
        raise ImportFailed(name, exc) from exc
    except Exception as exc:
        raise ImportFailed(name, exc) from exc


def _load_file(ref: str) -> ModuleType:
    path = Path(ref).resolve()
    if not path.is_file():
        raise UsageError(f"no such file: {ref}")
    if path.suffix != ".py":
        raise UsageError(f"{ref} is not a Python file (.py)")
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) == str(path):
            return module
    name = path.stem if path.stem.isidentifier() and path.stem not in sys.modules else f"_typedagent_cli_{path.stem}"
    name = name if name.isidentifier() else "_typedagent_cli_target"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Registered before running so pydantic and dataclasses can resolve the module's annotations;
    # the file's folder goes on sys.path so it can import its neighbours, as `python file.py` allows.
    sys.modules[name] = module
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        del sys.modules[name]
        if not isinstance(exc, Exception):
            raise
        raise ImportFailed(ref, exc) from exc
    return module


def agents_in(module: ModuleType) -> list[tuple[str, AgentDefinition[Any, Any]]]:
    """The module-level agent definitions of ``module``, in definition order."""
    return [(name, value) for name, value in vars(module).items() if is_agent(value)]


def is_agent(value: object) -> TypeIs[AgentDefinition[Any, Any]]:
    """Whether ``value`` is an agent definition (of any output and deps types)."""
    return isinstance(value, AgentDefinition)


def load_agent(spec: str) -> Target:
    """Resolve ``module:attr`` to an agent definition.

    Raises:
        UsageError: missing module, file or attribute, or the attribute is not an agent.
        ImportFailed: the module raised while being imported.
    """
    ref, attr = split_target(spec)
    if attr is None:
        raise UsageError(f"{spec!r} names no agent: use MODULE:ATTR or path/to/file.py:ATTR, e.g. agents.py:triage")
    module = load_module(ref)
    value: object = module
    for part in attr.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            found = ", ".join(name for name, _ in agents_in(module)) or "none"
            raise UsageError(f"{ref} has no attribute {attr!r} (agents defined there: {found})") from None
    if not is_agent(value):
        raise UsageError(f"{spec} is {_describe(value)}, not an agent: point at the object define_agent() returned")
    return Target(label=spec, agent=value, module=module)


def _describe(value: object) -> str:
    kind = type(value).__name__
    return f"a {kind}" if kind[:1].lower() not in "aeiou" else f"an {kind}"


def _one_line(error: BaseException) -> str:
    text = str(error).strip()
    return " | ".join(line.strip() for line in text.splitlines() if line.strip()) or "(no message)"

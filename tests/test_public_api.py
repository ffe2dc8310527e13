"""The package's public surface: ``__all__`` is sorted, complete and importable."""

import typedagent
import typedagent.evals
import typedagent.mcp
import typedagent.testing


def _public_names(module: object) -> set[str]:
    return {name for name in vars(module) if not name.startswith("_") and name not in {"annotations"}}


def test_all_is_sorted() -> None:
    """``__all__`` lists names in sorted order (as httpx checks)."""
    for module in (typedagent, typedagent.testing, typedagent.evals, typedagent.mcp):
        assert list(module.__all__) == sorted(module.__all__)


def test_all_is_complete() -> None:
    """Every public name the package exposes is in ``__all__``, and every listed name exists."""
    for module in (typedagent, typedagent.testing, typedagent.evals, typedagent.mcp):
        exported = set(module.__all__) - {"__version__"}
        public = {name for name in _public_names(module) if not isinstance(getattr(module, name), type(typedagent))}
        assert public == exported
        for name in module.__all__:
            assert hasattr(module, name), name


def test_import_does_not_load_the_sdk() -> None:
    """``import typedagent`` keeps the anthropic SDK (seconds to import) out until it is needed."""
    import subprocess
    import sys

    code = "import sys, typedagent; print('anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def _generic_frozen_dataclasses() -> list[type]:
    import dataclasses
    import inspect

    import typedagent.ray

    found: list[type] = []
    for module in (typedagent, typedagent.testing, typedagent.evals, typedagent.ray):
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isclass(value) and dataclasses.is_dataclass(value) and getattr(value, "__parameters__", ()):
                found.append(value)
    return found


def test_generic_dataclasses_refuse_assignment_through_a_subscripted_name() -> None:
    """Every public generic frozen dataclass answers ``Cls[X]``'s ``__orig_class__`` with FrozenInstanceError.

    A subscripted call (``RunInput[int]("hi", deps=1)``) sets ``__orig_class__`` and ignores an AttributeError;
    on Python 3.11 a frozen slots dataclass raised TypeError instead, so the call failed.
    """
    import dataclasses

    import pytest

    classes = _generic_frozen_dataclasses()
    assert {cls.__name__ for cls in classes} >= {"RunInput", "ManyResult", "ExecuteSuccess", "Case", "Dataset"}
    for cls in classes:
        bare = object.__new__(cls)
        with pytest.raises(dataclasses.FrozenInstanceError):
            bare.__orig_class__ = cls  # type: ignore[attr-defined]


def test_run_input_can_be_built_through_its_subscripted_name() -> None:
    """``RunInput[int]("hi", deps=1)`` builds the input, as the unsubscripted call does."""
    made = typedagent.RunInput[int]("hi", deps=1, key="k")
    assert made == typedagent.RunInput("hi", deps=1, key="k")


def test_durable_integrations_export_sorted_complete_names() -> None:
    """``typedagent.temporal`` and ``typedagent.dbos`` (their extras installed) list what they export."""
    import pytest

    for name, names in (
        ("temporal", ["AgentWorkflow", "TemporalAgent", "send_decisions"]),
        ("dbos", ["DBOSAgent", "send_decisions"]),
    ):
        pytest.importorskip("temporalio" if name == "temporal" else "dbos")
        module = __import__(f"typedagent.{name}", fromlist=["__all__"])
        assert list(module.__all__) == names
        public = {n for n in _public_names(module) if not isinstance(getattr(module, n), type(typedagent))}
        assert public == set(names)

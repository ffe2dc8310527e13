"""The package's public surface: ``__all__`` is sorted, complete and importable."""

import typedagent
import typedagent.evals
import typedagent.testing


def _public_names(module: object) -> set[str]:
    return {name for name in vars(module) if not name.startswith("_") and name not in {"annotations"}}


def test_all_is_sorted() -> None:
    """``__all__`` lists names in sorted order (as httpx checks)."""
    for module in (typedagent, typedagent.testing, typedagent.evals):
        assert list(module.__all__) == sorted(module.__all__)


def test_all_is_complete() -> None:
    """Every public name the package exposes is in ``__all__``, and every listed name exists."""
    for module in (typedagent, typedagent.testing, typedagent.evals):
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

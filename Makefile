# Quick start targets. `make run` and `make test` each set everything up first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup run lint lock lock-check wheel-check test phoenix-deps bench browser-deps pg-deps space-check screenshots clean

# The development environment: the development lock (exact versions: the package's dependencies as the
# Space gets them, the ray extra, the test/lint/bench tools), then this package in editable mode.
$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	$(BIN)/pip install --quiet --no-deps -e .
	$(BIN)/pip check
	touch $(STAMP)

setup: $(STAMP)

# PostgreSQL server binaries (Debian's postgresql) for the run-store tests, which start a throwaway
# server in a temporary directory and FAIL (never skip) without them. Skipped when already installed.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
pg-deps:
	@ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || \
	  ( $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq postgresql >/dev/null )

# Arize Phoenix and the OpenTelemetry / OpenInference packages of the traced test application, in
# their OWN venv (.venv-phoenix): Phoenix pins many packages, and none of them may reach .venv or
# `pip check`. The trace tests (tests/traces) start `phoenix serve` from it and FAIL without it.
PHOENIX_VENV  := .venv-phoenix
PHOENIX_STAMP := $(PHOENIX_VENV)/.installed
# The names; tests/traces/requirements-phoenix.txt pins them and all they bring (as tested).
PHOENIX_PACKAGES := arize-phoenix openinference-semantic-conventions openinference-instrumentation-openai \
  opentelemetry-sdk opentelemetry-exporter-otlp-proto-http openai
$(PHOENIX_STAMP): tests/traces/requirements-phoenix.txt
	test -x $(PHOENIX_VENV)/bin/python || $(PYTHON) -m venv $(PHOENIX_VENV)
	$(PHOENIX_VENV)/bin/pip install --quiet --upgrade pip
	$(PHOENIX_VENV)/bin/pip install --quiet -r tests/traces/requirements-phoenix.txt
	touch $(PHOENIX_STAMP)

phoenix-deps: $(PHOENIX_STAMP)

# Headless Chromium for the browser test (Debian package); the test skips with a reason if it is unavailable.
browser-deps:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  ( (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	    || echo "warning: could not install chromium; the browser test will be skipped" )

# The dashboard listens on the loopback address only: with RAG_EVAL_DEPLOYMENT=local and a key in the shell,
# anyone who could open it from the network could send that key to their own endpoint (docs/security.md).
# The owner widens it on the command line, `make run HOST=0.0.0.0` (an exported HOST, as some shells set,
# does not count). The Space runs `streamlit run app.py` itself and never reads this (docs/space.md).
HOST = 127.0.0.1
run: setup
	HF_HUB_OFFLINE=1 $(BIN)/streamlit run app.py --server.address $(HOST)

# ruff (style, imports, likely bugs), mypy (types of rag_eval/) and deptry (every module the package and
# the dashboard import is declared in pyproject.toml, nothing declared is unused), configured in pyproject.toml.
# mypy keeps its cache outside the checkout, as the Space and wheel checks keep their environments, so a fresh
# clone reuses it (about 60 s of CPU to 1 s): an entry is used only when its file's content hash matches.
MYPY_CACHE ?= /var/tmp/rag-eval-mypy-cache
lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy --cache-dir $(MYPY_CACHE)
	$(BIN)/deptry .

# Compile pyproject.toml's ranges into the Space's lock (requirements.txt) and the development lock
# (requirements-dev.txt), keeping the locked versions that still fit; `make lock UPGRADE=1` takes the
# newest releases. After adding or changing a dependency in pyproject.toml: make lock, commit both files.
lock:
	@test -x $(BIN)/uv || $(MAKE) setup
	$(BIN)/python scripts/lock.py $(if $(UPGRADE),--upgrade)

# Fails ("requirements.txt is stale against pyproject.toml: run make lock") when pyproject.toml's
# dependencies changed since the locks were compiled. Needs only python3 (no venv, no network).
lock-check:
	$(PYTHON) scripts/lock.py --check

# A wheel built from the repository, pip-installed into a clean environment outside the source tree,
# runs ingest (HTML, PDF, Markdown), ask, judge --judge local, run demo and report (scripts/wheel_check.py).
wheel-check: setup
	$(BIN)/python scripts/wheel_check.py

# The Hugging Face Space built and started as the platform does (docs/space.md): requirements.txt
# alone on the pinned Python, non-root, read-only repository, fresh HOME, every page in Chromium.
space-check: setup browser-deps
	$(BIN)/python scripts/space_check.py

# Each step prints how long it took. The lock check comes first: a stale lock fails before anything installs.
# pytest on TEST_WORKERS processes (pytest-xdist; a module's tests stay on one worker: tests/conftest.py) runs
# beside the checks, which run TEST_JOBS at a time (make -j -O: each step's output printed whole when it ends):
# the workers wait on servers and browsers for about half their time, and the checks fill it. The guard counts
# CPU time, not wall time, against baselines measured on a loaded machine. Where the time goes: CONTRIBUTING.md.
TEST_JOBS    ?= 2
TEST_WORKERS ?= auto
timed = @start=$$(date +%s); $(2) || exit 1; echo "== $(1): $$(( $$(date +%s) - start ))s"
TEST_CHECKS := test-lint test-space-check test-guard test-wheel-check test-pip-check
.PHONY: $(TEST_CHECKS) test-pytest

test-lint: setup
	$(call timed,lint (ruff mypy deptry),$(MAKE) --no-print-directory lint)
test-pip-check: setup
	$(call timed,pip check (development environment),$(BIN)/pip check)
test-space-check: setup browser-deps
	$(call timed,space check (requirements.txt alone; every page's main action in Chromium),$(BIN)/python scripts/space_check.py)
test-wheel-check: setup
	$(call timed,wheel check (pip install of the built wheel; the CLI's features),$(BIN)/python scripts/wheel_check.py)
test-guard: setup
	$(call timed,guard (CPU time of the hot paths against bench/baselines.json),HF_HUB_OFFLINE=1 $(BIN)/python -m bench.guard)

test-pytest: setup
	$(call timed,pytest ($(TEST_WORKERS) workers),HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -n $(TEST_WORKERS) --maxprocesses 4 --dist loadgroup)

test: lock-check setup pg-deps phoenix-deps browser-deps
	$(call timed,pytest beside the checks ($(TEST_JOBS) at a time),$(MAKE) --no-print-directory -j$$(( $(TEST_JOBS) + 1 )) -O test-pytest $(TEST_CHECKS))

bench: setup phoenix-deps
	for f in bench/bench_*.py; do echo "== $$f"; HF_HUB_OFFLINE=1 $(BIN)/python -m bench.$$(basename $$f .py) || exit 1; done

# Regenerate docs/screenshots/ from real runs in headless Chromium (see docs/dashboard.md).
screenshots: setup browser-deps
	HF_HUB_OFFLINE=1 $(BIN)/python scripts/screenshots.py

clean:
	rm -rf $(VENV) $(PHOENIX_VENV) .pytest_cache .ruff_cache .mypy_cache

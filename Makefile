# Quick start targets. `make run` and `make test` each set everything up first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup run test bench browser-deps pg-deps clean

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

setup: $(STAMP) pg-deps

# PostgreSQL server binaries (Debian's postgresql) for the run-store tests, which start a throwaway
# server in a temporary directory and FAIL (never skip) without them. Skipped when already installed.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
pg-deps:
	@ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || \
	  ( $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq postgresql >/dev/null )

# Headless Chromium for the browser test (Debian package); the test skips with a reason if it is unavailable.
browser-deps:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  ( (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	    || echo "warning: could not install chromium; the browser test will be skipped" )

run: setup
	HF_HUB_OFFLINE=1 $(BIN)/streamlit run app.py

test: setup browser-deps
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest

bench: setup
	for f in bench/bench_*.py; do echo "== $$f"; HF_HUB_OFFLINE=1 $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache

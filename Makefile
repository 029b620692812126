# Quick start targets. `make run` and `make test` each set everything up first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup run test bench browser-deps screenshots clean

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

setup: $(STAMP)

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

# Regenerate docs/screenshots/ from real runs in headless Chromium (see docs/dashboard.md).
screenshots: setup browser-deps
	HF_HUB_OFFLINE=1 $(BIN)/python scripts/screenshots.py

clean:
	rm -rf $(VENV) .pytest_cache

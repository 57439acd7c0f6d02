# Two commands do all set-up on a fresh machine (Python >= 3.11):
#   make demo   - the main job, on an embedded PostgreSQL unless DATABASE_URL is set
#   make test   - the whole test suite, same rule for the database
PYTHON ?= $(shell command -v python3.11 || command -v python3.12 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test bench clean browser dramatiq-suite

$(BIN)/citeq: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]' --config-settings editable_mode=compat
	touch $@

demo: $(BIN)/citeq
	$(BIN)/citeq demo

test: $(BIN)/citeq browser
	$(BIN)/pytest -q $(PYTEST_ARGS)

# The dashboard test drives headless Chromium; without it that one test skips.
browser:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && [ -z "$$CITEQ_NO_BROWSER_INSTALL" ]; then \
	    echo "installing chromium and chromium-driver for the dashboard test (CITEQ_NO_BROWSER_INSTALL=1 skips)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) \
	      >/dev/null 2>&1 || echo "could not install Chromium: the dashboard test will skip"; \
	  else \
	    echo "Chromium not found: the dashboard test will skip (apt-get install chromium chromium-driver)"; \
	  fi; \
	fi

# Dramatiq's own tests (from the sdist of the installed version) against PostgresBroker.
dramatiq-suite: $(BIN)/citeq
	$(BIN)/python scripts/dramatiq_suite.py $(PYTEST_ARGS)

bench: $(BIN)/citeq
	$(BIN)/python scripts/bench_broker.py

clean:
	-$(BIN)/citeq db stop
	rm -rf $(VENV) .citeq

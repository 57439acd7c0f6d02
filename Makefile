# Two commands do all set-up on a fresh machine (Python 3.11 to 3.14 and make):
#   make demo   - the main job, on an embedded PostgreSQL unless DATABASE_URL is set
#   make test   - the whole test suite, same rule for the database
#
# PYTHON: the newest of python3.14 ... python3.11 (then python3) that runs and is >= 3.11,
# or the one you name: `make test PYTHON=python3.13`. VENV: the virtual environment
# (default .venv), remade when PYTHON names another interpreter than the one it was made
# with. `make clean` removes it and the embedded server's data.
SUPPORTED := python3.14 python3.13 python3.12 python3.11 python3
ifeq ($(origin PYTHON),undefined)
PYTHON := $(shell for p in $(SUPPORTED); do \
            $$p -c 'import sys; assert sys.version_info >= (3, 11); print(sys.executable)' 2>/dev/null && break; \
          done)
endif
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test bench clean browser topology-tools test-pgbouncer bench-pgbouncer dramatiq-suite FORCE

# The interpreter the venv was made with. Rewritten only when PYTHON names another one,
# which makes $(BIN)/citeq out of date, and its recipe remakes the venv.
$(VENV)/.python: FORCE
	@if [ -z "$(PYTHON)" ]; then \
	  echo "error: no Python >= 3.11 found (tried $(SUPPORTED)); install one, or name it: make PYTHON=/path/to/python3.X" >&2; \
	  exit 1; \
	fi
	@want="$$($(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), sys.version; print(sys.executable, sys.version.split()[0])')" \
	  || { echo "error: PYTHON=$(PYTHON) is not a Python >= 3.11" >&2; exit 1; }; \
	have="$$(cat $@ 2>/dev/null || $(BIN)/python -c 'import sys; print(sys._base_executable, sys.version.split()[0])' 2>/dev/null)"; \
	if [ ! -f $@ ] && [ "$$have" = "$$want" ] && [ -f $(BIN)/citeq ]; then \
	  echo "$$want" > $@; touch -r $(BIN)/citeq $@; \
	elif [ "$$have" != "$$want" ]; then \
	  if [ -d $(VENV) ] && [ ! -f $(VENV)/pyvenv.cfg ] && [ -n "$$(ls -A $(VENV) | grep -vx .python)" ]; then \
	    echo "error: VENV=$(VENV) is a folder but no virtual environment: not removing it" >&2; exit 1; \
	  fi; \
	  if [ -d $(VENV) ]; then echo "$(VENV) was made with $${have:-another Python}: remaking it with $$want"; fi; \
	  rm -rf $(VENV); mkdir -p $(VENV); echo "$$want" > $@; \
	fi

$(BIN)/citeq: pyproject.toml $(VENV)/.python
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]' --config-settings editable_mode=compat
	touch $@

demo: $(BIN)/citeq
	$(BIN)/citeq demo

test: $(BIN)/citeq browser topology-tools
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

# The topology tests (tests/topologies/, issue 26) run a real PgBouncer and make network
# namespaces (ip netns); without pgbouncer or iproute2 those tests skip, saying which.
topology-tools:
	@missing=""; \
	command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || missing="$$missing pgbouncer"; \
	command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || [ -x /sbin/ip ] || missing="$$missing iproute2"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && [ -z "$$CITEQ_NO_TOPOLOGY_INSTALL" ]; then \
	    echo "installing$$missing for the topology tests (CITEQ_NO_TOPOLOGY_INSTALL=1 skips)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing) \
	      >/dev/null 2>&1 || echo "could not install$$missing: those topology tests will skip"; \
	  else \
	    echo "not found:$$missing: those topology tests will skip (apt-get install$$missing)"; \
	  fi; \
	fi

# The e2e suites of the broker and the per-user queue through a real PgBouncer, in session
# mode and in transaction mode (CITEQ_TRANSACTION_POOLING=1, a direct CITEQ_LISTEN_URL).
PGBOUNCER_SUITES := tests/e2e/test_broker_processes.py tests/e2e/test_userqueue_processes.py
test-pgbouncer: $(BIN)/citeq topology-tools
	CITEQ_TEST_PGBOUNCER=session $(BIN)/pytest -q $(PGBOUNCER_SUITES) $(PYTEST_ARGS)
	CITEQ_TEST_PGBOUNCER=transaction $(BIN)/pytest -q $(PGBOUNCER_SUITES) $(PYTEST_ARGS)

bench-pgbouncer: $(BIN)/citeq topology-tools
	$(BIN)/python scripts/bench_pgbouncer.py

# Dramatiq's own tests (from the sdist of the installed version) against PostgresBroker;
# DRAMATIQ_REPO_TESTS=<checkout>/tests adds a local Dramatiq checkout's tests/middleware/.
dramatiq-suite: $(BIN)/citeq
	$(BIN)/python scripts/dramatiq_suite.py $(if $(DRAMATIQ_REPO_TESTS),--repo-tests $(DRAMATIQ_REPO_TESTS)) $(PYTEST_ARGS)

bench: $(BIN)/citeq
	$(BIN)/python scripts/bench_broker.py

clean:
	-$(BIN)/citeq db stop
	-CITEQ_PG_MAJOR=16 $(BIN)/citeq db stop
	rm -rf $(VENV) .citeq

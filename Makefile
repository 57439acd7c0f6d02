# Two commands do all set-up on a fresh machine (Python >= 3.11):
#   make demo   - the main job, on an embedded PostgreSQL unless DATABASE_URL is set
#   make test   - the whole test suite, same rule for the database
PYTHON ?= $(shell command -v python3.11 || command -v python3.12 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test bench clean

$(BIN)/citeq: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]' --config-settings editable_mode=compat
	touch $@

demo: $(BIN)/citeq
	$(BIN)/citeq demo

test: $(BIN)/citeq
	$(BIN)/pytest -q $(PYTEST_ARGS)

bench: $(BIN)/citeq
	$(BIN)/python scripts/bench_broker.py

clean:
	-$(BIN)/citeq db stop
	rm -rf $(VENV) .citeq

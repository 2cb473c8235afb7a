# The two commands: `make run` and `make test`. Everything installs into .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
NIGHT ?= examples/night.toml
DATA_DIR ?= ./var

.PHONY: run test lint format bench bench-compare clean install

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/casino-night serve --night $(NIGHT) --data-dir $(DATA_DIR)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --strict

test: lint
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m bench

# The same figures against another revision, interleaved in one run: make bench-compare BEFORE=<rev>
bench-compare: $(STAMP)
	$(BIN)/python -m bench.compare --before $(BEFORE) $(if $(ONLY),--only $(ONLY),) $(if $(RUNS),--runs $(RUNS),)

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache  # never var/: it holds the event store

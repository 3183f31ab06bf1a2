PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The real kube-apiserver, kube-scheduler and Go scheduler harness the connector and
# extender tests run against (they skip, saying how to get them, when absent).
export KSCHED_KUBE_ASSETS ?= $(abspath ../shared/kube)

.PHONY: demo test lint typecheck unit bench clean browser

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

# The HTML report's browser test needs Debian's chromium and chromium-driver: installed
# here when missing and running as root (as CI does); otherwise that test skips, saying why.
browser:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	      apt-get install -y -qq chromium chromium-driver >/dev/null) \
	      || echo "could not install chromium: the browser test will skip"; \
	  else echo "chromium/chromium-driver missing (not root): the browser test will skip"; fi; \
	fi

unit: $(STAMP) browser
	$(BIN)/pytest

test: lint typecheck unit

bench: $(STAMP)
	-$(BIN)/pip install --quiet -e '.[bench]'
	$(BIN)/python benchmarks/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV)

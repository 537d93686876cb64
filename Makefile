# gbai: every command sets itself up, on a machine with Python 3.11 to 3.14 and PyPI.
#   make figures   regenerate every figure (runs the notebooks headless)
#   make test      run the test suite, then validate the notebooks with nbval
#   make lab       open the notebooks in JupyterLab
#   make course-lab   JupyterLab with nbgrader's teacher tools on the course folder
#   make book      render the executed notebooks as a static site in build/book/
#   make assignments / autograde / feedback / export   the nbgrader course in build/assignments/
#   make student-kit  build/student-kit.zip: what students install (no solutions)
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
# The Pythons gbai supports (3.11 3.12 ...), read from pyproject.toml's requires-python, ">=3.A,<3.B" (a test checks
# that form): make install refuses any other, make test-pythons tests each one found on the machine.
SUPPORTED_PYTHONS := $(shell sed -n 's/^requires-python = ">=3\.\([0-9]*\),<3\.\([0-9]*\)"$$/\1 \2/p' pyproject.toml \
	| { read -r low high && seq -f '3.%g' "$$low" "$$((high - 1))"; })
# The version of $(PYTHON) (3.13), empty when it does not run.
PYTHON_VERSION = $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Exact, hashed versions of every dependency and extra, for each supported Python on Linux and macOS (make lock).
LOCK := requirements.lock
LOCK_TOOL := build/lock-tool
QUICK := build/quick
QUICK_CACHE := build/cache
# make test-notebooks NOTEBOOKS=01: only the notebooks whose names start so (default: all).
NOTEBOOKS ?=
# make figures JOBS=4 (and test-notebooks): notebooks run at once (default: one per core this process may use).
JOBS ?=
COURSE := build/assignments
EXTRAS := notebooks,test,book,classroom,dask
LAB_PORT ?= 8888
LAB_ARGS ?=
# Course selections: make autograde STUDENT=alice ASSIGNMENT=05 (several: STUDENT="alice bob"; an id
# with a space quoted inside: STUDENT="'mia chen' bob"). STUDENT reaches the command as an environment
# variable, read as a shell would split it, so the quotes survive.
STUDENT ?=
export STUDENT
ASSIGNMENT ?=
SELECTION := $(ASSIGNMENT) $(if $(STUDENT),--students "$$STUDENT")
# make autograde TIMEOUT=60: seconds a cell may run before grading stops it (default 300).
TIMEOUT ?=
# make autograde MEMORY=8: GB of memory a confined grading kernel may use (default 4).
MEMORY ?=
# make student-kit writes the kit here.
KIT ?= build/student-kit.zip
# make grade-answer STUDENT=alice ANSWER=nb05_ex1_answer SCORE=1 COMMENT="...": one written answer.
ANSWER ?=
SCORE ?=
COMMENT ?=
# Jupyter refuses to run as root without this flag (containers, CI machines).
ALLOW_ROOT := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)

# The venv's kernel comes before any user-level one; results are cached in the repo.
export JUPYTER_PREFER_ENV_PATH := 1
export GBAI_CACHE_DIR ?= $(CURDIR)/.cache/gbai
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: help install lock figures test test-package test-notebooks test-pythons test-grading lab course-lab book \
	assignments autograde feedback export grade-answer student-kit paper benchmark clean

help:
	@echo "make install         create .venv with gbai and every extra, its Jupyter kernel, and compile the kernels"
	@echo "                     (the other targets do it too)"
	@echo "make lock            regenerate requirements.lock (the exact versions make install installs) from pyproject.toml"
	@echo "make figures         regenerate every figure (notebooks run headless, one per core at once, JOBS=4 for"
	@echo "                     four; results cached in .cache/)"
	@echo "make test            ruff, pytest, then nbval on the notebooks executed with quick=True (test-package, then test-notebooks)"
	@echo "make test-package    ruff on gbai/, notebooks/_tools/ and tests/, then the test suite (pytest tests/)"
	@echo "make test-notebooks  nbval on the notebooks executed with quick=True, in $(QUICK)/ (NOTEBOOKS=01 for one)"
	@echo "make test-pythons    each other supported Python on PATH (of $(SUPPORTED_PYTHONS)): installs the lock in"
	@echo "                     build/venv-3.X, runs the golden runs and notebook 1 (quick, then nbval) under it"
	@echo "make lab             JupyterLab on the notebooks (LAB_PORT=$(LAB_PORT), LAB_ARGS=--no-browser ...)"
	@echo "make course-lab      JupyterLab with nbgrader's teacher tools, in the course folder $(COURSE)/"
	@echo "make book            static HTML site of the executed notebooks in build/book/"
	@echo "make assignments     student versions + nbgrader course in $(COURSE)/ (ASSIGNMENT=01 for one)"
	@echo "make student-kit     build/student-kit.zip for students: the student versions, gbai as a wheel, a guide"
	@echo "make autograde       grade $(COURSE)/submitted/<student>/<assignment>/ again -> grades.csv, grades-totals.csv"
	@echo "                     (one student or assignment: make autograde STUDENT=alice ASSIGNMENT=05_experiment_1;"
	@echo "                     TIMEOUT=60 stops a cell after 60 s instead of 300 s, MEMORY=8 lets a kernel use 8 GB)"
	@echo "make grade-answer    list the written answers to grade; STUDENT=alice ANSWER=<cell id> SCORE=1 [COMMENT=...]"
	@echo "                     grades one as formgrader does"
	@echo "make feedback        HTML feedback for every graded submission (STUDENT=, ASSIGNMENT= as above)"
	@echo "make export          rewrite grades.csv (per item) and grades-totals.csv (per student) from the gradebook"
	@echo "make test-grading    the grading tests on every notebook (make test grades notebook 1)"
	@echo "make paper           build paper/report.pdf (needs a LaTeX toolchain)"
	@echo "make benchmark       print the engines' throughput"
	@echo "make clean           remove build/ and the result cache .cache/ (keeps .venv)"
	@echo "make help            this list"

$(STAMP): pyproject.toml $(LOCK)
	$(if $(filter $(PYTHON_VERSION),$(SUPPORTED_PYTHONS)),,$(error gbai supports Python $(firstword $(SUPPORTED_PYTHONS)) \
		to $(lastword $(SUPPORTED_PYTHONS)), but PYTHON=$(PYTHON) is $(if $(PYTHON_VERSION),Python $(PYTHON_VERSION),not \
		a Python that runs): set PYTHON=/path/to/python3.X for one of them))
	$(PYTHON) -m venv $(VENV)
	@# Exact versions with their hashes from the lock, then gbai itself (its dependencies are all in the lock).
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes -r $(LOCK)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (ipykernel)" > /dev/null
	@# JupyterLab opens the percent scripts as notebooks (Jupytext), not in the text editor.
	mkdir -p $(VENV)/share/jupyter/lab/settings
	echo '{"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"python": "Jupytext Notebook"}}}' \
		> $(VENV)/share/jupyter/lab/settings/overrides.json
	@# Every numba kernel into its cache (beside the sources, keyed by their times, so a fresh clone has none):
	@# no command, notebook or test compiles on first use.
	$(BIN)/gbai compile
	touch $(STAMP)

install: $(STAMP)

# Regenerates the lock from pyproject.toml for every supported Python. uv reads the old lock as its preferences:
# a locked version that still fits stays, the rest get the newest releases that fit. Then run make figures and
# commit what changed (new versions may change the bytes of figures and notebooks).
lock:
	$(PYTHON) -m venv $(LOCK_TOOL)
	$(LOCK_TOOL)/bin/python -m pip install --quiet --disable-pip-version-check "uv>=0.9,<1"
	$(LOCK_TOOL)/bin/uv pip compile pyproject.toml --all-extras --universal \
		--python-version $(firstword $(SUPPORTED_PYTHONS)) --generate-hashes --custom-compile-command "make lock" \
		--quiet -o $(LOCK)

figures: $(STAMP)
	$(BIN)/python -m notebooks._tools figures $(if $(JOBS),--jobs $(JOBS))

test: test-package test-notebooks

# The linter first (its rules are in pyproject.toml): a finding stops make test before the tests run.
test-package: $(STAMP)
	$(BIN)/ruff check gbai notebooks/_tools tests
	TQDM_DISABLE=1 $(BIN)/python -m pytest -n 2 --dist loadfile tests

test-notebooks: $(STAMP)
	rm -rf $(QUICK)
	TQDM_DISABLE=1 GBAI_FIGURES_DIR=$(CURDIR)/$(QUICK)/figures GBAI_CACHE_DIR=$(CURDIR)/$(QUICK_CACHE) \
		$(BIN)/python -m notebooks._tools quick $(NOTEBOOKS) --output $(QUICK) $(if $(JOBS),--jobs $(JOBS))
	TQDM_DISABLE=1 GBAI_FIGURES_DIR=$(CURDIR)/$(QUICK)/figures GBAI_CACHE_DIR=$(CURDIR)/$(QUICK_CACHE) \
		$(BIN)/python -m pytest -p no:cacheprovider -n 2 --dist loadfile --nbval --nbval-current-env \
		--nbval-sanitize-with tests/nbval_sanitize.cfg $(QUICK)/*.ipynb

# make test ran under $(PYTHON); this checks every other supported Python that runs as python3.X from PATH (a
# pyenv shim of a version pyenv has not activated does not run). Each one gets its own venv from the lock and its
# own result cache, emptied first so that its runs are computed under it.
test-pythons:
	@tested=""; for version in $(filter-out $(PYTHON_VERSION),$(SUPPORTED_PYTHONS)); do \
		python$$version -c "" 2> /dev/null || { echo "test-pythons: no python$$version on PATH, skipped"; continue; }; \
		echo "test-pythons: Python $$version"; \
		$(MAKE) --no-print-directory install VENV=build/venv-$$version PYTHON=python$$version; \
		TQDM_DISABLE=1 build/venv-$$version/bin/python -m pytest -p no:cacheprovider -n 2 tests/test_golden_runs.py; \
		rm -rf build/cache-$$version; \
		$(MAKE) --no-print-directory test-notebooks VENV=build/venv-$$version PYTHON=python$$version \
			QUICK=build/quick-$$version QUICK_CACHE=build/cache-$$version NOTEBOOKS=01; \
		tested="$$tested $$version"; \
	done; \
	echo "test-pythons: passed under Python$${tested:- none} (and make test under $(PYTHON_VERSION))"

# The test suite grades notebook 1; this grades every notebook (the grading tests only, not the book's:
# the tests below are those that build the book).
BOOK_TESTS := every_notebook_has_a_page or landing_page or the_book_shows or solution_toggle or figures_are_numbered \
	or links_to_notebooks or every_page_offers or titles_are_plain or every_table_fits or table_too_wide \
	or guide_pages_are_in_the_book
test-grading: $(STAMP)
	TQDM_DISABLE=1 GBAI_GRADING_NOTEBOOKS=all $(BIN)/python -m pytest -p no:cacheprovider tests/test_classroom.py \
		-k "not ($(BOOK_TESTS))"

# The reader's Lab, in notebooks/ where Jupytext finds its pairing (jupytext.toml), by the launcher the
# student kit ships as lab.py (notebooks/_tools/lab/launch.py): it leaves nbgrader's teacher extensions
# out (notebooks/_tools/lab/reader_lab); course-lab has them.
lab: $(STAMP)
	$(BIN)/python -m notebooks._tools lab --ServerApp.port=$(LAB_PORT) $(LAB_ARGS)

course-lab: $(STAMP)
	@test -f $(COURSE)/nbgrader_config.py || { echo "no course in $(COURSE): run make assignments first"; exit 1; }
	cd $(COURSE) && PATH="$(CURDIR)/$(BIN):$$PATH" $(CURDIR)/$(BIN)/jupyter lab --ServerApp.port=$(LAB_PORT) \
		$(ALLOW_ROOT) $(LAB_ARGS) --ServerApp.root_dir="$(CURDIR)/$(COURSE)"

book: $(STAMP)
	$(BIN)/python -m notebooks._tools book --output build/book
	@echo "open build/book/index.html in a browser"

assignments: $(STAMP)
	$(BIN)/python -m notebooks._tools assignments $(ASSIGNMENT) --output $(COURSE)

# Status 3 (graded, but a notebook handed in was refused or failed: listed on stderr, and in
# grades.csv) is a finished run; make fails (status 2) only when grading could not run.
autograde: $(STAMP)
	$(BIN)/python -m notebooks._tools autograde $(SELECTION) $(if $(TIMEOUT),--timeout $(TIMEOUT)) \
		$(if $(MEMORY),--memory $(MEMORY)) --output $(COURSE) || [ $$? = 3 ]

# The comment reaches the shell as an environment variable (make exports command-line
# variables), so quotes in it survive.
grade-answer: $(STAMP)
	$(BIN)/python -m notebooks._tools grade-answer $(SELECTION) $(if $(ANSWER),--answer "$(ANSWER)") \
		$(if $(SCORE),--score "$(SCORE)") $(if $(COMMENT),--comment "$$COMMENT") --output $(COURSE)

# The student versions of every notebook, gbai as a wheel and a guide, without any solution.
student-kit: $(STAMP)
	$(BIN)/python -m notebooks._tools student-kit --course $(COURSE) --output $(KIT)

feedback: $(STAMP)
	$(BIN)/python -m notebooks._tools feedback $(SELECTION) --output $(COURSE)

export: $(STAMP)
	$(BIN)/python -m notebooks._tools export --output $(COURSE)

# The report's PDF is committed: make paper rebuilds it from scratch in build/paper/ (aux files
# stay there), checks the log, and copies the PDF to paper/report.pdf. The same sources give
# the same bytes: a fixed date, no trailer ID; the PDF's metadata holds the sources' fingerprint.
PAPER_BUILD := build/paper
# The date stamped in the PDF: 2026-01-01T00:00:00Z.
PAPER_DATE := 1767225600

paper:
	@command -v latexmk > /dev/null && command -v pdflatex > /dev/null || { echo "make paper needs latexmk and" \
		"pdflatex (Debian/Ubuntu: apt install latexmk texlive-latex-extra texlive-science)"; exit 2; }
	rm -rf $(PAPER_BUILD)
	mkdir -p $(PAPER_BUILD)
	fingerprint=$$($(PYTHON) paper/report_tools.py fingerprint) && cd paper && \
		SOURCE_DATE_EPOCH=$(PAPER_DATE) FORCE_SOURCE_DATE=1 latexmk -pdf -interaction=nonstopmode -halt-on-error \
		-quiet -outdir="$(CURDIR)/$(PAPER_BUILD)" \
		-usepretex="\pdftrailerid{}\def\sourcefingerprint{$$fingerprint}" report.tex
	$(PYTHON) paper/report_tools.py check $(PAPER_BUILD)/report.log
	cp $(PAPER_BUILD)/report.pdf paper/report.pdf
	@echo "paper/report.pdf rebuilt (log: $(PAPER_BUILD)/report.log)"

benchmark: $(STAMP)
	$(BIN)/gbai benchmark

clean:
	rm -rf build .cache

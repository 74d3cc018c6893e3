# The commands of the README: `make serve`, `make test`, `make test-page PAGE=...`,
# `make test-torch`, `make pdf` and `make drift TORCH=...`.
#
# `make serve` needs Python 3.10-3.13 and no torch: it installs the site stack alone
# (requirements-serve.txt) into .venv-serve, or uses .venv when that is set up and current.
# Every other target sets up .venv, the book's whole pinned stack (torch 2.13.0, the test tools),
# which needs Python 3.11. Set-up is skipped when the venv is up to date with its pin files.
# PYTHON=/path/to/python picks the interpreter; by default `make serve` takes the newest
# python3.13 ... python3.10 on PATH that runs (a pyenv shim of a version not selected does not)
# and the other targets python3.11.
runs = $(shell for p in $(1); do command -v $$p >/dev/null 2>&1 && $$p -c '' >/dev/null 2>&1 && echo $$p && break; done)
PYTHON ?=
SERVE_PYTHON := $(or $(PYTHON),$(call runs,python3.13 python3.12 python3.11 python3.10),python3)
BOOK_PYTHON  := $(or $(PYTHON),$(call runs,python3.11),$(SERVE_PYTHON))
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SERVE_VENV ?= .venv-serve
PORT   ?= 8000
PAGE   ?= docs/part1/hand-trace.md
TORCH  ?= 2.14.1
PRINT_PAGE ?= false
export NO_MKDOCS_2_WARNING := 1
# Every recipe's processes (and theirs) carry the name of the target whose recipe started them:
# tools/cpu_account.py adds up the CPU time of a run by target (.ci/run prints it).
export BOOK_MAKE_TARGET = $@
# torch's OpenMP threads (and MKL's) sleep when a parallel region ends instead of spinning for a
# core (libgomp's default): the steps share two cores, and a thread that spins takes the core
# another step waits for. Measured with a second process busy on one core: the pages of parts
# V-VI, the workshop and its tests took 65 s of user CPU instead of 77 s (118 s wall instead of
# 131 s); in a fresh make test the pages step took 211 s of CPU instead of 231 s. What a block
# computes and prints does not depend on it.
export OMP_WAIT_POLICY := PASSIVE

.PHONY: venv serve serve-venv notebooks test-serve test step-pages step-site step-notebooks step-serve test-torch torch-venvs test-page build pdf drift lighthouse zensical clean

$(STAMP): pyproject.toml constraints.txt
	@$(BOOK_PYTHON) -c 'import sys; v = sys.version_info[:2]; sys.exit(0 if v == (3, 11) else "make $(or $(MAKECMDGOALS),test) needs Python 3.11 (the pinned stack: torch 2.13.0 and the test tools); $(BOOK_PYTHON) is Python %d.%d. Install Python 3.11 and run: make $(or $(MAKECMDGOALS),test) PYTHON=/path/to/python3.11 (make serve runs on 3.10-3.13)" % v)'
	test -x $(BIN)/python || $(BOOK_PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[book]'
	touch $(STAMP)

# The book's venv alone (every target below that needs it sets it up first).
venv: $(STAMP)

# The venv `make serve` runs in: .venv when it is set up and current (it holds the site stack
# too), else $(SERVE_VENV) with requirements-serve.txt alone. $(SERVE_VENV)/.installed records
# the Python version and the pins it was set up with (content, not dates: a fresh clone, or a
# venv kept elsewhere with SERVE_VENV=..., is reused when both match; else it is made again).
SERVE_BIN = $(if $(shell test -f $(STAMP) && test $(STAMP) -nt pyproject.toml && test $(STAMP) -nt constraints.txt && echo y),$(BIN),$(SERVE_VENV)/bin)

serve-venv:
	@if [ "$(SERVE_BIN)" = "$(SERVE_VENV)/bin" ]; then \
	  $(SERVE_PYTHON) -c 'import sys; v = sys.version_info[:2]; sys.exit(0 if (3, 10) <= v <= (3, 13) else "make serve needs Python 3.10-3.13; $(SERVE_PYTHON) is Python %d.%d. Run: make serve PYTHON=/path/to/python3.1x" % v)' || exit 1; \
	  want="$$($(SERVE_PYTHON) -c 'import sys; print(sys.version)'; cat requirements-serve.txt)"; \
	  if [ "$$(cat $(SERVE_VENV)/.installed 2>/dev/null)" != "$$want" ]; then \
	    echo "setting up $(SERVE_VENV) (the site stack on $$($(SERVE_PYTHON) -V))"; \
	    rm -rf $(SERVE_VENV) && $(SERVE_PYTHON) -m venv $(SERVE_VENV) && \
	    $(SERVE_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-serve.txt && \
	    printf '%s\n' "$$want" > $(SERVE_VENV)/.installed || exit 1; \
	  fi; \
	fi

# Rebuilds only the pages whose source changed, or a file of snippets/ they include; after adding,
# deleting or renaming a page, run it again. Its log before "Serving on" is a few lines:
# BOOK_SERVE_LOG=all shows the plugins' notes too (overrides/serve_hooks.py). After `make pdf` it
# serves the PDF as well.
# Not strict: a warning (e.g. a new page not yet in the nav) is printed and the page still
# shows; `make build` and `make test` are strict. Notebooks are shown with their stored outputs.
# The print page (print_page/, which `make pdf` prints) is not made: PRINT_PAGE=true makes it.
serve: serve-venv
	BOOK_PRINT_PAGE=$(PRINT_PAGE) $(SERVE_BIN)/mkdocs serve --dirty --no-strict --dev-addr 127.0.0.1:$(PORT)

# The notebooks: generated (bookbuild/notebook_gen.py), executed, their outputs stored in
# docs/notebooks/*.ipynb (tests/test_notebooks_anywhere.py and test_notebook_outputs.py fail
# when they are not current).
notebooks: $(STAMP)
	$(BIN)/python -m bookbuild.notebook_gen
	$(BIN)/python -m bookcheck.notebooks

# The site, built strict into site/ (bookbuild/site_build.py): not built again while site/ holds a
# build from exactly these files, this environment, today's date and these records of passing
# runs (the page stamps print them); FRESH=1, or CI=true, builds it anyway.
build: $(STAMP)
	$(BIN)/python -m bookbuild.site_build $(if $(FRESH),--fresh) site -- $(BIN)/mkdocs build --strict

# The whole book as one PDF, site/autograd-book.pdf (the home page links it): the site built
# strict, its print page (print_page/: every page in nav order) printed by the system chromium
# (bookbuild/pdf.py), then checked (tests/test_pdf.py; --fresh: the PDF is not a project file,
# so a reused pass would not have read it). CI runs it after `test`.
PDF := site/autograd-book.pdf
pdf: build
	$(BIN)/python -m bookbuild.pdf site $(PDF)
	BOOK_PDF=$(PDF) $(BIN)/python -m pytest -q --fresh --step pdf

# The test steps (bookcheck.steps), side by side: each is a pytest process of its own
# (`pytest --step NAME`) and mostly one core's work, so JOBS=2 keeps two cores busy. Each step's
# output is printed whole when it ends; a failing step is named by make ("[Makefile:N: step-site]").
# - step-pages: every page's blocks, diagrams and tables, and the tests of snippets/ and bookcheck/;
# - step-site: the book built (make build, into site/), then opened in Debian chromium;
# - step-notebooks: every notebook executed in fresh kernels, here and as a reader runs it;
# - step-serve: `make serve` from a fresh clone on every Python 3.10-3.13 found (under CI=true,
#   or with BOOK_SERVE=1; skipped with that reason otherwise).
# Checks that passed before with identical inputs are not run again; FRESH=1 runs every check.
# Plain `pytest` runs the same tests in one process, one step after another.
# A step that has not ended after STEP_TIMEOUT seconds is stopped and fails, so a check that
# waits forever names its step instead of holding CI. On a slow host the longest step took 833 s
# in make test (site), and in .ci/run, which runs six steps four at a time, the pages step was
# stopped at the former limit of 1,200 s with 98% of its tests run: the limit is twice that.
STEPS := site pages notebooks serve
JOBS  ?= 2
STEP_TIMEOUT ?= 2400
PYTEST_STEP = timeout -k 20 $(STEP_TIMEOUT) $(BIN)/python -m pytest --step $(@:step-%=%) $(if $(FRESH),--fresh)
test: $(STAMP)
	@$(MAKE) --no-print-directory -j$(JOBS) --output-sync=target $(if $(filter 2,$(JOBS)),LANES=1) $(addprefix step-,$(STEPS))

# Two lanes on two cores: the build then the site step (the longest) in one, the pages, notebooks
# and serve steps one after another in the other. make gives a slot that frees to a step already
# waiting for one, so without the order the notebooks step took the slot the build left and the
# site step started minutes late. In this order a failing pages step leaves the notebooks and
# serve steps unrun (make says so); CI runs every step (.ci/run).
ifdef LANES
step-notebooks: | step-pages
step-serve: | step-notebooks
endif

step-pages step-notebooks step-serve: $(STAMP)
	$(PYTEST_STEP)

step-site: build
	BOOK_SITE=site $(PYTEST_STEP)

# `make serve` from a fresh clone on each Python 3.10-3.13 found (PATH or pyenv), each page kind
# fetched over HTTP (tests/test_serve_anywhere.py; make test runs it under CI=true).
test-serve: $(STAMP)
	BOOK_SERVE=1 $(BIN)/python -m pytest -q -s --step serve

# Every page's blocks on the other verified torch versions (mkdocs.yml, extra.torch_also), in
# a second venv under .cache/torch-VERSION/ (set up once, about 6 GB). CI runs it beside the
# test steps and pdf.
test-torch: torch-venvs $(STAMP)
	$(BIN)/python -m tools.torch_venvs test

# Only the set-up of those venvs (nothing when they are current), niced, and at the idle I/O
# class where ionice exists: mostly disk work, which otherwise slows every step beside it. It needs
# Python 3.11 alone (bookcheck.versions reads the pins with the standard library), so it runs
# beside the set-up of .venv.
torch-venvs:
	nice -n 10 $(if $(shell command -v ionice),ionice -c 3) $(BOOK_PYTHON) -m tools.torch_venvs venv

# Lighthouse (mobile, simulated throttling, the CPU slowdown lowered on a slow host) on the book's
# home page, reading paths, a section's index, a notebook page and three long pages, against an
# anchor measured in the same run (tests/test_lighthouse.py): LCP at most 2.5 s (or the anchor's),
# CLS under 0.1 and accessibility 100 everywhere; total blocking time per 1,000 elements at most
# 3x the same page's built with Material alone, or, for a long page with MATERIAL_DOCS=<a checkout
# of mkdocs-material>, at most the lowest of three of Material's own documentation pages'.
# Lighthouse is installed from tools/lighthouse/package-lock.json into $(LIGHTHOUSE) (npm ci, again
# only when the lock changes); node and Debian's chromium come from the system. Run it when nothing
# else runs (bash .ci/run runs it last).
LIGHTHOUSE := .cache/lighthouse
$(LIGHTHOUSE)/.installed: tools/lighthouse/package.json tools/lighthouse/package-lock.json
	rm -rf $(LIGHTHOUSE) && mkdir -p $(LIGHTHOUSE)
	cp tools/lighthouse/package.json tools/lighthouse/package-lock.json $(LIGHTHOUSE)/
	cd $(LIGHTHOUSE) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

lighthouse: $(STAMP) $(LIGHTHOUSE)/.installed
	BOOK_LIGHTHOUSE=1 MATERIAL_DOCS="$(MATERIAL_DOCS)" $(BIN)/python -m pytest -q -s --step lighthouse

# The book built with Zensical, Material's successor (`zensical build`, which reads mkdocs.yml),
# into $(ZENSICAL)/book/site: it shows that the templates and assets use nothing but what
# Material documents. Material stays the book's theme. Zensical, pinned in
# tools/zensical/requirements.txt, is set up in its own venv, $(ZENSICAL)/venv (again only when
# the pins change), never in .venv; mkdocs.yml, docs, overrides and snippets are copied to
# $(ZENSICAL)/book, so site/ is left alone. What Zensical does not do yet (mkdocs-jupyter,
# mermaid2, print-site, the build hooks) is listed on docs/reference/verification.md.
ZENSICAL := .cache/zensical
$(ZENSICAL)/venv/.installed: tools/zensical/requirements.txt
	rm -rf $(ZENSICAL)/venv && $(SERVE_PYTHON) -m venv $(ZENSICAL)/venv
	$(ZENSICAL)/venv/bin/python -m pip install --quiet --disable-pip-version-check -r tools/zensical/requirements.txt
	touch $@

zensical: $(ZENSICAL)/venv/.installed
	rm -rf $(ZENSICAL)/book && mkdir -p $(ZENSICAL)/book
	cp -R mkdocs.yml docs overrides snippets $(ZENSICAL)/book/
	cd $(ZENSICAL)/book && ../venv/bin/zensical build --clean

# One page: its blocks, diagrams and tables, and the tests of the snippets it uses.
test-page: $(STAMP)
	@args="$$($(BIN)/python -m tools.related $(PAGE))" && $(BIN)/python -m pytest -q $$args

# Which outputs and errors of the pages change on another torch: a report, not a test.
drift: $(STAMP)
	$(BIN)/python -m tools.drift --torch $(TORCH)

clean:
	rm -rf site $(VENV) $(SERVE_VENV)

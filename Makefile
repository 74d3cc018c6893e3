# The commands of the README: `make serve`, `make test`, `make test-page PAGE=...`,
# `make test-torch` and `make drift TORCH=...`. Each sets up .venv first; set-up is skipped when .venv is up to
# date with pyproject.toml and constraints.txt.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PAGE   ?= docs/part1/hand-trace.md
TORCH  ?= 2.14.1
export NO_MKDOCS_2_WARNING := 1

.PHONY: serve test test-cpu test-torch test-page build drift clean

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "the book needs Python 3.11; run: make PYTHON=/path/to/python3.11 ..."'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[book]'
	touch $(STAMP)

# Rebuilds only the pages whose source changed (a page added or deleted rebuilds all).
# Not strict: a warning (e.g. a new page not yet in the nav) is printed and the page still
# shows; `make build` and `make test` are strict.
serve: $(STAMP)
	$(BIN)/mkdocs serve --dirty --no-strict --dev-addr 127.0.0.1:8000

build: $(STAMP)
	$(BIN)/mkdocs build --strict

# Checks that passed before with identical inputs are not run again; FRESH=1 runs every check.
test: $(STAMP)
	$(BIN)/python -m pytest $(if $(FRESH),--fresh)

# The pages' blocks again on torch's plain CPU kernels (no vector instructions): a block whose
# output depends on the order in which this CPU adds floats fails here. CI runs it after `test`.
test-cpu: $(STAMP)
	ATEN_CPU_CAPABILITY=default $(BIN)/python -m pytest -q docs

# Every page's blocks on the other verified torch versions (mkdocs.yml, extra.torch_also), in
# a second venv under .cache/torch-VERSION/ (set up once, about 6 GB). CI runs it after test-cpu.
test-torch: $(STAMP)
	$(BIN)/python -m bookcheck.versions test

# One page: its blocks, diagrams and tables, and the tests of the snippets it uses.
test-page: $(STAMP)
	@args="$$($(BIN)/python -m bookcheck.related $(PAGE))" && $(BIN)/python -m pytest -q $$args

# Which outputs and errors of the pages change on another torch: a report, not a test.
drift: $(STAMP)
	$(BIN)/python -m bookcheck.drift --torch $(TORCH)

clean:
	rm -rf site $(VENV)

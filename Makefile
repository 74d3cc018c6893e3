# The two commands of the README: `make serve` and `make test`. Each sets up .venv first,
# and set-up is skipped when .venv is already up to date with pyproject.toml and constraints.txt.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export NO_MKDOCS_2_WARNING := 1

.PHONY: serve test build clean

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "the book needs Python 3.11; run: make PYTHON=/path/to/python3.11 ..."'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[book]'
	touch $(STAMP)

serve: $(STAMP)
	$(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

build: $(STAMP)
	$(BIN)/mkdocs build --strict

test: $(STAMP)
	$(BIN)/python -m pytest

clean:
	rm -rf site $(VENV)

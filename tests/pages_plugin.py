"""pytest plugin (loaded with -p in pyproject.toml): every page of docs/ becomes tests.

Per page: its guard, each runnable block, each autograd-graph diagram and each hand-trace
table (harness.py says what each check means).
"""

import pytest

import harness

MARKERS = {
    "raises": 'raises("TypeName", match="regex"): the block must raise exactly that, and shows it',
    "warns": 'warns("TypeName", match="regex"): the block must emit that warning',
    "cont": "the block continues the previous python block of the page (same namespace)",
    "graph_of": 'graph_of("name"): a mermaid diagram that must equal the autograd graph of name',
    "diagram_from": 'diagram_from("expr"): a mermaid diagram that must equal expr, evaluated after the block above',
}


def pytest_configure(config):
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".md" and harness.DOCS in file_path.resolve().parents:
        return Page.from_parent(parent, path=file_path)
    return None


class Page(pytest.File):
    def collect(self):
        yield Check.from_parent(self, name="guard", run=lambda: _guard(self.path))
        try:
            blocks = harness.parse_page(self.path)
        except (RuntimeError, harness.HarnessError):
            return  # the guard item reports it
        for b in blocks:
            if b.syntax in harness.RUN_SYNTAX:
                skip = b.mark("skip")
                item = Check.from_parent(
                    self, name=f"line {b.lineno}", run=lambda b=b: harness.check_block(blocks, b)
                )
                if skip is not None:
                    item.add_marker(pytest.mark.skip(reason=f"{b.where}: {harness._reason(skip)}"))
                yield item
            elif b.syntax in harness.DIAGRAM_SYNTAX and any(b.mark(m) for m in harness.DIAGRAM_MARKS):
                yield Check.from_parent(
                    self, name=f"line {b.lineno} diagram", run=lambda b=b: harness.check_diagram(blocks, b)
                )
        try:
            tables = harness.table_checks(self.path)
        except harness.HarnessError as exc:
            yield Check.from_parent(self, name="tables", run=lambda exc=exc: _raise(exc))
            return
        for table, check in tables:
            yield Check.from_parent(self, name=f"line {table.lineno} {table.kind} table", run=check)


def _guard(path):
    problems = harness.guard(path)
    if problems:
        raise harness.HarnessError("\n".join(problems))


def _raise(exc):
    raise exc


class Check(pytest.Item):
    def __init__(self, *, run, **kwargs):
        super().__init__(**kwargs)
        self._run = run

    def runtest(self):
        self._run()

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, harness.HarnessError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        # pytest needs an int line (0-based) for skipped items: take it from the name.
        digits = "".join(c for c in self.name.split()[1] if c.isdigit()) if " " in self.name else ""
        return self.path, int(digits) - 1 if digits else 0, f"{self.path.name}::{self.name}"


def pytest_terminal_summary(terminalreporter):
    pages = sorted(harness.DOCS.rglob("*.md"))
    try:
        counts, reasons = harness.fence_counts(pages)
    except Exception as exc:  # noqa: BLE001 - the guard tests report broken pages
        terminalreporter.write_line(f"fence counts unavailable: {exc}")
        return
    terminalreporter.section("fences in docs/")
    terminalreporter.write_line(f"{len(pages)} pages: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    for reason in reasons:
        terminalreporter.write_line(f"  skipped {reason}")

"""The verification harness: every fence of every page, run or checked, or rejected.

Parsing and markers are pytest-codeblocks' (``extract_from_buffer``); this module adds what
the book's promises need and pytest-codeblocks does not do:

* snippet includes (``--8<--``) are expanded by pymdownx.snippets itself, configured from
  mkdocs.yml, so a block runs exactly as the reader sees it;
* a guard classifies every fence and rejects, naming ``file:line``, any fence that is not run,
  not a verified output, not a diagram and not skipped with a reason;
* ``<!--pytest.mark.raises("TypeName", match="regex")-->``: the block must raise exactly that
  type with a message matching ``regex``; the output block under it shows what the reader
  sees (stdout, then the exception line as Python prints it);
* ``<!--pytest-codeblocks:cont-->``: the block continues the previous python block of the page
  and runs after it in one namespace (as in a reader's session); each keeps its own output;
* ``<!--pytest.mark.warns("TypeName", match="regex")-->``: the block must warn so; any warning
  not declared fails the block;
* torch global state is reset before every block and a block that leaves it changed fails;
  each block runs twice, under two different RNG seeds, and must print the same both times;
* ``<!--pytest.mark.graph_of("L")-->`` on a mermaid fence: the diagram must be the autograd
  graph of ``L`` (from the python block above) as ``snippets.autograd_graph`` walks it;
* ``<!-- hand-trace: forward -->`` / ``<!-- hand-trace: backward -->`` before a table: every
  number of the table is recomputed with torch.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import io
import random
import re
import subprocess
import sys
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pytest_codeblocks import extract_from_buffer

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

RUN_SYNTAX = {"python", "sh", "bash"}
DIAGRAM_SYNTAX = {"mermaid"}
KNOWN_MARKS = {"skip", "raises", "warns", "cont", "graph_of"}
MIN_REASON = 12  # characters; "because" alone is not a reason
SEEDS = (0, 1234)


class HarnessError(AssertionError):
    """A check of a page failed; the message says where and what to do."""


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


@dataclass
class Block:
    path: Path
    lineno: int
    syntax: str
    code: str  # as written in the page (snippet lines not expanded)
    expected_output: str | None
    marks: list = field(default_factory=list)  # evaluated pytest MarkDecorators' .mark
    cont: bool = False

    @property
    def where(self) -> str:
        try:
            rel = self.path.relative_to(ROOT)
        except ValueError:
            rel = self.path
        return f"{rel}:{self.lineno}"

    def mark(self, name):
        found = [m for m in self.marks if m.name == name]
        return found[0] if found else None


def _eval_mark(text, where):
    try:
        decorator = eval(text, {"pytest": pytest, "sys": sys})
    except Exception as exc:  # noqa: BLE001 - reported with its location
        raise HarnessError(f"{where}: cannot read marker <!--{text}-->: {exc}") from None
    return decorator.mark


def parse_page(path: Path) -> list[Block]:
    """Every ``` fence of a page, with its markers, via pytest-codeblocks' parser.

    ``<!--pytest-codeblocks:cont-->`` is turned into a marker of the next block (same line
    count), because pytest-codeblocks would paste the code into the previous fence of any
    language and lose the output blocks in between.
    """
    text = Path(path).read_text(encoding="utf-8")
    text = re.sub(r"<!--[-\s]*pytest-codeblocks:\s*cont[-\s]*-->", "<!--pytest.mark.cont-->", text)
    raw = extract_from_buffer(io.StringIO(text))
    blocks = []
    for cb in raw:
        block = Block(Path(path), cb.lineno, (cb.syntax or "").strip(), cb.code, cb.expected_output)
        block.marks = [_eval_mark(m, block.where) for m in cb.marks]
        block.cont = block.mark("cont") is not None
        blocks.append(block)
    return blocks


@functools.lru_cache(maxsize=1)
def _snippet_config():
    from mkdocs.config import load_config

    config = load_config(str(ROOT / "mkdocs.yml"))
    return dict(config["mdx_configs"].get("pymdownx.snippets", {}))


def expand_snippets(code: str) -> str:
    """Expand ``--8<--`` lines with pymdownx.snippets, configured as in mkdocs.yml."""
    if "--8<--" not in code:
        return code
    import markdown

    cfg = _snippet_config()
    cfg["base_path"] = [str(ROOT / p) for p in cfg.get("base_path", ["."])]
    md = markdown.Markdown(extensions=["pymdownx.snippets"], extension_configs={"pymdownx.snippets": cfg})
    lines = md.preprocessors["snippet"].run(code.splitlines())
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# The guard: every fence accounted for
# --------------------------------------------------------------------------------------------


def _reason(mark):
    reason = mark.kwargs.get("reason") or (mark.args[0] if mark.args else "")
    return str(reason).strip()


def guard(path: Path) -> list[str]:
    """Problems with the fences of a page, each as ``file:line: what is wrong; what to do``."""
    problems = []
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    in_fence = None  # number of backticks of the open ``` fence
    in_tilde = False
    for i, line in enumerate(lines, 1):
        s = line.lstrip()
        if in_fence is None and s.startswith("~~~"):
            if not in_tilde:
                problems.append(f"{_rel(path)}:{i}: a ~~~ fence is never run or checked; use ``` fences")
            in_tilde = not in_tilde
            continue
        if in_tilde:
            continue
        if s.startswith("```"):
            ticks = len(s) - len(s.lstrip("`"))
            if in_fence is None:
                in_fence = ticks
            elif ticks >= in_fence and not s.strip("`").strip():
                in_fence = None
        if in_fence is None and re.match(r"<!--\s*hand-trace", s) and not re.match(
            r"<!--\s*hand-trace:\s*(forward|backward)\s*-->", s
        ):
            problems.append(f"{_rel(path)}:{i}: write <!-- hand-trace: forward --> or <!-- hand-trace: backward -->")

    try:
        blocks = parse_page(path)
    except (RuntimeError, HarnessError) as exc:
        return problems + [f"{_rel(path)}: cannot parse its fences: {exc}"]

    previous_run = None
    for b in blocks:
        unknown = [m.name for m in b.marks if m.name not in KNOWN_MARKS]
        if "xfail" in unknown:
            problems.append(
                f"{b.where}: pytest.mark.xfail accepts any exception; use "
                '<!--pytest.mark.raises("TypeName", match="part of the message")-->'
            )
        elif unknown:
            problems.append(f"{b.where}: unknown marker(s) {unknown}; known: {sorted(KNOWN_MARKS)}")
        skip = b.mark("skip")
        if skip is not None and len(_reason(skip)) < MIN_REASON:
            problems.append(
                f'{b.where}: a skipped block needs a reason a reader would accept: '
                f'<!--pytest.mark.skip(reason="...")-->'
            )
        if b.syntax in RUN_SYNTAX:
            if b.cont:
                if previous_run is None:
                    problems.append(f"{b.where}: cont, but no python/sh block above it on this page")
                elif previous_run.mark("skip") is not None and skip is None:
                    problems.append(f"{b.where}: cont continues {previous_run.where}, which is skipped")
            if b.mark("graph_of") is not None:
                problems.append(f"{b.where}: graph_of belongs on a mermaid fence")
            previous_run = b
        elif b.syntax in DIAGRAM_SYNTAX:
            if b.expected_output is not None:
                problems.append(f"{b.where}: an output block follows a diagram; outputs follow a python block")
            for name in ("raises", "warns", "cont"):
                if b.mark(name) is not None:
                    problems.append(f"{b.where}: {name} does not apply to a diagram")
        elif skip is None:
            if b.syntax.split()[0:1] in (["python"], ["py"], ["python3"], ["pycon"]):
                why = (
                    f"its info string is {b.syntax!r}, which pytest-codeblocks never runs; "
                    "write exactly ```python"
                )
            else:
                why = f"a {b.syntax or 'plain'!r} fence is neither run, nor an output, nor a diagram"
            problems.append(
                f"{b.where}: {why} (or mark it <!--pytest.mark.skip(reason=\"...\")--> "
                "with a reason a reader would accept)"
            )
        elif b.expected_output is not None:
            problems.append(f"{b.where}: an output block follows a {b.syntax!r} fence that is not run")
    return problems


def _rel(path):
    try:
        return Path(path).resolve().relative_to(ROOT)
    except ValueError:
        return path


# --------------------------------------------------------------------------------------------
# Torch global state
# --------------------------------------------------------------------------------------------


def torch_state() -> dict:
    """Every piece of process-wide torch state a block could change and a later block notice."""
    import torch
    import torch.utils.deterministic

    opts = torch._tensor_str.PRINT_OPTS
    return {
        "grad mode (torch.is_grad_enabled())": torch.is_grad_enabled(),
        "inference mode": torch.is_inference_mode_enabled(),
        "anomaly mode": torch.is_anomaly_enabled(),
        "anomaly check_nan": torch.is_anomaly_check_nan_enabled(),
        "deterministic algorithms": torch.are_deterministic_algorithms_enabled(),
        "deterministic warn_only": torch.is_deterministic_algorithms_warn_only_enabled(),
        "fill_uninitialized_memory": torch.utils.deterministic.fill_uninitialized_memory,
        "cudnn.deterministic": torch.backends.cudnn.deterministic,
        "cudnn.benchmark": torch.backends.cudnn.benchmark,
        "default dtype": torch.get_default_dtype(),
        "threads": torch.get_num_threads(),
        "print options": (opts.precision, opts.threshold, opts.edgeitems, opts.linewidth, opts.sci_mode),
        "autocast (cpu)": torch.is_autocast_enabled("cpu"),
    }


@functools.lru_cache(maxsize=1)
def baseline_state() -> dict:
    return torch_state()


def reset_torch_state(seed: int) -> None:
    """Put torch back to the baseline and seed every RNG a block might use."""
    import numpy
    import torch
    import torch.utils.deterministic

    base = baseline_state()
    torch._C._set_grad_enabled(base["grad mode (torch.is_grad_enabled())"])
    torch.autograd.set_detect_anomaly(base["anomaly mode"], base["anomaly check_nan"])
    torch.use_deterministic_algorithms(
        base["deterministic algorithms"], warn_only=base["deterministic warn_only"]
    )
    torch.utils.deterministic.fill_uninitialized_memory = base["fill_uninitialized_memory"]
    torch.backends.cudnn.deterministic = base["cudnn.deterministic"]
    torch.backends.cudnn.benchmark = base["cudnn.benchmark"]
    torch.set_default_dtype(base["default dtype"])
    torch.set_num_threads(base["threads"])
    torch.set_printoptions(profile="default")
    torch.set_printoptions(sci_mode=base["print options"][4])
    random.seed(seed)
    numpy.random.seed(seed)
    torch.manual_seed(seed)


def state_leaks() -> list[str]:
    now, base = torch_state(), baseline_state()
    return [f"{k}: {base[k]!r} -> {now[k]!r}" for k in base if now[k] != base[k]]


# --------------------------------------------------------------------------------------------
# Running blocks
# --------------------------------------------------------------------------------------------


def _type_matches(exc_or_warning_type, name: str) -> bool:
    t = exc_or_warning_type
    return name in {t.__name__, f"{t.__module__}.{t.__qualname__}"}


def _expect(mark, what):
    if not mark.args:
        raise HarnessError(f'{what} needs the type name first, e.g. ("RuntimeError", match="...")')
    match = mark.kwargs.get("match")
    if not match:
        raise HarnessError(f'{what} needs match="part of the message", so the message is asserted')
    return str(mark.args[0]), match


def run_block(block: Block, namespace: dict) -> str:
    """Run one block in ``namespace``; return what the reader sees (stdout, error line).

    Raises HarnessError if it raises or warns other than as its markers declare.
    """
    code = expand_snippets(block.code)
    if block.syntax != "python":
        return _run_shell(block, code)

    raises, warns = block.mark("raises"), block.mark("warns")
    out = io.StringIO()
    caught = None
    with warnings.catch_warnings(record=True) as seen, contextlib.redirect_stdout(out):
        warnings.simplefilter("always")
        try:
            exec(compile(code, block.where, "exec"), namespace)  # noqa: S102 - that is the job
        except Exception as exc:  # noqa: BLE001 - compared with the marker below
            caught = exc
    shown = out.getvalue()

    if raises is None and caught is not None:
        tb = "".join(traceback.format_exception(caught))
        raise HarnessError(f"{block.where}: the block raised\n{tb}")
    if raises is not None:
        want_type, match = _expect(raises, "raises")
        if caught is None:
            raise HarnessError(f"{block.where}: expected {want_type} matching {match!r}, but the block did not raise")
        if not _type_matches(type(caught), want_type):
            raise HarnessError(
                f"{block.where}: expected {want_type}, got {type(caught).__module__}."
                f"{type(caught).__qualname__}: {caught}"
            )
        if not re.search(match, str(caught)):
            raise HarnessError(
                f"{block.where}: {want_type} raised, but its message does not match {match!r}:\n{caught}"
            )
        shown += "".join(traceback.format_exception_only(type(caught), caught))

    undeclared = list(seen)
    if warns is not None:
        want_type, match = _expect(warns, "warns")
        hits = [w for w in seen if _type_matches(w.category, want_type) and re.search(match, str(w.message))]
        if not hits:
            got = "; ".join(f"{w.category.__name__}: {w.message}" for w in seen) or "no warning"
            raise HarnessError(f"{block.where}: expected {want_type} matching {match!r}; got {got}")
        undeclared = [w for w in seen if w not in hits]
    if undeclared:
        got = "\n".join(f"  {w.category.__name__}: {w.message}" for w in undeclared)
        raise HarnessError(
            f"{block.where}: the block warned, and the page does not say so:\n{got}\n"
            'Fix the code, or declare it: <!--pytest.mark.warns("UserWarning", match="...")-->'
        )
    return shown


def _run_shell(block, code):
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    raises = block.mark("raises")
    if raises is None and proc.returncode != 0:
        raise HarnessError(f"{block.where}: exit status {proc.returncode}\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def compare_output(block: Block, shown: str) -> None:
    if block.expected_output is None:
        if shown:
            raise HarnessError(
                f"{block.where}: the block prints, but the page shows no output block under it.\n"
                f"Add <!--pytest-codeblocks:expected-output--> and a ```text fence with:\n{shown}"
            )
        return
    if shown != block.expected_output:
        diff = "".join(
            difflib.unified_diff(
                block.expected_output.splitlines(True), shown.splitlines(True), "page shows", "block prints"
            )
        )
        raise HarnessError(f"{block.where}: the output shown on the page differs from the real output:\n{diff}")


def chain_of(blocks: list[Block], block: Block) -> list[Block]:
    """The python blocks that ``block`` continues (through cont), then ``block``."""
    runs = [b for b in blocks if b.syntax in RUN_SYNTAX]
    i = runs.index(block)
    chain = [block]
    while chain[0].cont and i > 0:
        i -= 1
        chain.insert(0, runs[i])
    return chain


def run_chain(chain: list[Block], seed: int) -> tuple[dict, str]:
    """Reset torch, run ``chain`` in one fresh namespace; return it and the last block's output."""
    reset_torch_state(seed)
    namespace = {"__name__": "__main__"}
    shown = ""
    try:
        for b in chain:
            try:
                shown = run_block(b, namespace)
            except HarnessError as exc:
                if b is chain[-1]:
                    raise
                raise HarnessError(f"{chain[-1].where} continues {b.where}, which failed:\n{exc}") from None
        leaks = state_leaks()
        if leaks:
            raise HarnessError(
                f"{chain[-1].where}: the block left torch global state changed, so later code "
                "in a reader's session behaves differently:\n  " + "\n  ".join(leaks) +
                "\nScope the change (e.g. `with torch.no_grad():`) or restore it at the end of the block."
            )
    finally:
        reset_torch_state(SEEDS[0])
    return namespace, shown


def check_block(blocks: list[Block], block: Block) -> None:
    """The whole check of one runnable block: run twice (two seeds), compare the output."""
    chain = chain_of(blocks, block)
    _, first = run_chain(chain, SEEDS[0])
    compare_output(block, first)
    _, second = run_chain(chain, SEEDS[1])
    if second != first:
        raise HarnessError(
            f"{block.where}: the block printed something else on a second run with another RNG "
            "seed; seed it inside the block (torch.manual_seed) so the reader sees these numbers:\n"
            f"first run:\n{first}second run:\n{second}"
        )


# --------------------------------------------------------------------------------------------
# Diagrams of autograd graphs
# --------------------------------------------------------------------------------------------


def check_graph_diagram(blocks: list[Block], diagram: Block) -> None:
    from snippets.autograd_graph import to_mermaid
    import torch

    mark = diagram.mark("graph_of")
    if not mark.args:
        raise HarnessError(f'{diagram.where}: write graph_of("name of the tensor")')
    name = mark.args[0]
    above = [b for b in blocks if b.syntax == "python" and b.lineno < diagram.lineno]
    if not above:
        raise HarnessError(f"{diagram.where}: graph_of needs a python block above the diagram")
    namespace, _ = run_chain(chain_of(blocks, above[-1]), SEEDS[0])
    if name not in namespace:
        raise HarnessError(f"{diagram.where}: the block at {above[-1].where} defines no {name!r}")
    leaves = {k: v for k, v in namespace.items() if isinstance(v, torch.Tensor) and v.is_leaf}
    direction = diagram.code.split()[1] if len(diagram.code.split()) > 1 else "LR"
    want = to_mermaid(namespace[name], leaves, direction=direction)
    if diagram.code.strip() != want.strip():
        raise HarnessError(
            f"{diagram.where}: the diagram is not the graph autograd recorded for {name!r}.\n"
            f"grad_fn walk gives:\n{want}\n\nthe page shows:\n{diagram.code}"
        )


# --------------------------------------------------------------------------------------------
# Hand-trace tables
# --------------------------------------------------------------------------------------------

NUMBER = re.compile(r"[-−]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
PARTIAL = re.compile(r"∂(\w+)\s*/\s*∂(\w+)")
LEAF_WORDS = {"input", "parameter", "leaf"}


@dataclass
class Table:
    path: Path
    lineno: int
    kind: str  # forward | backward
    rows: list  # list of list[str], header removed

    @property
    def where(self):
        return f"{_rel(self.path)}:{self.lineno}"


def parse_tables(path: Path) -> list[Table]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    tables = []
    for i, line in enumerate(lines):
        m = re.match(r"\s*<!--\s*hand-trace:\s*(forward|backward)\s*-->", line)
        if not m:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        body = []
        while j < len(lines) and lines[j].strip().startswith("|"):
            body.append(lines[j])
            j += 1
        if len(body) < 3:
            raise HarnessError(f"{_rel(path)}:{i + 1}: a hand-trace marker must be followed by a table")
        rows = [[_cell(c) for c in r.strip().strip("|").split("|")] for r in body[2:]]
        tables.append(Table(Path(path), i + 2, m.group(1), rows))
    return tables


def _cell(text):
    return text.strip().replace("`", "").replace("\\|", "|").strip()


def _last_number(cell, where, what):
    found = NUMBER.findall(cell)
    if not found:
        raise HarnessError(f"{where}: no number in the {what} cell {cell!r}")
    return float(found[-1].replace("−", "-"))


def _close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def forward_namespace(table: Table) -> tuple[dict, str]:
    """Recompute a forward table with torch; return the tensors by name and the loss's name."""
    import torch

    ns = {}
    for row in table.rows:
        if len(row) < 3:
            raise HarnessError(f"{table.where}: a forward row needs | name | computed as | value |: {row}")
        name, how, value = row[0], row[1], _last_number(row[2], table.where, "value")
        if how.lower() in LEAF_WORDS:
            ns[name] = torch.tensor(value, dtype=torch.float64, requires_grad=True)
            continue
        try:
            ns[name] = eval(how, {"torch": torch}, dict(ns))  # noqa: S307 - a page's own formula
        except Exception as exc:  # noqa: BLE001
            raise HarnessError(f"{table.where}: row {name}: cannot compute {how!r}: {exc}") from None
        if not _close(ns[name].item(), value):
            raise HarnessError(
                f"{table.where}: row {name} = {how}: the table says {value:g}, torch computes {ns[name].item():g}"
            )
    return ns, table.rows[-1][0]


def check_backward(forward: Table, table: Table) -> None:
    """Check every number of a backward table: local x upstream = gradient, each against torch."""
    from snippets.hand_trace import gradients
    import torch

    ns, loss_name = forward_namespace(forward)
    loss = ns[loss_name]
    grads = gradients(loss, **ns)
    for row in table.rows:
        if len(row) < 4:
            raise HarnessError(f"{table.where}: a backward row needs | node | local | upstream | gradient |: {row}")
        node, local_cell, up_cell, grad_cell = row[:4]
        if node not in ns:
            raise HarnessError(f"{table.where}: {node!r} is not a row of the forward table at {forward.where}")
        grad = _last_number(grad_cell, table.where, "gradient")
        torch_grad = grads[node].item()
        if not _close(grad, torch_grad):
            raise HarnessError(f"{table.where}: ∂{loss_name}/∂{node}: the table says {grad:g}, torch computes {torch_grad:g}")
        if node == loss_name:
            continue
        partial = PARTIAL.search(local_cell)
        if not partial or partial.group(2) != node or partial.group(1) not in ns:
            raise HarnessError(
                f"{table.where}: row {node}: the local derivative must name its consumer, as ∂consumer/∂{node} = ..."
            )
        consumer = partial.group(1)
        local = _last_number(local_cell, table.where, "local derivative")
        upstream = _last_number(up_cell, table.where, "upstream")
        (torch_local,) = torch.autograd.grad(ns[consumer], ns[node], retain_graph=True)
        checks = [
            (f"∂{consumer}/∂{node}", local, torch_local.item()),
            (f"upstream ∂{loss_name}/∂{consumer}", upstream, grads[consumer].item()),
            (f"local x upstream for {node}", local * upstream, grad),
        ]
        for what, page, truth in checks:
            if not _close(page, truth):
                raise HarnessError(f"{table.where}: {what}: the table says {page:g}, but it is {truth:g}")


def table_checks(path: Path):
    """(where, callable) for every hand-trace table of a page."""
    checks, forward = [], None
    for t in parse_tables(path):
        if t.kind == "forward":
            forward = t
            checks.append((t, functools.partial(forward_namespace, t)))
        else:
            if forward is None:
                raise HarnessError(f"{t.where}: a backward table needs a forward table above it")
            checks.append((t, functools.partial(check_backward, forward, t)))
    return checks


# --------------------------------------------------------------------------------------------
# One entry point for tests of fixture pages
# --------------------------------------------------------------------------------------------


def check_page(path: Path) -> list[str]:
    """Run every check of a page; return the failures' messages (empty: the page passes)."""
    failures = list(guard(path))
    if failures:
        return failures
    blocks = parse_page(path)
    for b in blocks:
        try:
            if b.syntax in RUN_SYNTAX and b.mark("skip") is None:
                check_block(blocks, b)
            elif b.syntax in DIAGRAM_SYNTAX and b.mark("graph_of") is not None:
                check_graph_diagram(blocks, b)
        except HarnessError as exc:
            failures.append(str(exc))
    try:
        for _, check in table_checks(path):
            try:
                check()
            except HarnessError as exc:
                failures.append(str(exc))
    except HarnessError as exc:
        failures.append(str(exc))
    return failures

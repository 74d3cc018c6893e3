"""Running blocks: one block, a cont chain once per seed, and the whole check of a block.

A chain (a block and the blocks it continues through ``cont``) runs once per seed in one
namespace; what each block prints, or how it fails, is recorded per block. A block is then
checked against its own record: its output, its second-seed output, the state it left.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import re
import subprocess
import traceback
import warnings
from dataclasses import dataclass

from . import ROOT, HarnessError, worker
from .model import Block, expand_snippets
from .state import reset_torch_state, state_leaks
from .versions import running

SEEDS = (0, 1234)


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
    if block.shell:
        return _run_shell(block, code)

    raises, warns = block.mark("raises"), block.mark("warns")
    out = io.StringIO()
    caught = None
    with warnings.catch_warnings(record=True) as seen, contextlib.redirect_stdout(out):
        warnings.simplefilter("always")
        # Python ignores ResourceWarning by default, so a reader never sees one either.
        warnings.simplefilter("ignore", ResourceWarning)
        # ...nor a DeprecationWarning that library code triggers (one a library module emits when
        # it is imported, say); one triggered by the block's own code (__main__) is shown.
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("always", category=DeprecationWarning, module="__main__")
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
            f'Fix the code, or declare it: <!--pytest.mark.warns("{undeclared[0].category.__name__}", '
            'match="...")--> (the type must be exact: a subclass does not count)'
        )
    return shown


def _run_shell(block, code):
    """A sh/bash block. With raises("TypeName", match=...), it must exit non-zero and its
    error output must end with a ``TypeName: message`` line matching; the reader sees
    stdout, then that line."""
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    raises = block.mark("raises")
    if raises is None:
        if proc.returncode != 0:
            raise HarnessError(f"{block.where}: exit status {proc.returncode}\n{proc.stdout}{proc.stderr}")
        return proc.stdout
    want_type, match = _expect(raises, "raises")
    if proc.returncode == 0:
        raise HarnessError(f"{block.where}: expected {want_type} matching {match!r}, but the command succeeded")
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    got_type, _, message = last.partition(": ")
    if got_type.strip() != want_type and got_type.strip().rsplit(".", 1)[-1] != want_type:
        raise HarnessError(
            f"{block.where}: expected {want_type}, but the command failed (exit {proc.returncode}) with:\n"
            f"{proc.stderr[-2000:]}"
        )
    if not re.search(match, message):
        raise HarnessError(f"{block.where}: {want_type} raised, but its message does not match {match!r}:\n{message}")
    return proc.stdout + last + "\n"


def compare_output(block: Block, shown: str) -> None:
    """``shown`` against the output the page shows for the torch running here (the same
    message on every version: tools.torch_venvs.test says how to show another version's)."""
    expected = block.output_for(running())
    if expected is None:
        if shown:
            raise HarnessError(
                f"{block.where}: the block prints, but the page shows no output block under it.\n"
                f"Add <!--pytest-codeblocks:expected-output--> and a ```text fence with:\n{shown}"
            )
        return
    if shown != expected:
        diff = "".join(
            difflib.unified_diff(expected.splitlines(True), shown.splitlines(True), "page shows", "block prints"))
        raise HarnessError(f"{block.where}: the output shown on the page differs from the real output:\n{diff}")


def runs_of(blocks: list[Block]) -> list[Block]:
    return [b for b in blocks if b.runnable]


def chain_of(blocks: list[Block], block: Block) -> list[Block]:
    """The python blocks that ``block`` continues (through cont), then ``block``."""
    runs = runs_of(blocks)
    i = runs.index(block)
    chain = [block]
    while chain[0].cont and i > 0:
        i -= 1
        chain.insert(0, runs[i])
    return chain


def longest_chain(blocks: list[Block], block: Block) -> list[Block]:
    """``chain_of(block)`` extended by the run blocks that continue it (not skipped ones)."""
    runs = runs_of(blocks)
    i = runs.index(block)
    while i + 1 < len(runs) and runs[i + 1].cont and runs[i + 1].mark("skip") is None:
        i += 1
    return chain_of(blocks, runs[i])


@dataclass
class Outcome:
    """What one block did in one run of its chain: printed ``shown``, or failed ``error``."""

    shown: str = ""
    error: str | None = None


def run_recorded(chain: list[Block], seed: int, after=None) -> dict[int, Outcome]:
    """Reset torch, run ``chain`` in one fresh namespace; record each block's outcome. This runs
    in a worker process (bookcheck.worker; PageRuns hands chains to it).

    A block after a failed one is not run; it fails as continuing it. A block that leaves
    torch global state changed fails (the chain goes on, as a reader's session would).
    ``after``: {block id: fn(namespace)}, called right after that block has run without error
    (a diagram checked against code reads the namespace at its place in the page).
    """
    reset_torch_state(seed)
    namespace = {"__name__": "__main__"}
    results: dict[int, Outcome] = {}
    failed = None
    try:
        for b in chain:
            if failed is not None:
                results[id(b)] = Outcome(error=f"{b.where} continues {failed[0].where}, which failed:\n{failed[1]}")
                continue
            try:
                shown = run_block(b, namespace)
            except HarnessError as exc:
                failed = (b, exc)
                results[id(b)] = Outcome(error=str(exc))
                continue
            leaks = state_leaks()
            if leaks:
                results[id(b)] = Outcome(shown=shown, error=(
                    f"{b.where}: the block left torch global state changed, so later code "
                    "in a reader's session behaves differently:\n  " + "\n  ".join(leaks) +
                    "\nScope the change (e.g. `with torch.no_grad():`) or restore it at the end of the block."
                ))
            else:
                results[id(b)] = Outcome(shown=shown)
            if after and id(b) in after:
                after[id(b)](namespace)
    finally:
        reset_torch_state(SEEDS[0])
    return results


# The runs of every python block: (seed, kernels). The second seed runs on torch's plain CPU
# kernels and MKL's path for any x86-64 CPU (bookcheck.worker.PLAIN_ENVIRONMENT), so one
# comparison proves both that the block seeds what it draws and that its output depends neither
# on this CPU's vector width nor on the BLAS kernel MKL picks for it.
RUNS = ((SEEDS[0], "machine"), (SEEDS[1], "plain"))
SECOND = ("torch's plain CPU kernels and MKL's path for any x86-64 CPU "
          "(ATEN_CPU_CAPABILITY=default, MKL_CBWR=COMPATIBLE)")


# ---- diagrams checked against code: what their code generates, read in a chain's run

def above_diagram(blocks: list[Block], diagram: Block, name: str) -> Block:
    above = [b for b in blocks if b.syntax == "python" and b.lineno < diagram.lineno]
    if not above:
        raise HarnessError(f"{diagram.where}: {name} needs a python block above the diagram")
    return above[-1]


def _expected(diagram: Block, name: str, namespace: dict, above: Block) -> tuple[str, str]:
    """(what the code generates, what it is) from the namespace right after ``above``."""
    from snippets.autograd_graph import to_mermaid
    import torch

    mark = diagram.mark(name)
    if name == "graph_of":
        tensor = mark.args[0]
        if tensor not in namespace:
            raise HarnessError(f"{diagram.where}: the block at {above.where} defines no {tensor!r}")
        leaves = {k: v for k, v in namespace.items() if isinstance(v, torch.Tensor) and v.is_leaf}
        direction = diagram.code.split()[1] if len(diagram.code.split()) > 1 else "LR"
        return to_mermaid(namespace[tensor], leaves, direction=direction), f"the graph autograd recorded for {tensor!r}"
    try:
        want = str(eval(mark.args[0], namespace))  # noqa: S307 - the page's own expression
    except Exception as exc:  # noqa: BLE001
        raise HarnessError(f"{diagram.where}: diagram_from({mark.args[0]!r}) failed: {exc}") from None
    return want, f"what {mark.args[0]} generates"


def diagram_probes(blocks: list[Block]) -> tuple[dict, dict]:
    """Probes for a chain's first-seed run (run_chain_text): {id of the block above a checked
    diagram: fn(namespace)}, and the record they fill, {diagram id: (want, what) or
    HarnessError}. The diagram is then checked against that run, which also checks the blocks."""
    record: dict = {}
    probes: dict = {}
    for d in blocks:
        if d.kind != "checked diagram":
            continue
        name = "graph_of" if d.mark("graph_of") is not None else "diagram_from"
        try:
            above = above_diagram(blocks, d, name)
        except HarnessError:
            continue  # reported by check_diagram

        def probe(namespace, d=d, name=name, above=above, previous=probes.get(id(above))):
            if previous is not None:
                previous(namespace)
            try:
                record[id(d)] = _expected(d, name, namespace, above)
            except HarnessError as exc:
                record[id(d)] = exc
            except Exception as exc:  # noqa: BLE001 - reported by the diagram's check, not the chain's
                record[id(d)] = HarnessError(f"{d.where}: generating the diagram failed: {type(exc).__name__}: {exc}")

        probes[id(above)] = probe
    return probes, record


def run_chain_text(blocks: list, chain: list[int], seed: int, probe: bool):
    """Run ``blocks[i] for i in chain`` (run_recorded) where it is called (a worker process,
    bookcheck.worker); return each block's (shown, error) in chain order, and {index of a
    checked diagram: (want, what) or an error message} when ``probe`` (the first seed's run of
    the chain, bookcheck.diagrams)."""
    probes, record = diagram_probes(blocks) if probe else ({}, {})
    results = run_recorded([blocks[i] for i in chain], seed, probes)
    outcomes = [(results[id(blocks[i])].shown, results[id(blocks[i])].error) for i in chain]
    index = {id(b): i for i, b in enumerate(blocks)}
    found = {index[d]: (str(v) if isinstance(v, HarnessError) else v) for d, v in record.items()}
    return outcomes, found


def run_chain(blocks: list, chain: list[int], seed: int, probe: bool, kernels: str):
    """``run_chain_text`` in the worker of ``kernels`` (bookcheck.worker). Chains run one at a
    time, so a worker that dies was killed by the chain it ran: every block of that chain fails,
    saying so, and the next chain gets a new worker."""
    try:
        return worker.call(kernels, run_chain_text, blocks, chain, seed, probe)
    except worker.WorkerDied as exc:
        error = (f"the worker process running this chain (from {blocks[chain[0]].where}) died: {exc} "
                 "A block crashed the interpreter (e.g. in C code, or called os._exit).")
        return [("", f"{blocks[i].where}: {error}") for i in chain], {}


class PageRuns:
    """The runs of one page's chains, each chain once per (seed, kernels) of RUNS, in worker
    processes (bookcheck.worker), asked for as the page's checks need them. The first seed's
    runs also record what each checked diagram's code generates (``diagrams``: {index of the
    diagram in ``blocks``: (want, what) or an error message})."""

    def __init__(self, blocks: list[Block]):
        self.blocks = blocks
        self._index = {id(b): i for i, b in enumerate(blocks)}
        self._done: dict[tuple, Outcome] = {}
        self.diagrams: dict = {}

    def outcome(self, block: Block, seed: int, kernels: str | None = None) -> Outcome:
        """``block``'s outcome in the run of its chain under ``seed`` on ``kernels`` (default:
        the kernels RUNS gives that seed)."""
        kernels = kernels or dict(RUNS)[seed]
        key = (id(block), seed, kernels)
        if key not in self._done:
            chain = [self._index[id(b)] for b in longest_chain(self.blocks, block)]
            probe = seed == SEEDS[0] and kernels == "machine"
            outcomes, found = run_chain(self.blocks, chain, seed, probe, kernels)
            for i, (shown, error) in zip(chain, outcomes):
                self._done[(id(self.blocks[i]), seed, kernels)] = Outcome(shown, error)
            self.diagrams.update(found)
        return self._done[key]

    def index(self, block: Block) -> int:
        return self._index[id(block)]


def check_block(blocks: list[Block], block: Block, runs: PageRuns | None = None, update=None,
                first_run_only: bool = False) -> None:
    """The whole check of one runnable block: its output compared with the page's, then a
    python block's output again under the second of RUNS (another seed, torch's plain CPU
    kernels), unless ``first_run_only``; a shell block runs once, since neither reaches its process.

    ``runs``: the page's recorded chains (each chain then runs once per run of RUNS for all
    its blocks); without it, the block's chain runs afresh. ``update``: a callable given the
    block and what it printed, used instead of failing when the output differs.
    """
    runs = runs or PageRuns(blocks)
    first = runs.outcome(block, SEEDS[0])
    if first.error:
        raise HarnessError(first.error)
    if update is not None and first.shown != (block.output_for(running()) or ""):
        update(block, first.shown)
    else:
        compare_output(block, first.shown)
    if block.shell or first_run_only:
        return  # a shell command runs in its own process: the harness's seed does not reach it
    second = runs.outcome(block, SEEDS[1])
    if second.error:
        raise HarnessError(f"on the second run (seed {SEEDS[1]}, {SECOND}):\n{second.error}")
    if second.shown != first.shown:
        third = runs.outcome(block, SEEDS[1], "machine")  # which of the two differences it is
        if third.error is None and third.shown == first.shown:
            raise HarnessError(
                f"{block.where}: the block printed something else on {SECOND} than on this machine's: "
                "the output depends on the order in which this CPU adds floats, and a reader's CPU is not "
                "this one (print fewer digits, a rounded value or a bound), or on what each Python process "
                "draws afresh, as the order of a set of strings (print it sorted):\n"
                f"this machine:\n{first.shown}plain kernels:\n{second.shown}"
            )
        raise HarnessError(
            f"{block.where}: the block printed something else on a second run with another RNG "
            "seed; seed it inside the block (torch.manual_seed) so the reader sees these numbers:\n"
            f"first run:\n{first.shown}second run:\n{third.shown if third.error is None else second.shown}"
        )


def page_check(context, block):
    """The registry's entry for a python, sh or bash fence (bookcheck.markers.CHECKS): the whole
    check of the block, or a skip with its reason."""
    from .markers import PageCheck

    skip = f"{block.where}: {block.mark('skip').reason}" if block.kind == "skipped" else None
    return PageCheck(f"line {block.lineno}", lambda: check_block(context.blocks, block, context.runs, context.update,
                                                                context.first_run_only),
                     skip, line=block.lineno)

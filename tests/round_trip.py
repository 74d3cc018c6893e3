"""Round trip from the built site: run the code as a reader copies it, compare what it prints.

For each page, the code of every block is taken from the browser exactly as the copy button
gives it (site_check.COPY_READER), and the page's python blocks are run in order in one fresh
interpreter, as a reader pasting them one after another into a Python session would. What
each block prints (and the exception line Python shows, for a block that raises) must equal
the output block the page shows under it. Which blocks are skipped comes from the page's
Markdown markers; everything that runs comes from the HTML.

A fresh interpreter per page: children of a fork server that has imported torch and nothing
else, one child per page, each in its own empty working directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import multiprocessing
import os
import tempfile
import traceback
from pathlib import Path

import harness

ROOT = harness.ROOT


def source_of(rel: str) -> Path | None:
    """The Markdown source of a built page (``part1/x/index.html`` -> docs/part1/x.md)."""
    if not rel.endswith("index.html"):
        return None
    stem = rel[: -len("index.html")].rstrip("/")
    for candidate in (harness.DOCS / f"{stem}.md", harness.DOCS / stem / "index.md") if stem else (harness.DOCS / "index.md",):
        if candidate.is_file():
            return candidate
    return None


def pair_blocks(copies: list[dict], md: Path) -> tuple[list[dict], list[str]]:
    """Match the page's copyable blocks (HTML order) with its Markdown fences.

    Returns ``[{"where", "code", "shown", "skip"}]`` for the python blocks, and problems.
    """
    expected = []
    for b in harness.parse_page(md):
        if b.syntax in harness.DIAGRAM_SYNTAX:
            continue  # rendered as a diagram: no copy button
        expected.append(("code", b))
        if b.expected_output is not None:
            expected.append(("output", b))
    if len(expected) != len(copies):
        return [], [
            f"the HTML has {len(copies)} copyable blocks, the Markdown {len(expected)}: "
            "something between the two adds or drops a block"
        ]
    blocks, problems = [], []
    for i, ((kind, b), copied) in enumerate(zip(expected, copies)):
        if kind == "output":
            if blocks and blocks[-1]["block"] is b:
                blocks[-1]["shown"] = copied["text"]
            continue
        if b.syntax == "python":
            if copied["lang"] != "python":
                problems.append(f"{b.where}: the HTML block in its place is {copied['lang'] or 'plain'}, not python")
                continue
            blocks.append({"block": b, "where": b.where, "code": copied["text"], "shown": None,
                           "skip": b.mark("skip") is not None})
    return blocks, problems


def copied_pages(inspected: dict) -> tuple[dict, dict]:
    """{page: python blocks as copied from the site}, and structural problems, from
    site_check.inspect_site()'s result."""
    pages, problems = {}, {}
    for rel, (result, _) in inspected.items():
        md = source_of(rel)
        if md is None or result.copies is None:
            continue
        blocks, found = pair_blocks(result.copies, md)
        if found:
            problems[rel] = found
        if blocks:
            pages[rel] = blocks
    return pages, problems


def _run_page(job: dict) -> list[str]:
    """Run in a fresh child: every block in one namespace; what each printed, or raised."""
    # A reader's own `python` on Linux starts processes by fork (Python 3.11's default); a
    # child of the fork server would otherwise inherit "forkserver" and pickle what it starts.
    multiprocessing.set_start_method("fork", force=True)
    with tempfile.TemporaryDirectory() as cwd:
        os.chdir(cwd)
        namespace = {"__name__": "__main__"}
        results = []
        for code in job["codes"]:
            if code is None:
                results.append(None)
                continue
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                try:
                    exec(compile(code + "\n", job["name"], "exec"), namespace)  # noqa: S102
                except Exception as exc:  # noqa: BLE001 - shown as the reader sees it
                    out.write("".join(traceback.format_exception_only(type(exc), exc)))
            results.append(out.getvalue())
        return results


def _child(job, conn):
    try:
        conn.send(_run_page(job))
    except BaseException as exc:  # noqa: BLE001 - reported as the page's failure
        conn.send([f"the page could not be run: {type(exc).__name__}: {exc}"] * len(job["codes"]))
    finally:
        conn.close()


def _run_all(jobs: list[dict], workers: int) -> list[list]:
    """One fresh child per page, ``workers`` at a time. Not a Pool: pool workers are
    daemonic, and a page may start processes of its own (data-loader workers, ranks)."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["torch", "numpy"])
    results: list = [None] * len(jobs)
    pending = list(enumerate(jobs))
    running = []
    while pending or running:
        while pending and len(running) < workers:
            i, job = pending.pop(0)
            receive, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_child, args=(job, send))
            proc.start()
            send.close()
            running.append((i, proc, receive))
        i, proc, receive = running.pop(0)
        try:
            results[i] = receive.recv()
        except EOFError:
            results[i] = [f"the page's interpreter died (exit code {proc.exitcode})"] * len(jobs[i]["codes"])
        proc.join(timeout=60)
    return results


def page_keys(pages: dict[str, list[dict]]) -> dict[str, str]:
    """What a page's round trip depends on: its copied blocks and the outputs it shows, the
    files a page's code can import or read (bookcheck.results: snippets/, docs/ but pages, the
    harness), this module and the environment."""
    from bookcheck import results

    common = results.Keys().page_common() + results.environment() + Path(__file__).read_text(encoding="utf-8")
    keys = {}
    for rel, blocks in pages.items():
        ran = [{k: b[k] for k in ("where", "code", "shown", "skip")} for b in blocks]
        h = hashlib.sha256((common + rel + json.dumps(ran, sort_keys=True)).encode())
        keys[rel] = h.hexdigest()[:40]
    return keys


def round_trip(pages: dict[str, list[dict]], workers: int = 2, memo=None) -> dict[str, list[str]]:
    """Run each page's copied blocks; return {page: problems} for pages whose output differs.
    With ``memo`` (a bookcheck.results.Memo), a page that passed before with the same key
    (page_keys) is not run again."""
    keys = page_keys(pages) if memo is not None else {}
    if memo is not None:
        pages = {rel: blocks for rel, blocks in pages.items() if not memo.passed_before(rel, keys[rel])}
    jobs = [{"name": rel, "codes": [None if b["skip"] else b["code"] for b in blocks]}
            for rel, blocks in pages.items()]
    outputs = _run_all(jobs, workers)
    problems = {}
    for (rel, blocks), got in zip(pages.items(), outputs):
        for b, printed in zip(blocks, got):
            if printed is None:
                continue
            shown = (b["shown"] or "").rstrip()
            if printed.rstrip() != shown:
                problems.setdefault(rel, []).append(
                    f"{b['where']}: copied from the site and run in order, the block prints\n"
                    f"{printed.rstrip()}\nbut the page shows\n{shown}"
                )
    if memo is not None:
        for rel in pages:
            memo.record(rel, keys[rel], rel not in problems)
        memo.save()
    return problems

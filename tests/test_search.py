"""The site's search box and error messages: a message pasted as a reader's terminal printed it
(tests/fixtures/error_pastes.toml, the cases of tests/test_explain.py) lists its own heading on
the page of errors first (or a section that shows the error); a GPU error lists its named
heading; a message the book does not show lists no heading of that page. The site rewrites such
a paste in the search box (docs/assets/js/search.js, search-query.js) with the rules and words
bookbuild/indexes.py puts in the search index; it must read each message as
`python -m snippets.explain` does.

Without a browser: the stop words the queries avoid are Material's, the rules are written in
the syntax Python and JavaScript share, each heading's query selects it alone among the
headings of the page, and the words a sentence with no error's name excludes leave out every
heading of that page. In the browser (the session's `browser` fixture, the built site): the
site's reading equals explain's, and what the search box lists.
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

import pastes
from bookbuild import indexes
from bookcheck import DOCS, site_a11y, site_check
from bookcheck.model import plugin_config
from snippets import explain

PAGES = sorted(DOCS.rglob("*.md"))
ENTRIES = explain._entries()
CASES = pastes.cases()

# Pieces of messages a reader copies (not a whole line) into the search box: a heading of an
# error that holds it, or a section that shows that error, comes first.
TYPED = (
    "modified by an inplace operation",
    "Trying to backward through the graph a second time",
    "a leaf Variable that requires grad is being used in an in-place operation",
    "element 0 of tensors does not require grad",
    "Inference tensors cannot be saved for backward",
    "grad can be implicitly created only for scalar outputs",
    "does not have vmap support",
    "no level exists",
    "has changed the type of value",
    "Expected more than 1 value per channel when training",
    "post accumulate grad hooks should return None",
    "forward gradient that has a different size",
)


def separator() -> str:
    return plugin_config("search")["separator"]


# --------------------------------------------------------------------------------------------
# Without a browser
# --------------------------------------------------------------------------------------------


def test_the_stop_words_are_those_of_materials_search():
    from pathlib import Path

    import material

    workers = list((Path(material.__file__).parent / "templates" / "assets" / "javascripts" / "workers").glob("search.*.js"))
    assert workers, "Material's search worker is not where it was"
    lists = re.findall(r"generateStopWordFilter\(\[([^\]]*)\]\)", workers[0].read_text(encoding="utf-8"))
    assert len(lists) == 1, "Material's worker holds no single list of stop words"
    assert set(json.loads(f"[{lists[0]}]")) == indexes.STOP_WORDS


def test_the_rules_are_written_in_syntax_python_and_javascript_share():
    for pattern, replacement in explain.RULES + ((explain.TYPE, ""), (explain.WORD, "")):
        re.compile(pattern, re.ASCII)
        for construct in ("(?P", "(?i", "(?s", "(?x", "(?#", r"\A", r"\Z", r"\z", "(?>", "*+", "++", "?+"):
            assert construct not in pattern, f"{pattern}: {construct} is Python's, or neither's"
        assert "\\" not in replacement and "$" not in replacement, replacement


def _model_search(query: str, titles: dict) -> set:
    """The headings a query of +title:word and -title:word clauses finds, as lunr finds them."""
    required = re.findall(r"\+title:(\S+)", query)
    excluded = re.findall(r"-title:(\S+)", query)
    return {a for a, words in titles.items() if set(required) <= words and not set(excluded) & words}


def test_each_heading_has_a_query_that_finds_it_alone():
    data = indexes.search_data(indexes.ERRORS_PAGE, PAGES, separator(), docs=[])
    entries = indexes.errors(PAGES) + indexes.named()
    titles = {indexes.site_address(indexes.ERRORS_PAGE, e.anchor): set(indexes._title_words(e.heading, separator()))
              for e in entries}
    assert len(data["entries"]) == len(entries) >= 80
    for entry in data["entries"]:
        assert entry["query"], f"{entry['address']}: no query finds its heading alone"
        assert not set(re.findall(r"title:(\S+)", entry["query"])) & indexes.STOP_WORDS, entry["query"]
        assert _model_search(entry["query"], titles) == {entry["address"]}, entry


def test_the_search_index_carries_the_rules_of_explain():
    data = indexes.search_data(indexes.ERRORS_PAGE, PAGES, separator(), docs=[])
    assert data["rules"] == [list(r) for r in explain.RULES] and data["type"] == explain.TYPE
    assert (data["cutoff"], data["same_start"], data["alone"], data["min_fragment"]) == (
        explain.CUTOFF, explain.SAME_START, explain.ALONE, explain.MIN_FRAGMENT)
    by_address = {e["address"]: e for e in ENTRIES}
    for entry in data["entries"]:
        assert entry["keys"] == by_address[entry["address"]]["keys"], entry["address"]


# --------------------------------------------------------------------------------------------
# In the browser
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(book):
    assert book.returncode == 0, book.log[-3000:]
    return book.site


@pytest.fixture(scope="module")
def served(built):
    with site_check.serve(built) as base:
        yield base


def _rows(built) -> set:
    """The addresses of the headings of the page of errors (each error's, the named ones)."""
    full = json.loads((built / "search" / "search_index.json").read_text(encoding="utf-8"))
    return {e["address"] for e in full["book_errors"]["entries"]}


def _book_errors(built):
    """The index's "book_errors" as the built site serves it (search.js reads the same file)."""
    return json.loads((built / "search" / "search_index.json").read_text(encoding="utf-8"))["book_errors"]


def test_a_sentence_excludes_every_heading_of_the_page_of_errors_and_no_other(built):
    """The words a sentence with no error's name excludes (search-query.js): each title of the
    page of errors in the built index holds one; a title elsewhere holds none but "error" and
    "warning" (sections such as "The error, and how to read it", left out with them)."""
    full = json.loads((built / "search" / "search_index.json").read_text(encoding="utf-8"))
    exclude, sep = full["book_errors"]["exclude"], full["config"]["separator"]
    base = indexes.site_address(indexes.ERRORS_PAGE, "")
    ours = [d for d in full["docs"] if d["location"].split("#")[0] == base]
    assert len(ours) > 100
    for doc in full["docs"]:
        words = set(indexes.index_title_words(doc["title"], sep))
        if doc in ours:
            assert words & set(exclude), f"{doc['location']}: {doc['title']!r} holds none of {exclude}"
        else:
            assert not words & (set(exclude) - set(indexes.SENTENCE_EXCLUDES)), doc


def test_the_excluded_words_cover_a_heading_without_error_and_refuse_one_they_cannot():
    page = indexes.ERRORS_PAGE
    base = indexes.site_address(page, "")
    docs = [dict(location=base + "#a", title="<code>Unsupported: Failed to trace builtin operator</code>"),
            dict(location=base + "#b", title="<code>RuntimeError: trace failed</code>"),
            dict(location="part1/x/#c", title="Failed to trace a graph")]
    assert indexes._exclusions(page, docs, separator()) == ["error", "warning", "builtin"]
    docs.append(dict(location=base + "#d", title="Trace failed"))
    with pytest.raises(ValueError, match=r"'Trace failed' of errors.md holds neither .*\(held elsewhere: \{'failed': "
                                         r"\['part1/x/#c'\], 'trace': \['part1/x/#c'\]\}\): name the error's type"):
        indexes._exclusions(page, docs, separator())
    # a tag is no word: <code> around a heading does not make "code" one of its words
    tagged = [dict(location=base + "#e", title="<code>Unsupported: trace</code>"),
              dict(location="part1/y/", title="Unsupported trace")]
    with pytest.raises(ValueError, match="'<code>Unsupported: trace</code>' of errors.md holds neither"):
        indexes._exclusions(page, tagged, separator())


def test_the_site_reads_a_message_as_explain_does(served, browser, built):
    """search-query.js, run on each message as the search box holds it (on one line), ranks the
    entries as explain ranks the message as the terminal printed it."""

    def run(b):
        context = b.new_context()
        page = context.new_page()
        page.goto(served + "reference/errors/", wait_until="load")
        found = page.evaluate("""([data, texts]) =>
            texts.map(t => self.bookSearchQuery.rank(t, data, false).entries.map(e => e.entry.address))""",
                              [_book_errors(built), [" ".join(c.paste.split()) for c in CASES]])
        context.close()
        return found

    by_site = browser.run(run)
    differ = {}
    for case, addresses in zip(CASES, by_site):
        by_explain = [e["address"] for e in explain.explain(case.paste)]
        if addresses[:1] != by_explain[:1]:
            differ[case.id] = (addresses[:2], by_explain[:2])
    assert differ == {}


def _search(served, browser, queries, paste=False):
    def run(b):
        context = b.new_context(viewport={"width": 1440, "height": 900})
        page = context.new_page()
        page.goto(served + "part1/hand-trace/", wait_until="load")
        hits = {q: site_a11y.search_hits(page, q, paste=paste) for q in queries}
        context.close()
        return hits

    return browser.run(run)


def _top(groups):
    """The address Material shows first: the best-scored of the first page's entries."""
    return max(groups[0], key=lambda hit: hit[1])[0] if groups else None


def test_a_pasted_message_lists_its_own_heading_first(served, browser, built):
    rows = _rows(built)
    hits = _search(served, browser, [c.paste for c in CASES], paste=True)
    outcomes, wrong = Counter(), {}
    for case in CASES:
        groups = hits[case.paste]
        listed = [address for group in groups for address, _ in group]
        found = ([_top(groups)] + listed) if case.expect != "absent" and groups else [a for a in listed if a in rows]
        result = pastes.outcome(case, found, ENTRIES, demonstrations=True)
        outcomes[(case.expect, result)] += 1
        if result != "right":
            wrong[case.id] = (result, found[:3])
    assert wrong == {}, dict(outcomes)
    assert sum(n for (expect, _), n in outcomes.items() if expect == "absent") >= 8


def test_a_piece_of_a_message_pasted_lists_its_error_first(served, browser):
    hits = _search(served, browser, TYPED, paste=True)
    wrong = {}
    for fragment, groups in hits.items():
        holders = [e for e in ENTRIES if e["kind"] != "named" and any(fragment in m for m in e["messages"])]
        assert holders, f"no block of the book shows {fragment!r}"
        right = {e["address"] for e in holders} | {s["address"] for e in holders for s in e["shown"]}
        if _top(groups) not in right:
            wrong[fragment] = [_top(groups)] + [a for g in groups[:3] for a, _ in g[:2]]
    assert wrong == {}


def test_typed_text_stays_as_typed(served, browser):
    """Only a paste is rewritten (assets/js/search.js): a piece of a message typed stays in the
    box as typed, and Material lists results for it."""

    def run(b):
        context = b.new_context(viewport={"width": 1440, "height": 900})
        page = context.new_page()
        page.goto(served + "part1/hand-trace/", wait_until="load")
        box = page.locator("input[data-md-component='search-query']")
        found = {}
        for typed in TYPED[:2]:
            hits = site_a11y.search_hits(page, typed)
            found[typed] = (box.input_value(), box.get_attribute("data-book-pasted"), bool(hits))
        context.close()
        return found

    for typed, (value, pasted, listed) in browser.run(run).items():
        assert (value, pasted, listed) == (typed, None, True), typed


# Material's search worker answers late, as on a busy machine: an answer with no result (the
# emptied box's) after 0.8 s, any other after 2 s; the page notes when the index is ready.
LATE_ANSWERS = """(() => {
  const Base = self.Worker;
  self.Worker = class extends Base {
    addEventListener(type, listener, options) {
      if (type !== "message") return super.addEventListener(type, listener, options);
      return super.addEventListener(type, ev => {
        const items = ev.data && ev.data.data && ev.data.data.items;
        if (!Array.isArray(items)) {
          if (ev.data && ev.data.type === 1) self.bookIndexReady = true;  // Material's READY
          return listener.call(this, ev);
        }
        setTimeout(() => listener.call(this, ev), items.length ? 2000 : 800);
      }, options);
    }
  };
})()"""


def test_a_late_answer_to_the_emptied_box_is_not_read_as_the_querys(served, browser):
    """site_a11y.search_hits reads the answer to the query it entered, whatever order
    Material's answers come in (bookcheck/site_a11y.py, _enter_query). Here the index is ready
    and the answer to the empty box is on its way when the query is entered: that answer
    ("No matching documents" beside the query) comes first."""

    def run(b):
        context = b.new_context(viewport={"width": 1440, "height": 900})
        context.add_init_script(LATE_ANSWERS)
        page = context.new_page()
        page.goto(served + "part1/hand-trace/", wait_until="load")
        page.locator("input[data-md-component='search-query']").focus()  # the index loads
        page.wait_for_function("() => self.bookIndexReady === true", timeout=60000)
        hits = site_a11y.search_hits(page, TYPED[0])
        context.close()
        return hits

    assert browser.run(run)


def test_a_query_with_no_error_in_it_is_searched_as_typed(served, browser, built):
    """Words that name no error reach Material's search as typed; from six words on, without
    the headings of the page of errors."""

    def run(b):
        context = b.new_context()
        page = context.new_page()
        page.goto(served + "reference/errors/", wait_until="load")
        out = page.evaluate("""([data, queries]) => queries.map(q => self.bookSearchQuery.transform(q, data))""",
                            [_book_errors(built), ["register_hook", "saved for backward", "retain_graph=True",
                                                   "how do I get the Jacobian of a function with torch",
                                                   "KeyError: 'learning_rate'"]])
        context.close()
        return out

    typed, short, code, sentence, unknown = browser.run(run)
    assert (typed, short, code) == ("register_hook", "saved for backward", "retain_graph=True")
    excluded = "".join(f" -title:{w}" for w in _book_errors(built)["exclude"])
    assert sentence == "how do I get the Jacobian of a function with torch" + excluded
    assert excluded.startswith(" -title:error -title:warning -title:")  # and the words of the others
    assert unknown.startswith("+title:__") and "error" in unknown  # a line that names an error the book lacks

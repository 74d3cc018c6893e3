// A pasted error message lists its section of the page of errors. When the reader pastes into
// Material's search box, the box's text is read as `python -m snippets.explain` reads a message
// (assets/js/search-query.js, with the rules and words the build puts in the search index as
// "book_errors"); when it holds an error the page of errors lists, the box gets the query that
// lists that error's heading, and Material searches it (a paste of six words or more that names
// no error: without the headings of that page). Typed text is searched as typed. The
// index is the one Material loads (search/search_index.json): read again when the reader first
// opens search, from the browser's cache. On a page without Material's search box, nothing.
(function () {
  "use strict";
  var box = document.querySelector("input[data-md-component=search-query]");
  var toggle = document.querySelector("[data-md-toggle=search]");
  if (!box || !self.bookSearchQuery) return;
  var root = new URL("../../", document.currentScript.src); // this file is assets/js/search.js
  var errors = null; // a promise of the index's "book_errors" (null: none)

  function load() {
    if (errors === null) {
      errors = fetch(new URL("search/search_index.json", root).href)
        .then(function (response) {
          if (!response.ok) throw new Error("search/search_index.json: HTTP " + response.status);
          return response.json();
        })
        .then(function (index) { return index.book_errors || null; });
      errors.catch(function (error) { console.error(String(error)); }); // pastes then stay as pasted
    }
    return errors;
  }

  box.addEventListener("input", function (ev) {
    if (ev.inputType !== "insertFromPaste") return;
    var pasted = box.value;
    load().then(function (data) {
      var query = data && box.value === pasted ? self.bookSearchQuery.transform(pasted, data) : pasted;
      if (query !== pasted) {
        box.value = query;
        box.dispatchEvent(new KeyboardEvent("keyup")); // Material reads the box on each keyup
      }
      box.setAttribute("data-book-pasted", pasted); // read: bookcheck/site_a11y.py waits for it
    }, function () {
      box.setAttribute("data-book-pasted", pasted);
    });
  });
  if (toggle) {
    toggle.addEventListener("change", function () { if (toggle.checked) load(); });
    if (toggle.checked) load();
  }
})();

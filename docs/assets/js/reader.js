// Scrollable regions can be reached by keyboard (WCAG 2.1.1): a code block, a table or a
// notebook output wider than its column gets tabindex="0" (and a name, for screen readers),
// on the first page and after every instant navigation (Material's document$). Diagrams are
// handled by diagrams.js.
(function () {
  "use strict";
  var SCROLLERS = [
    ".md-typeset pre > code",
    ".md-typeset .md-typeset__scrollwrap",
    ".md-typeset table:not([class])",
    ".jupyter-wrapper .jp-OutputArea-output pre",
    ".jupyter-wrapper .jp-OutputArea-output table",
  ].join(",");

  function scrolls(el) {
    return el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1;
  }

  function reachable(el) {
    if (el.hasAttribute("tabindex") || el.querySelector("a, button, input, [tabindex]")) return;
    el.setAttribute("tabindex", "0");
    if (!el.hasAttribute("aria-label") && el.tagName !== "TABLE") {
      el.setAttribute("role", "region");
      el.setAttribute("aria-label", el.tagName === "CODE" || el.tagName === "PRE" ? "Code (scrolls sideways)" : "Table (scrolls sideways)");
    }
  }

  // Every region measured first, then the wide ones changed: a change made between two
  // measurements would make the browser lay the whole page out again for the next one.
  function all() {
    Array.from(document.querySelectorAll(SCROLLERS)).filter(scrolls).forEach(reachable);
  }

  document$.subscribe(function () {
    all();
    // Closed collapsibles lay their content out only when opened.
    document.querySelectorAll(".md-typeset details").forEach(function (d) {
      d.addEventListener("toggle", all);
    });
  });
  var timer = null;
  window.addEventListener("resize", function () {
    clearTimeout(timer);
    timer = setTimeout(all, 200);
  });
})();

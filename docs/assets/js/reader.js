// Scrollable regions can be reached by keyboard (WCAG 2.1.1): a code block, a table or a
// notebook output wider than its column gets tabindex="0" (and a name, for screen readers),
// on the first page and after every instant navigation (Material's document$). Diagrams are
// handled by diagrams.js. Each region's name is its own ("Code block 3 (scrolls sideways)").
// After a resize, a region made reachable here that no longer scrolls (a phone turned to
// landscape) is given back what it had: no tab stop, no role, no name.
// Landmarks are told apart too: the bar Material puts over each code block for its copy button
// is a <nav> without a name (every code block a navigation landmark of the same name), so it is
// marked as a plain container (role="none"; its button keeps its own name); and a section of
// the navigation whose label holds only the toggle's icon (Material's sections with an index
// page, navigation.indexes) is named by its title.
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

  // The number of a code block, a notebook output or a table on the page (1, 2, ...).
  function number(el, selector) {
    return Array.prototype.indexOf.call(document.querySelectorAll(selector), el) + 1;
  }

  function reachable(el) {
    if (el.hasAttribute("tabindex") || el.querySelector("a, button, input, [tabindex]")) return;
    el.setAttribute("tabindex", "0");
    el.setAttribute("data-book-scrolls", "");
    if (!el.hasAttribute("aria-label") && el.tagName !== "TABLE") {
      el.setAttribute("data-book-named", "");
      var name = el.matches(".jp-OutputArea-output pre") ? "Output " + number(el, ".jp-OutputArea-output pre")
        : el.tagName === "CODE" ? "Code block " + number(el, ".md-typeset pre > code")
        : "Table " + number(el, ".md-typeset .md-typeset__scrollwrap, .jupyter-wrapper .jp-OutputArea-output table");
      el.setAttribute("role", "region");
      el.setAttribute("aria-label", name + " (scrolls sideways)");
    }
  }

  function unreachable(el) {
    el.removeAttribute("data-book-scrolls");
    if (el.getAttribute("tabindex") === "0") el.removeAttribute("tabindex");
    if (el.hasAttribute("data-book-named")) {
      el.removeAttribute("data-book-named");
      el.removeAttribute("role");
      el.removeAttribute("aria-label");
    }
  }

  function landmarks() {
    document.querySelectorAll(".md-typeset nav.md-code__nav:not([role])").forEach(function (nav) {
      nav.setAttribute("role", "none");
    });
    document.querySelectorAll("nav.md-nav[aria-labelledby]").forEach(function (nav) {
      var label = document.getElementById(nav.getAttribute("aria-labelledby"));
      var title = nav.querySelector(":scope > .md-nav__title");
      if (label && !label.textContent.trim() && title && title.textContent.trim()) {
        nav.removeAttribute("aria-labelledby");
        nav.setAttribute("aria-label", title.textContent.trim());
      }
    });
  }

  // Every region measured first, then the wide ones changed: a change made between two
  // measurements would make the browser lay the whole page out again for the next one.
  function all() {
    var regions = Array.from(document.querySelectorAll(SCROLLERS));
    var wide = regions.map(scrolls);
    regions.forEach(function (el, i) {
      if (wide[i]) reachable(el);
      else if (el.hasAttribute("data-book-scrolls")) unreachable(el);
    });
    landmarks();
    // the width the regions were last measured at (the browser checks wait for it after a resize)
    document.documentElement.setAttribute("data-book-regions-width", String(window.innerWidth));
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

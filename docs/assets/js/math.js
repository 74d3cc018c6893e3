// Typesets the math that pymdownx.arithmatex (generic mode) wraps in .arithmatex elements,
// with the vendored KaTeX, on the first page and after every instant navigation (Material's
// document$). KaTeX (about 300 KB) is loaded only when a page has math. A formula KaTeX
// cannot parse stays untypeset and logs an error, which the browser test of the site rejects.
// A display formula wider than the column (on a phone) is made keyboard-focusable.
(function () {
  "use strict";
  var base = new URL("../vendor/katex/", document.currentScript.src).href;
  var loading = null;

  function script(name) {
    return new Promise(function (resolve, reject) {
      var el = document.createElement("script");
      el.src = base + name;
      el.onload = resolve;
      el.onerror = function () { reject(new Error("could not load " + el.src)); };
      document.head.appendChild(el);
    });
  }

  function loadKatex() {
    if (!loading) {
      var css = document.createElement("link");
      css.rel = "stylesheet";
      css.href = base + "katex.min.css";
      document.head.appendChild(css);
      loading = script("katex.min.js").then(function () { return script("auto-render.min.js"); });
    }
    return loading;
  }

  document$.subscribe(function () {
    var formulas = document.querySelectorAll(".arithmatex");
    if (!formulas.length) return;
    loadKatex().then(function () {
      formulas.forEach(function (el) {
        renderMathInElement(el, {
          delimiters: [
            { left: "\\(", right: "\\)", display: false },
            { left: "\\[", right: "\\]", display: true },
          ],
          throwOnError: false,
        });
        // A display formula wider than the column scrolls: it must be reachable by keyboard.
        if (el.tagName === "DIV" && el.scrollWidth > el.clientWidth + 1) el.setAttribute("tabindex", "0");
      });
    });
  });
})();

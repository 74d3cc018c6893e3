// Renders the math that pymdownx.arithmatex (generic mode) wraps in .arithmatex elements with
// the vendored KaTeX, on the first page and after every instant navigation (Material's
// document$). A formula KaTeX cannot parse becomes a .katex-error element, which the browser
// test of the built site rejects.
document$.subscribe(function () {
  document.querySelectorAll(".arithmatex").forEach(function (el) {
    renderMathInElement(el, {
      delimiters: [
        { left: "\\(", right: "\\)", display: false },
        { left: "\\[", right: "\\]", display: true },
      ],
      throwOnError: false,
    });
  });
});

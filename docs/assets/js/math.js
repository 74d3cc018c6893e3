// Typesets the math that pymdownx.arithmatex (generic mode) wraps in .arithmatex elements,
// with the vendored KaTeX, on the first page and after every instant navigation (Material's
// document$), a few formulas at a time (see below). KaTeX (about 300 KB) is loaded when a
// formula of the page comes within half a screen of the viewport, or before the page is printed
// (not at all on a page without formulas): a page whose formulas are all further down, or folded away in a closed <details> (which lays out
// nothing until the reader opens it), loads none on its first screen. A formula KaTeX
// cannot parse stays untypeset and logs an error, which the browser test of the site rejects.
//
// A display formula wider than its column scrolls, so it must be reachable by keyboard. Its
// width is known only once KaTeX's stylesheet and fonts are in use, and changes with the
// column (a resize, a phone's rotation): it is measured after the stylesheet has loaded and
// typesetting is done, again whenever a font finishes loading or the window is resized.
// Each display formula then carries data-overflow="yes" or "no" (tabindex="0" when "yes"), and
// a hint under it, shown when "yes": the one wide diagrams get (diagrams.js).
//
// Until then a formula holds about the room it will take, its source unseen (assets/css/book.css),
// so the text around it does not move when it is typeset. Each formula is marked
// data-math="typeset" once KaTeX has run on it (a formula KaTeX cannot parse shows its error),
// or data-math="source" when KaTeX could not be loaded or failed on it: its TeX source then shows.
(function () {
  "use strict";
  var base = new URL("../vendor/katex/", document.currentScript.src).href;
  var loading = null;

  function load(el, parent) {
    return new Promise(function (resolve, reject) {
      el.onload = resolve;
      el.onerror = function () { reject(new Error("could not load " + (el.src || el.href))); };
      parent.appendChild(el);
    });
  }

  function script(name) {
    var el = document.createElement("script");
    el.src = base + name;
    return load(el, document.head);
  }

  // KaTeX's two main faces, loaded before the first formula is typeset: a formula typeset in a
  // fallback font is laid out again when its font arrives, and the text around it moves.
  function fonts() {
    if (!document.fonts || !document.fonts.load) return null;
    return Promise.all(["1em KaTeX_Main", "italic 1em KaTeX_Math"].map(function (font) {
      return document.fonts.load(font).catch(function () {}); // a font that fails: typeset anyway
    }));
  }

  function loadKatex() {
    if (!loading) {
      var css = document.createElement("link");
      css.rel = "stylesheet";
      css.href = base + "katex.min.css";
      loading = Promise.all([
        load(css, document.head).then(fonts),
        script("katex.min.js").then(function () { return script("auto-render.min.js"); }),
      ]);
    }
    return loading;
  }

  // Every formula measured first, then marked: a change made between two measurements would
  // make the browser lay the whole page out again for the next one.
  function measure() {
    var typeset = Array.from(document.querySelectorAll("div.arithmatex")).filter(function (el) {
      return el.querySelector(".katex"); // not typeset (yet, or it failed): left alone
    });
    var wide = typeset.map(function (el) { return el.scrollWidth > el.clientWidth + 1; });
    typeset.forEach(function (el, i) {
      if (wide[i]) el.setAttribute("tabindex", "0");
      else el.removeAttribute("tabindex");
      el.setAttribute("data-overflow", wide[i] ? "yes" : "no");
      var hint = el.nextElementSibling;
      if (!(hint && hint.classList.contains("book-scroll-hint"))) {
        if (!wide[i]) return;
        hint = document.createElement("p");
        hint.className = "book-scroll-hint";
        hint.setAttribute("aria-hidden", "true");
        hint.textContent = "\u2194 Wider than the screen: scroll the formula sideways.";
        el.insertAdjacentElement("afterend", hint);
      }
      hint.hidden = !wide[i];
    });
  }

  // Measured once the fonts the typeset formulas use have loaded (reading the layout first
  // makes the browser request them), then after any later font load and any resize.
  function measureWhenFontsLoaded() {
    document.querySelectorAll("div.arithmatex").forEach(function (el) { void el.scrollWidth; });
    if (document.fonts && document.fonts.ready) document.fonts.ready.then(measure);
    else measure();
  }

  if (document.fonts && document.fonts.addEventListener) {
    document.fonts.addEventListener("loadingdone", measure);
  }
  var timer = null;
  window.addEventListener("resize", function () {
    clearTimeout(timer);
    timer = setTimeout(measure, 100);
  });

  // Typesetting a long page's formulas at once would hold the page still for as long as it
  // takes (half a second on a slow phone): they are typeset a slice of a few milliseconds at a
  // time, the ones on or near the first screen first, with the page free to respond between
  // slices; all that remain at once before printing.
  var SLICE_MS = 8;
  var page = 0;
  var pending = [];
  var started = 0; // the page whose formulas are being typeset
  var printing = false;
  var approach = null; // watches the page's formulas until one comes near

  function typeset(el) {
    try {
      renderMathInElement(el, {
        delimiters: [
          { left: "\\(", right: "\\)", display: false },
          { left: "\\[", right: "\\]", display: true },
        ],
        throwOnError: false,
      });
      el.setAttribute("data-math", "typeset");
    } catch (error) {
      el.setAttribute("data-math", "source");
      console.error(error);
    }
  }

  function typesetAll(which) {
    if (which !== page) return;
    while (pending.length) typeset(pending.shift());
    measureWhenFontsLoaded();
  }

  // The block of text a formula sits in: a slice ends between blocks, never inside one, so the
  // formulas of a paragraph change its lines together, once.
  function block(el) {
    return el.closest("p, li, td, th, dd, dt, h1, h2, h3, h4, h5, h6, figcaption") || el;
  }

  function slice(which) {
    if (which !== page || !pending.length) return;
    var start = performance.now();
    var last = null;
    while (pending.length && (performance.now() - start < SLICE_MS || block(pending[0]) === last)) {
      last = block(pending[0]);
      typeset(pending.shift());
    }
    if (pending.length) setTimeout(slice, 0, which);
    else measureWhenFontsLoaded();
  }

  // The formulas within half a screen of the viewport first: an IntersectionObserver's first
  // report, which the browser makes without an extra layout.
  function nearFirst(formulas) {
    return new Promise(function (resolve) {
      if (!("IntersectionObserver" in window)) return resolve(formulas);
      var observer = new IntersectionObserver(function (entries) {
        observer.disconnect();
        var near = new Set(entries.filter(function (e) { return e.isIntersecting; })
          .map(function (e) { return e.target; }));
        resolve(formulas.filter(function (el) { return near.has(el); })
          .concat(formulas.filter(function (el) { return !near.has(el); })));
      }, { rootMargin: "50% 0px" });
      formulas.forEach(function (el) { observer.observe(el); });
    });
  }

  // Loads KaTeX (once) and typesets the page's formulas: the ones near the viewport first, then
  // the rest, slice by slice; all at once when the page is being printed.
  function begin(which) {
    if (which !== page || started === which) return;
    started = which;
    if (approach) approach.disconnect();
    approach = null;
    var formulas = Array.from(document.querySelectorAll(".arithmatex"));
    Promise.all([loadKatex(), nearFirst(formulas)]).then(function (done) {
      if (which !== page) return;
      pending = done[1];
      if (printing) typesetAll(which);
      else slice(which);
    }, function (error) {
      formulas.forEach(function (el) { el.setAttribute("data-math", "source"); });
      console.error(error);
    });
  }

  window.addEventListener("beforeprint", function () {
    printing = true;
    if (!document.querySelector(".arithmatex")) return; // a page without math loads no KaTeX
    begin(page);
    typesetAll(page);
  });
  window.addEventListener("afterprint", function () { printing = false; });

  document$.subscribe(function () {
    var which = ++page;
    pending = [];
    if (approach) approach.disconnect();
    approach = null;
    var formulas = Array.from(document.querySelectorAll(".arithmatex"));
    if (!formulas.length) return;
    // The print page (the whole book, mkdocs-print-site-plugin) is read to be printed: all of it.
    if (!("IntersectionObserver" in window) || document.getElementById("print-site-page")) return begin(which);
    approach = new IntersectionObserver(function (entries) {
      if (entries.some(function (e) { return e.isIntersecting; })) begin(which);
    }, { rootMargin: "50% 0px" });
    formulas.forEach(function (el) { approach.observe(el); });
  });
})();

// Diagrams cost nothing until a reader comes near one, and stay readable on a phone.
//
// Material for MkDocs renders `pre.mermaid` blocks itself through the global `mermaid`
// (mermaid.initialize, then mermaid.render per diagram) and, when that global is missing,
// fetches mermaid from a CDN. This file is loaded on every page (it is tiny), so the global is
// always defined: a stand-in that
// - waits until the diagram's block comes within half a screen of the viewport
//   (IntersectionObserver; all at once before printing), so a page's first load fetches no
//   mermaid unless a diagram is on its first screen (the <script> mermaid2 adds to a page with
//   diagrams is this file again, which returns at once), and math, which does not wait for
//   it, is typeset meanwhile;
// - then imports the vendored ES module build from this site (once; it loads the code of each
//   diagram type when a diagram of that type is drawn) and asks it for the SVG;
// - gives the SVG a minimum width at which its smallest label is at least 11 CSS px: on a
//   narrow screen a wide diagram keeps that size inside a horizontally scrollable box, which is
//   keyboard-focusable, named by the diagram's title, with a visible hint under it, and opens
//   scrolled to the last node the diagram declares (a graph's loss, its output), which would
//   otherwise be off-screen; in print the diagram fits the column instead.
// The stand-in stays the global after mermaid has loaded, so pages reached by instant
// navigation go through it too.
(function () {
  "use strict";
  if (typeof window.mermaid !== "undefined") return;
  var src = new URL("../vendor/mermaid/mermaid.esm.min.mjs", document.currentScript.src).href;
  var MIN_LABEL_PX = 11.5; // a little above the 11 px the tests require, for rounding
  var config = null;
  var real = null;
  var loading = null;
  var claimed = typeof WeakSet === "function" ? new WeakSet() : null;
  var waiting = new Map();
  var observer = "IntersectionObserver" in window
    ? new IntersectionObserver(function (entries) {
        entries.forEach(function (entry) {
          if (entry.isIntersecting) release(entry.target);
        });
      }, { rootMargin: "50% 0px" })
    : null;

  function release(el) {
    if (observer) observer.unobserve(el);
    var go = waiting.get(el);
    waiting.delete(el);
    if (go) go();
  }

  function releaseAll() {
    Array.from(waiting.keys()).forEach(release);
  }
  window.addEventListener("beforeprint", releaseAll);

  function load() {
    if (!loading) {
      // A dynamic import works from this classic script; the module does not set a global.
      loading = import(src).then(function (module) {
        real = module.default;
        if (config) real.initialize(config);
        return real;
      });
    }
    return loading;
  }

  // The block Material is rendering: it passes the block's text, not the block.
  function blockOf(text) {
    var blocks = document.querySelectorAll("pre.mermaid");
    for (var i = 0; i < blocks.length; i++) {
      if (blocks[i].textContent === text && !(claimed && claimed.has(blocks[i]))) {
        if (claimed) claimed.add(blocks[i]);
        return blocks[i];
      }
    }
    return null;
  }

  function whenNear(el) {
    if (!observer || !el) return Promise.resolve();
    return new Promise(function (resolve) {
      waiting.set(el, resolve);
      observer.observe(el);
    });
  }

  // Width below which the labels of the SVG would be under MIN_LABEL_PX.
  function readable(svg) {
    var box = /viewBox="[-\d.]+ [-\d.]+ ([\d.]+) [\d.]+"/.exec(svg);
    if (!box) return svg;
    var width = parseFloat(box[1]);
    // Flowchart and sequence labels take the font size set on the SVG's own id (16px).
    var id = /<svg[^>]*? id="([^"]+)"/.exec(svg);
    var own = id && new RegExp("#" + id[1] + "\\s*\\{[^}]*?font-size:\\s*([\\d.]+)px").exec(svg);
    var smallest = own ? parseFloat(own[1]) : 16;
    // Charts (xychart) size their text with attributes instead.
    (svg.match(/font-size="[\d.]+"/g) || []).forEach(function (a) {
      smallest = Math.min(smallest, parseFloat(a.slice(11)));
    });
    var min = Math.ceil(width * MIN_LABEL_PX / smallest);
    var max = Math.max(min, Math.ceil(width));
    svg = svg.replace(/(<svg[^>]*?) style="max-width: [\d.]+px;"/, '$1 style="max-width: ' + max + "px; min-width: " + min + 'px;"');
    // On paper nothing scrolls: a printed diagram fits its column (the SVG's own style sheet,
    // since Material draws it in a shadow root that the site's CSS does not reach).
    return id ? svg.replace(/<style>/, "<style>@media print{#" + id[1] + "{min-width:0 !important;}}") : svg;
  }

  // Where the last node the diagram declares sits across its drawing: its left and right edges,
  // from 0 (the drawing's left edge) to 1 (its right edge); null when the SVG names no node so
  // (mermaid draws a flowchart's node as a <g> whose id ends in "flowchart-NAME-N", N counting
  // up in the order declared, moved to its centre by a translate; its shape, drawn around that
  // centre, is the first rect, circle or polygon in it).
  function lastNode(svg) {
    var box = /viewBox="([-\d.]+) [-\d.]+ ([\d.]+) [\d.]+"/.exec(svg);
    if (!box) return null;
    var best = -1, x = null, at = -1;
    var tags = /<g [^>]*>/g, tag;
    while ((tag = tags.exec(svg))) {
      var id = /\bid="[^"]*flowchart-[^"]*-(\d+)"/.exec(tag[0]);
      var move = /transform="translate\(([-\d.]+)/.exec(tag[0]);
      if (id && move && / class="node\b/.test(tag[0]) && +id[1] > best) {
        best = +id[1];
        x = parseFloat(move[1]);
        at = tags.lastIndex;
      }
    }
    if (x === null) return null;
    var shape = /<(rect|circle|polygon)\b[^>]*>/.exec(svg.slice(at, at + 4000));
    var half = 0;
    if (shape && shape[1] === "rect") half = parseFloat((/\bwidth="([\d.]+)"/.exec(shape[0]) || [0, 0])[1]) / 2;
    if (shape && shape[1] === "circle") half = parseFloat((/\br="([\d.]+)"/.exec(shape[0]) || [0, 0])[1]);
    if (shape && shape[1] === "polygon") {
      var xs = ((/\bpoints="([^"]*)"/.exec(shape[0]) || [0, ""])[1].match(/-?[\d.]+(?=,)/g) || []).map(parseFloat);
      if (xs.length) half = (Math.max.apply(null, xs) - Math.min.apply(null, xs)) / 2;
    }
    var left = parseFloat(box[1]), width = parseFloat(box[2]);
    return { left: (x - half - left) / width, right: (x + half - left) / width };
  }

  function decorate(host, title, last) {
    if (!host || !host.classList || !host.classList.contains("mermaid") || host.hasAttribute("data-book-diagram")) return;
    host.setAttribute("data-book-diagram", "ready");
    host.setAttribute("role", "group");
    host.setAttribute("aria-label", title ? "Diagram: " + title : "Diagram");
    var hint = document.createElement("p");
    hint.className = "book-scroll-hint";
    hint.setAttribute("aria-hidden", "true");
    hint.textContent = "\u2194 Wider than the screen: scroll the diagram sideways.";
    host.insertAdjacentElement("afterend", hint);
    fit(host);
    // A wide diagram opens with its last node in view: its right edge a little inside the box's
    // (its left edge, when the node is wider than the box).
    if (last !== null && host.scrollWidth > host.clientWidth + 1) {
      var room = 8;
      var target = Math.min(last.right * host.scrollWidth + room - host.clientWidth, last.left * host.scrollWidth - room);
      host.scrollLeft = Math.max(0, Math.min(host.scrollWidth - host.clientWidth, target));
    }
    if ("ResizeObserver" in window) new ResizeObserver(function () { fit(host); }).observe(host);
  }

  function fit(host) {
    var hint = host.nextElementSibling;
    var wide = host.scrollWidth > host.clientWidth + 1;
    if (wide) host.setAttribute("tabindex", "0");
    else host.removeAttribute("tabindex");
    if (hint && hint.classList.contains("book-scroll-hint")) hint.hidden = !wide;
  }

  var standIn = {
    initialize: function (cfg) {
      config = cfg;
      if (real) real.initialize(cfg);
    },
    render: function (id, text) {
      var block = blockOf(text);
      var title = /^\s*accTitle\s*:\s*(.+)$/m.exec(text);
      return whenNear(block)
        .then(load)
        .then(function (m) { return m.render(id, text); })
        .then(function (out) {
          // Material puts the SVG's box where the block is right after this resolves.
          var parent = block && block.parentNode, next = block && block.nextSibling;
          var last = lastNode(out.svg);
          setTimeout(function () {
            if (parent) decorate(next && next.parentNode === parent ? next.previousSibling : parent.lastChild, title && title[1].trim(), last);
          }, 0);
          return Object.assign({}, out, { svg: readable(out.svg) });
        });
    },
  };
  window.mermaid = standIn;
})();

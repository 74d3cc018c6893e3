// Tells the book's search worker (assets/js/search-worker.js) that the reader has opened search,
// so that it loads the search index then, not with every page. Material opens search through its
// search toggle (a click on the search icon, a focus in the search box, the "/" "s" "f" keys, a
// link with ?q=): this listens to that toggle's changes. The toggle and this script outlive
// instant navigation.
(function () {
  "use strict";
  var toggle = document.querySelector("[data-md-toggle=search]");
  if (!toggle || typeof BroadcastChannel !== "function") return;
  var root = new URL("../../", document.currentScript.src); // this file is assets/js/search.js
  var channel = new BroadcastChannel("book-search " + root.href);
  var opened = false;

  function open() {
    opened = true;
    channel.postMessage("open");
  }

  toggle.addEventListener("change", function () {
    if (toggle.checked) open();
  });
  // The worker starts before or after this script: it says "hello" when it starts listening.
  channel.onmessage = function (ev) {
    if (ev.data === "hello" && opened) channel.postMessage("open");
  };
  if (toggle.checked) open();
})();

// The search worker Material starts on every page (overrides/main.html names this file as the
// page's search worker). Material hands a worker the search index as soon as the page loads and
// sends queries once the worker answers that it is ready. The build leaves only the index's
// config in search/search_index.json and moves the whole index to search/search_docs.json
// (overrides/site_hooks.py), so a page that is read and never searched loads neither that index
// nor Material's worker. This stand-in
// - keeps the first message Material sends (the set-up: the search config, no documents);
// - when the reader opens search (assets/js/search.js says so on a BroadcastChannel), starts
//   Material's own worker (the address after `?worker=`, from the site's root), fetches the
//   whole index meanwhile and sends that worker the set-up with the index's documents;
// - passes every later message to that worker, and each of its answers back to the page. Until
//   the index is ready Material shows "Initializing search" and holds the reader's query; its
//   worker's "ready" answer lets the query through.
// A query holding an error message is rewritten on its way (assets/js/search-query.js, loaded
// with the index; its data is the index's "book_errors", which Material's worker never gets), so
// that a pasted message lists its heading on the page of errors.
// It uses no part of Material's worker but the messages Material itself sends and receives.
(function () {
  "use strict";
  var here = new URL(self.location.href);
  var root = new URL("../../", here); // this file is assets/js/search-worker.js
  var material = new URL(here.searchParams.get("worker"), root).href;
  var index = new URL("search/search_docs.json", root).href;
  // Pages of this site (in any tab) say "open" here; other sites on the same origin use another name.
  var channel = new BroadcastChannel("book-search " + root.href);
  var setup = null; // Material's set-up message
  var wanted = false; // the reader has opened search
  var worker = null; // Material's worker, once started
  var waiting = []; // messages that came before it started
  var errors = null; // the index's "book_errors", once loaded (assets/js/search-query.js)

  // A QUERY message (type 2 of Material's search worker protocol) passes through
  // bookSearchQuery.transform; every other message as it is.
  function rewrite(message) {
    if (errors === null || !message || message.type !== 2 || typeof message.data !== "string") return message;
    return Object.assign({}, message, { data: self.bookSearchQuery.transform(message.data, errors) });
  }

  function start() {
    if (!wanted || !setup || worker) return;
    // Material's worker and the index load side by side; the worker gets the set-up when both have.
    var real = new Worker(material);
    real.onmessage = function (ev) { self.postMessage(ev.data); };
    real.onerror = function (ev) { console.error("search worker " + material + ": " + (ev.message || "failed")); };
    try {
      importScripts(new URL("search-query.js", here).href);
    } catch (error) {
      console.error("search-query.js: " + error); // queries then pass as the reader typed them
    }
    worker = fetch(index)
      .then(function (response) {
        if (!response.ok) throw new Error("could not load " + index + ": HTTP " + response.status);
        return response.json();
      })
      .then(function (full) {
        var data = Object.assign({}, setup.data, { config: full.config, docs: full.docs });
        if (full.book_errors && self.bookSearchQuery) errors = full.book_errors;
        real.postMessage(Object.assign({}, setup, { data: data }));
        waiting.forEach(function (message) { real.postMessage(rewrite(message)); });
        waiting = null;
        return real;
      });
    worker.catch(function (error) { console.error(String(error)); });
  }

  channel.onmessage = function (ev) {
    if (ev.data === "open") {
      wanted = true;
      start();
    }
  };
  // A page that opened search before this worker listened says so again when it hears this.
  channel.postMessage("hello");

  self.onmessage = function (ev) {
    if (setup === null) {
      setup = ev.data;
      start();
    } else if (waiting) {
      waiting.push(ev.data);
    } else {
      worker.then(function (real) { real.postMessage(rewrite(ev.data)); });
    }
  };
})();

// Loads the vendored mermaid only on pages that draw a diagram, and never from a CDN.
//
// Material for MkDocs renders `pre.mermaid` blocks itself through the global `mermaid`
// (mermaid.initialize, then mermaid.render per diagram) and, when that global is missing,
// fetches mermaid from a CDN. This file is loaded on every page (it is tiny), so the global is
// always defined: a stand-in whose first render() loads the vendored UMD build from this site,
// then hands over to it. That also covers pages reached by instant navigation.
(function () {
  "use strict";
  if (typeof window.mermaid !== "undefined") return;
  var src = new URL("../vendor/mermaid/mermaid.min.js", document.currentScript.src).href;
  var config = null;
  var loading = null;
  function load() {
    if (!loading) {
      loading = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = src;
        script.onload = function () {
          var real = window.mermaid;
          if (config) real.initialize(config);
          resolve(real);
        };
        script.onerror = function () { reject(new Error("could not load " + src)); };
        document.head.appendChild(script);
      });
    }
    return loading;
  }
  window.mermaid = {
    initialize: function (cfg) { config = cfg; },
    render: function (id, text) {
      return load().then(function (real) { return real.render(id, text); });
    },
  };
})();

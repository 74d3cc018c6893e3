// What the book's search does with a pasted error message. assets/js/search.js passes the text
// a reader pastes into Material's search box through `bookSearchQuery.transform`; the query it
// returns replaces the pasted text in the box (Material searches what the box holds).
//
// A paste that holds an error message, one line or a whole traceback, is read as
// `python -m snippets.explain` reads it (snippets/explain.py): the last line that names an error,
// torch's hint dropped, and shapes, numbers, dtypes, tensor types and names replaced by
// placeholders; the rules and the words of every error come from the search index
// (bookbuild/indexes.py search_data), so both read a message alike. When the message is an error
// the page of errors lists, the query becomes the one that finds that error's heading and no
// other: each word of its heading required in a title (Material's query syntax). An error message
// (a line that names an error, or a traceback) that is no error the book lists finds nothing.
// Any other paste is left as pasted; from six words on, without the headings of the page of errors.
(function (scope) {
  "use strict";
  // Required in a title, and no title holds it: no result.
  var NOTHING = "+title:__this_error_is_not_on_the_page_of_errors__";
  var cache = null;

  function prepare(data) {
    if (cache && cache.data === data) return cache;
    cache = {
      data: data,
      type: new RegExp(data.type, "g"),
      rules: data.rules.map(function (r) { return [new RegExp(r[0], "g"), r[1]]; }),
      word: new RegExp(data.word, "g")
    };
    return cache;
  }

  function collapse(text) {
    return text.split(/\s+/).filter(Boolean).join(" ");
  }

  // {type, message} of the last line that names an error (the message runs to the end of the
  // line; a search box holds one line), or {type: "", message: the whole text}.
  function errorLine(text, c) {
    var found = null;
    var m;
    c.type.lastIndex = 0;
    while ((m = c.type.exec(text)) !== null) {
      // torchrun's own ChildFailedError ends a failed job after the rank's error: pass it over
      if (m[1] === "ChildFailedError" && found !== null) continue;
      found = m;
    }
    if (found === null) return { type: "", message: collapse(text) };
    var rest = text.slice(found.index + found[0].length + 2).split("\n")[0];
    return { type: found[1] || found[2], message: collapse(rest) };
  }

  function words(message, c) {
    c.rules.forEach(function (r) { message = message.replace(r[0], r[1]); });
    return message.toLowerCase().match(c.word) || [];
  }

  function same(a, b) {
    if (a.length !== b.length) return false;
    for (var i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  function inside(long, short) {
    for (var i = 0; short.length > 0 && i + short.length <= long.length; i++) {
      if (same(long.slice(i, i + short.length), short)) return true;
    }
    return false;
  }

  function common(a, b) {
    var row = new Array(b.length + 1).fill(0);
    a.forEach(function (x) {
      var prev = 0;
      for (var j = 0; j < b.length; j++) {
        var old = row[j + 1];
        row[j + 1] = x === b[j] ? prev + 1 : Math.max(row[j + 1], row[j]);
        prev = old;
      }
    });
    return row[b.length];
  }

  // As snippets.explain._score: 1 for the whole message in the pasted words, 0.9 for a piece of
  // it, else the share of words in common, in order, where the two begin alike or share almost
  // all their words.
  function score(pasted, key, c) {
    if (inside(pasted, key)) return 1;
    if (pasted.length >= c.data.min_fragment && inside(key, pasted)) return 0.9;
    if (!pasted.length || !key.length) return 0;
    var share = 2 * common(pasted, key) / (pasted.length + key.length);
    var n = c.data.same_start;
    return same(pasted.slice(0, n), key.slice(0, n)) || share >= c.data.alone ? share : 0;
  }

  // The entries that match, best first, as snippets.explain.explain orders them. With `whole`,
  // only entries whose message is in the pasted words, or which the pasted words are a piece of.
  function rank(text, data, whole) {
    var c = prepare(data);
    var line = errorLine(text, c);
    var pasted = words(line.message, c);
    var out = [];
    data.entries.forEach(function (entry, order) {
      var best = [0, 0];
      entry.keys.forEach(function (key) {
        var s = score(pasted, key, c);
        if (s > best[0] || (s === best[0] && key.length > best[1])) best = [s, key.length];
      });
      // another type: only a whole message, or a piece of one, counts (as in explain)
      var other = line.type !== "" && entry.types !== null && entry.types.indexOf(line.type) < 0;
      if (best[0] >= (whole || other ? 0.9 : data.cutoff)) {
        out.push({ entry: entry, score: best[0], other: other, length: best[1], order: order });
      }
    });
    out.sort(function (a, b) {
      return b.score - a.score || a.other - b.other || b.length - a.length || a.order - b.order;
    });
    return { type: line.type, words: pasted, entries: out };
  }

  // The ranked entries that match as well as the first: one, or several when the pasted words
  // are a piece of several messages (a score of 0.9 each), or hold two messages of one length.
  function best(found) {
    return found.filter(function (f) {
      return f.score === found[0].score && f.other === found[0].other &&
        (f.score !== 1 || f.length === found[0].length);
    });
  }

  // The words the headings of all these entries hold, of those pasted: required in titles, they
  // list those headings.
  function shared(entries, pasted) {
    return entries[0].entry.title.filter(function (w) {
      return pasted.indexOf(w) >= 0 && entries.every(function (f) { return f.entry.title.indexOf(w) >= 0; });
    });
  }

  function transform(query, data) {
    var ranked = rank(query, data, false);
    if (!ranked.words.length) return query;
    // A line that names an error, or a traceback: an error message, compared as explain does.
    var pasted = ranked.type !== "" || /Traceback \(most recent call last\)|File "[^"]*", line \d+/.test(query);
    var found = pasted ? ranked.entries : rank(query, data, true).entries;
    if (found.length) {
      var top = best(found);
      if (top.length === 1) return top[0].entry.query || query;
      var words = shared(top, ranked.words);
      return words.length ? words.map(function (w) { return "+title:" + w; }).join(" ") : query;
    }
    if (pasted) return NOTHING;
    // Words with no error's name: as typed; a sentence of them lists no heading of the page of
    // errors (each holds a word of data.exclude, which the build chose: bookbuild/indexes.py).
    if (collapse(query).split(" ").length < 6) return query;
    return query + data.exclude.map(function (w) { return " -title:" + w; }).join("");
  }

  scope.bookSearchQuery = { rank: rank, transform: transform, nothing: NOTHING };
})(self);

// minitorch_nb book: typesets the math with the KaTeX copy shipped in katex/ and runs the search box.
// Everything works offline from file://: the search index is a script (search_index.js), loaded on first use.
(function () {
  "use strict";

  function typesetMath() {
    if (!window.katex) return;
    document.querySelectorAll("span.math").forEach(function (el) {
      if (el.dataset.typeset) return;
      var tex = el.textContent.trim(), display = el.classList.contains("display");
      tex = tex.replace(/^\\\(|\\\)$/g, "").replace(/^\\\[|\\\]$/g, "");
      try {
        katex.render(tex, el, { displayMode: display, throwOnError: false, output: "htmlAndMathml" });
        el.dataset.typeset = "1";
      } catch (e) { el.classList.add("math-error"); }
    });
  }

  // ---- search: every section (heading to heading) of every page is a document ----
  var docs = null, pending = [];
  function withIndex(fn) {
    if (docs) return fn(docs);
    pending.push(fn);
    if (pending.length > 1) return;
    var s = document.createElement("script");
    s.src = (document.body.dataset.root || "") + "search_index.js";
    s.onload = function () {
      docs = (window.BOOK_SEARCH || []).map(function (d) {
        return { page: d[0], title: d[1], heading: d[2], anchor: d[3], text: d[4], low: (d[2] + " " + d[4]).toLowerCase(), lowHead: d[2].toLowerCase() };
      });
      pending.splice(0).forEach(function (f) { f(docs); });
    };
    document.head.appendChild(s);
  }

  function escapeHtml(s) { return s.replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; }); }

  function search(q, docs) {
    var words = q.toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) return [];
    var hits = [];
    docs.forEach(function (d) {
      var score = 0;
      for (var i = 0; i < words.length; i++) {
        var w = words[i], n = 0, at = d.low.indexOf(w);
        if (at < 0) return;
        while (at >= 0 && n < 50) { n++; at = d.low.indexOf(w, at + w.length); }
        score += n + (d.lowHead.indexOf(w) >= 0 ? 20 : 0);
      }
      hits.push({ d: d, score: score });
    });
    hits.sort(function (a, b) { return b.score - a.score; });
    return hits.slice(0, 30).map(function (h) { return h.d; });
  }

  function snippet(d, words) {
    var low = d.text.toLowerCase(), at = -1;
    for (var i = 0; i < words.length && at < 0; i++) at = low.indexOf(words[i]);
    var start = Math.max(0, at - 60), s = (start > 0 ? "…" : "") + d.text.slice(start, start + 180) + "…";
    var html = escapeHtml(s);
    words.forEach(function (w) {
      var re = new RegExp("(" + w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/&/g, "&amp;").replace(/</g, "&lt;") + ")", "ig");
      html = html.replace(re, "<mark>$1</mark>");
    });
    return html;
  }

  function setupSearch() {
    var input = document.getElementById("search-input"), box = document.getElementById("search-results");
    if (!input || !box) return;
    var run = function () {
      var q = input.value.trim();
      if (!q) { box.hidden = true; box.innerHTML = ""; return; }
      withIndex(function (docs) {
        if (input.value.trim() !== q) return;
        var words = q.toLowerCase().split(/\s+/).filter(Boolean), res = search(q, docs);
        box.innerHTML = res.length ? res.map(function (d) {
          return '<li><a href="' + d.page + (d.anchor ? "#" + d.anchor : "") + '"><span class="sr-page">' + escapeHtml(d.title) +
            '</span><span class="sr-head">' + escapeHtml(d.heading) + '</span><span class="sr-text">' + snippet(d, words) + "</span></a></li>";
        }).join("") : '<li class="sr-none">No results for “' + escapeHtml(q) + "”</li>";
        box.dataset.count = String(res.length);
        box.hidden = false;
      });
    };
    input.addEventListener("input", run);
    input.addEventListener("focus", function () { withIndex(function () {}); });
    input.addEventListener("keydown", function (e) {
      if (e.key === "Escape") { input.value = ""; run(); }
      if (e.key === "Enter") { var a = box.querySelector("a"); if (a) location.href = a.getAttribute("href"); }
    });
    var q = new URLSearchParams(location.search).get("q");
    if (q) { input.value = q; run(); }
  }

  document.addEventListener("DOMContentLoaded", function () { typesetMath(); setupSearch(); });
  window.bookSearch = function (q, cb) { withIndex(function (d) { cb(search(q, d)); }); };
})();

// Measures the timeline's first screen from the test's side, not from what the page says of
// itself: the canvas's box as the layout engine gives it, and which element the browser's own
// hit testing finds at the canvas's centre and near its corners (a canvas hidden, of zero
// size, off-screen or covered is not found there). Then opens the collapsed violation list,
// as a person would with a click on its summary, and measures again: the canvas must still be
// found, and the first violation's link too. Records it all into #state's data-probe (JSON)
// for report_browser_test.py --fits-screen to judge, together with a screenshot's pixels.
// Injected into a copy of the page by that driver; never part of a report. Leaves out what
// hit testing cannot see (a transparent canvas is still hit: the screenshot catches that).
(function () {
  'use strict';
  var st = document.getElementById('state'), INSET_PX = 3;
  function box(el) {
    var r = el.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom};
  }
  function name(el) {
    if (!el) return 'nothing';
    return el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className ? '.' + el.className : '');
  }
  // What hit testing finds at the centre and the four corners (inset) of el's box: 'ok' where
  // it is el or inside it, else the element found.
  function hits(el) {
    var b = box(el), cx = (b.left + b.right) / 2, cy = (b.top + b.bottom) / 2;
    var points = [[cx, cy], [b.left + INSET_PX, b.top + INSET_PX], [b.right - INSET_PX, b.top + INSET_PX],
                  [b.left + INSET_PX, b.bottom - INSET_PX], [b.right - INSET_PX, b.bottom - INSET_PX]];
    if (el.tagName !== 'CANVAS') points = points.slice(0, 1);
    return points.map(function (p) {
      var found = document.elementFromPoint(p[0], p[1]);
      return found && (found === el || el.contains(found)) ? 'ok' : name(found);
    });
  }
  function measure() {
    var cv = document.getElementById('tl'), link = document.querySelector('#violation-0-item a');
    var out = {viewport: {width: window.innerWidth, height: window.innerHeight}, scroll_y: window.scrollY};
    if (cv) { out.canvas = box(cv); out.canvas_hits = hits(cv); }
    if (link) { out.link = box(link); out.link_hits = hits(link); }
    return out;
  }
  // For each text node holding a bidirectional control, or the code point shown for one: the
  // x of each of the next characters, which must go left to right (an override reverses them).
  var BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\[U\+[0-9A-F]{4}\]/g;
  var FOLLOWING_MAX = 8, NODES_MAX = 50;
  function textOrder() {
    var out = [], walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT), node;
    while ((node = walker.nextNode()) && out.length < NODES_MAX) {
      if (node.parentElement.closest('script,#state')) continue;
      var text = node.data, match, end = -1;
      BIDI.lastIndex = 0;
      while ((match = BIDI.exec(text))) end = match.index + match[0].length;
      if (end < 0) continue;
      var xs = [], range = document.createRange();
      for (var i = end; i < text.length && xs.length < FOLLOWING_MAX; i++) {
        if (!/[A-Za-z0-9]/.test(text[i])) continue;
        range.setStart(node, i); range.setEnd(node, i + 1);
        var r = range.getBoundingClientRect();
        if (r.width > 0) xs.push(Math.round(r.left * 10) / 10);
      }
      out.push({text: text.slice(Math.max(0, end - 24), end + 24), xs: xs});
    }
    return out;
  }
  // The tooltip a pointer over the middle of each fault band's bar shows.
  function bandTips() {
    var cv = document.getElementById('tl'), tip = document.getElementById('tip'), r = cv.getBoundingClientRect();
    return (window.__locklabDrawn || []).filter(function (d) { return d.kind === 'bar'; }).map(function (bar) {
      var x = r.left + bar.x + bar.width / 2, y = r.top + bar.y + 8;
      cv.dispatchEvent(new MouseEvent('mousemove', {clientX: x, clientY: y, bubbles: true}));
      return {x: bar.x, width: bar.width, tip: tip.style.display === 'block' ? tip.textContent : ''};
    });
  }
  function finish(result) { st.dataset.probe = JSON.stringify(result); }
  function run() {
    var result = {closed: measure(), drawn: (window.__locklabDrawn || []).slice(), order: textOrder(),
                  band_tips: bandTips()}, summary = document.querySelector('#violations summary');
    if (!summary) { finish(result); return; }
    summary.click();
    // The page lays the canvas out again on the list's toggle event, queued behind the click.
    setTimeout(function () { result.open = measure(); finish(result); }, 50);
  }
  (function waitReady(tries) {
    if (st.dataset.ready === '1') setTimeout(run, 50);
    else if (tries > 0) setTimeout(function () { waitReady(tries - 1); }, 20);
    else finish({error: 'the page never finished drawing'});
  })(500);
})();

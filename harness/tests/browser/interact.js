// Drives timeline.html as a person would, from inside the page: keys, the wheel, a drag, a hover
// and a click, each dispatched as a DOM event to the element a person's input would reach, and
// records what the page showed after each into #state's data-interact (JSON), for
// report_browser_test.py --interact to judge. Injected into a copy of the page by that driver;
// never part of a report. Leaves out the operating system's input path (the events are
// synthetic, so default actions such as scrolling do not happen) and timing between inputs.
(function () {
  'use strict';
  var st = document.getElementById('state'), cv = document.getElementById('tl');
  var D = JSON.parse(document.getElementById('data').textContent), out = {};
  var LABEL_W = 118, RIGHT_PAD = 10; // the page's label column and right padding, in px
  function snapshot() {
    var tip = document.getElementById('tip');
    return {v0: +st.dataset.viewStartUs, v1: +st.dataset.viewEndUs, selected: +st.dataset.selected,
            tip: tip.style.display === 'block' ? tip.textContent : '',
            details: document.getElementById('details').textContent};
  }
  function key(k) { document.dispatchEvent(new KeyboardEvent('keydown', {key: k, bubbles: true})); }
  function mouse(target, type, x, y) {
    target.dispatchEvent(new MouseEvent(type, {clientX: x, clientY: y, bubbles: true}));
  }
  // The middle of the longest hold in view, in client coordinates (a hold's bar is in the upper
  // part of its row).
  function holdPoint() {
    var h = D.holds, best = -1, v0 = +st.dataset.viewStartUs, v1 = +st.dataset.viewEndUs;
    for (var i = 0; i < h.t0.length; i++) {
      if (h.t1[i] > v0 && h.t0[i] < v1 && (best < 0 || h.t1[i] - h.t0[i] > h.t1[best] - h.t0[best])) best = i;
    }
    if (best < 0) return null;
    var r = cv.getBoundingClientRect(), pw = cv.clientWidth - LABEL_W - RIGHT_PAD;
    var t = (Math.max(h.t0[best], v0) + Math.min(h.t1[best], v1)) / 2;
    var tops = st.dataset.rowTopsPx.split(',').map(Number);
    return {x: r.left + LABEL_W + (t - v0) * pw / (v1 - v0), y: r.top + tops[h.row[best]] + 1,
            row: D.rows[h.row[best]][0]};
  }
  function middle() { var r = cv.getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + 60}; }
  var steps = [
    ['start', function () {}],
    ['zoom_in_key', function () { key('+'); }],
    ['pan_right_key', function () { key('ArrowRight'); }],
    ['zoom_out_key', function () { key('-'); }],
    ['whole_key', function () { key('0'); }],
    ['wheel_in', function () {
      var m = middle();
      out.wheel_at_px = m.x - cv.getBoundingClientRect().left;
      cv.dispatchEvent(new WheelEvent('wheel', {deltaY: -400, clientX: m.x, clientY: m.y, bubbles: true, cancelable: true}));
    }],
    ['drag_left', function () {
      var m = middle();
      out.plot_width_px = cv.clientWidth - LABEL_W - RIGHT_PAD;
      mouse(cv, 'mousedown', m.x, m.y); mouse(window, 'mousemove', m.x - 200, m.y); mouse(window, 'mouseup', m.x - 200, m.y);
    }],
    ['whole_again', function () { key('0'); }],
    ['prev_key', function () { key('p'); }],
    ['next_key', function () { key('n'); }],
    // n towards the violation the fragment already names: no hashchange, shown all the same.
    ['same_hash_setup', function () {
      key('0');
      if (D.viol.length) history.replaceState(null, '', '#violation-' + ((+st.dataset.selected + 1) % D.viol.length));
    }],
    ['same_hash_next', function () { key('n'); }],
    ['whole_last', function () { key('0'); }],
    ['hover', function () { var p = holdPoint(); if (p) { out.hover_row = p.row; mouse(cv, 'mousemove', p.x, p.y); } }],
    ['click', function () {
      var p = holdPoint(); if (p) { mouse(cv, 'mousedown', p.x, p.y); mouse(cv, 'mouseup', p.x, p.y); }
    }],
  ];
  // After an input: a moment for the handlers queued behind it (a key that changes the fragment
  // is handled on hashchange). Timers, not animation frames: headless Chromium stops giving
  // frames once the page has loaded; the page publishes its view and selection as they change.
  function settle(cb) { setTimeout(cb, 50); }
  function run(k) {
    st.dataset.interactStep = k;
    if (k === steps.length) { st.dataset.interact = JSON.stringify(out); return; }
    try { steps[k][1](); } catch (e) { out[steps[k][0] + '_error'] = String(e); }
    settle(function () { out[steps[k][0]] = snapshot(); run(k + 1); });
  }
  (function waitReady() { if (st.dataset.ready === '1') settle(function () { run(0); }); else setTimeout(waitReady, 20); })();
})();

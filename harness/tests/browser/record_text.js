// Records what the page draws on its canvases, from below the page's script: every fillText
// (the string, where, its measured width) and every fault band's bar (a fillRect in the bars'
// colour), into window.__locklabDrawn, for probe.js to hand to report_browser_test.py. Injected
// at the top of <head> of a copy of the page by that driver, so it wraps the canvas API before
// the page's script runs; never part of a report. Leaves out text drawn by strokeText (the page
// draws none) and what the font shaping does with the string (the order check in probe.js
// measures that on the HTML text).
(function () {
  'use strict';
  var drawn = window.__locklabDrawn = [], DRAWN_MAX = 20000, BAR_COLOUR = '#b45309';
  var P = CanvasRenderingContext2D.prototype, fillText = P.fillText, fillRect = P.fillRect;
  var measureText = P.measureText;
  P.fillText = function (text, x, y) {
    if (drawn.length < DRAWN_MAX) {
      drawn.push({kind: 'text', text: String(text), x: x, y: y, align: this.textAlign,
                  width: measureText.call(this, String(text)).width});
    }
    return fillText.apply(this, arguments);
  };
  P.fillRect = function (x, y, w) {
    if (drawn.length < DRAWN_MAX && String(this.fillStyle).toLowerCase() === BAR_COLOUR) {
      drawn.push({kind: 'bar', x: x, y: y, width: w});
    }
    return fillRect.apply(this, arguments);
  };
})();

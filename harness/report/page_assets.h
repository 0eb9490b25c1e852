// The style sheet and scripts of timeline.html, as text the page writer inlines (the page
// loads nothing from the network).
//
// The scripts' contract with the page: an element #data holding the JSON of
// report/timeline_data.h, a canvas #tl inside #tl-wrap, the tooltip #tip, the details panel
// #details, the view text #view, violation links "#violation-N" and fault links "#fault-N".
// The scripts write what they show into #state (data-ready, data-view-start-us,
// data-view-end-us, data-drawn-items: holds and operations drawn, data-drawn-marks,
// data-plot-ink: pixels the holds and operations changed, data-selected, data-errors; data-load-ms:
// from navigation to the first drawing; data-script-ms: parsing the data and the first
// drawing), which the browser tests read from the dumped DOM.
// Thread rules: constant data.
#pragma once

namespace locklab {

// <style>…</style>
extern const char* const kTimelineStyle;
// <script>…</script> that records uncaught errors into #state; goes before the main script,
// so a syntax error in the main script is recorded too.
extern const char* const kTimelineErrorHook;
// <script>…</script>: the drawing, zoom and pan, tooltips and violation navigation.
extern const char* const kTimelineScript;

}  // namespace locklab

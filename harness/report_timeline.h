// timeline.html: one self-contained page (inline SVG and a little JS, no network) with one
// lane per worker, holds as bars coloured by token, fault windows shaded across the lanes they
// target, violations marked and clickable, and a time axis in ms from the run start.
// Thread rules: pure function; call from any thread.
#pragma once

#include <string>
#include <vector>

#include "checker.h"
#include "history.h"

namespace locklab {

std::string render_timeline_html(const std::vector<Event>& history, const Verdict& verdict);

}  // namespace locklab

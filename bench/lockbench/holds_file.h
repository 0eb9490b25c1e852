// The raw records of one cell as a JSON file a person (or a script) can open:
// <dir>/cell-<index>.json = {run_id, cell: {index, plan, strategy, mode, contenders, locks,
// hold_ms, members},
// start_ns, stop_ns, contenders: [{holds: [[lock, token, asked, acquired, release_asked,
// released], ...], open_wait: [lock, asked, given_up] | null}, ...]}, every time in ns since the
// cell's start (CLOCK_MONOTONIC, as records.h). Written only with lockbench --holds: the files
// hold every acquisition of the run (tens of MB for the whole matrix).
// Thread rules: a pure function of the cell plus one file write.
#pragma once

#include <string>

#include "cell.h"

namespace lockbench {

// Writes `raw` to dir/cell-<index>.json (making dir); returns "" or why the file could not be
// written (the run goes on: the cell's figures do not depend on it).
std::string write_holds_file(const std::string& dir, const std::string& run_id,
                             const CellRaw& raw);

}  // namespace lockbench

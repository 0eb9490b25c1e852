// The driver: runs a Config's cells and writes OUT/lockbench.json.
//
// Per server (each member count of the plan, or the --uri server): start it, measure the floor,
// make the lock collection's TTL indexes once with a Provider of its own (so no cell's window
// sees index commands), measure the hand-over floor at every hold of its main-grid cells
// (hand_over_floor.h), then run that server's cells in plan order. The JSON is rewritten after
// every cell ("done": false until the last), so an interrupted run keeps what it measured.
// Progress goes to stderr.
// Exit code: 0; 1 when a cell reported an error or its counters, or a hand-over floor's, did not
// add up (the figures are still written).
// Thread rules: the main thread (it owns the servers and the children).
#pragma once

#include "config.h"

namespace lockbench {

int run(const Config& config);

}  // namespace lockbench

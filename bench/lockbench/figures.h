// The figures of one cell, from its raw records and the run's floor (pure: no I/O).
//
//   acquisitions/s over the cell's window, and its ratio to the hold bound
//     min(K, N) / (hold + RTT) (one lock: 1 / (hold + RTT)), RTT = the floor's median;
//   handoff latency: per lock, the holds in fencing-token order (the server's grant order);
//     each hold after the first: its acquire() return minus the previous hold's release()
//     return (negative when the grant's reply overtook the release's). Only handoffs with a
//     contender waiting for that lock when the release returned count in the percentiles
//     (p50/p90/p99/max, in ms and in multiples of RTT): otherwise the lock was idle because
//     nobody wanted it (at N = 1 there are none). Also: the share of those handoffs that went
//     back to the releasing contender (it came back and won while another waited);
//   acquire wait (acquire() call to return) p50/p99/max, of the waits that ended in the window;
//     the longest wait also counts, to the window's end, the waits the cell's end cut off or that
//     ended after it (open_at_end: when the cell ends every waiter gives up at once, and that
//     teardown is not a wait); the longest of each contender's first wait (longest_first: all
//     contenders ask at once, on a cold Provider), counted the same way;
//   release round trip (release() call to return) p50/p90/p99/max; held_ms: how long holds
//     lasted (acquire() return to release() call) p50/p99/max;
//   the window rule, for every figure of single events: an event counts when it ended inside
//     the window (a handoff whose grant, a hold whose release() call, a release whose return
//     came after stop_ns does not: when a cell ends every waiter gives up at once, and those
//     withdrawals delay what follows; handoff_ms.after_window counts the handoffs left out);
//   fairness: Jain's index over per-contender acquisitions; the longest wait against the FIFO
//     bound (ceil(N/K) - 1) * (hold + RTT);
//   server commands per acquisition (ServerCount::lock_commands / acquisitions), the commands
//     the clients sent (APM) and whether the two agree; server CPU seconds.
//   checks: acquisitions = releases = hold records, per contender and in total; fencing tokens
//     strictly increase per lock.
// Thread rules: pure.
#pragma once

#include <nlohmann/json.hpp>

#include "cell.h"
#include "floor.h"

namespace lockbench {

struct Handoff {
  double ms = 0;
  bool same_contender = false;
  bool contended = false;  // another contender was waiting for the lock at the release
  int64_t granted_ns = 0;  // the next holder's acquire() returned
};

// Handoffs of every lock, in token order per lock. Throws std::runtime_error when a lock's
// tokens repeat (two holds with one token: the lock failed, not the benchmark).
std::vector<Handoff> handoffs(const std::vector<ContenderReport>& contenders);

nlohmann::ordered_json cell_figures(const CellRaw& raw, const FloorResult& floor,
                                    double hold_bound_rtt_ms);

}  // namespace lockbench

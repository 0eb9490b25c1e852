// RapidCheck generators of whole experiments: rc::Gen<Scenario> over every dimension the harness
// runs (cluster size and election timeout, client and workload kind, lock options, workers,
// locks and timings, write concern, and a fixed fault schedule whose kinds come from the fault
// table), within an ExploreSpace.
//
// Sizes grow with RapidCheck's size (0..100): more workers, more faults, longer runs. Time is
// compressed so a case takes seconds: leases of 0.5-1.5 s, election timeouts of 0.5-1 s, runs of
// 2-5 s, faults of 0.2-2.5 s; the quiet phase outlasts the derived liveness bound so recovery is
// judged, not cut short. A case without a partition fault runs on the loopback backend (no
// network to build); one with a partition on the default backend (netns).
//
// Invariants (tested): every generated scenario parses back from scenario_to_toml and names
// only faults and clients of the space; a fault's kind needs no more members than the case has,
// and a fault never outlasts the workload; with properties pinned, the scenario's [check]
// properties are the pinned ones that apply to its client and workload, never none. Only parameters
// a fault kind requires are drawn (clock offsets and jumps, delays); the others keep the fault's
// defaults. Generators are values; any thread.
#pragma once

#include <rapidcheck.h>

#include "explore/space.h"
#include "run/scenario.h"

namespace locklab {

// Limits on what a case may hold, whatever the size.
inline constexpr int kExploreMaxWorkers = 5;
inline constexpr int kExploreMaxFaults = 5;
inline constexpr int64_t kExploreMinFaultMs = 200;
inline constexpr int64_t kExploreMinRunMs = 2000;

rc::Gen<Scenario> scenario_gen(const ExploreSpace& space);

// The time after a scenario's last heal that liveness needs to be judged: the liveness bound the
// run judges that heal by (expiry, election timeout, longest backoff, critical section, and the
// schedule's member clock movement: widest_liveness_bound_ns) and a second of margin.
int64_t recovery_window_ms(const Scenario& scenario);
// The quiet phase that makes the time from the last heal to the run's end at least
// recovery_window_ms (0 when the run's own tail already is; also with no faults).
int64_t quiet_ms_for(const Scenario& scenario);

}  // namespace locklab

// The floor: the round trip of mongolock's acquire findAndModify, the very command the library
// sends, replayed uncontended through raw libmongoc, each grant followed by the replay of the
// library's release (not timed). The two commands are taken from the wire: a Provider on a pool
// of the floor's own acquires and releases the lock once while the pool's APM command-started
// events record what it sent; what the driver adds to any command (session, transaction number,
// cluster time, $db) is left out of the replay. Handoff latencies are reported as multiples of
// this floor's median, measured in the same run against the same server.
// Thread rules: run from one thread, with no cell running.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lockbench {

struct FloorResult {
  std::string target;
  int64_t samples = 0;
  std::vector<double> rtt_ms;  // every sample, in order
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0, mean_ms = 0;
};

inline constexpr int64_t kFloorSamplesMax = 2000;
inline constexpr double kFloorSecondsMax = 2.0;

// Throws std::runtime_error when a round trip fails or an uncontended acquire is not granted.
FloorResult measure_floor(const std::string& uri, const std::string& database,
                          const std::string& lock_name, const std::string& target_name,
                          int64_t samples_max = kFloorSamplesMax,
                          double seconds_max = kFloorSecondsMax);

}  // namespace lockbench

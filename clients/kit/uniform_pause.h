// The pause both seed re-creations take between attempts: min + U(0,1) * (max - min) ms, drawn
// from the lock's own seeded generator (a run's waits are reproducible from its seed), cut short
// by a stop request.
//
// Thread rules: the generator is the caller's and is used by one thread at a time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <stop_token>

namespace locklab::clients {

// Sleeps the drawn pause; false when `stop` was requested before it ended.
inline bool uniform_pause(std::mt19937_64& rng, int64_t min_ms, int64_t max_ms,
                          std::stop_token stop) {
  const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  const int64_t sleep_ms = min_ms + static_cast<int64_t>(u * static_cast<double>(max_ms - min_ms));
  std::mutex mutex;
  std::condition_variable_any cv;
  std::unique_lock<std::mutex> guard(mutex);
  cv.wait_for(guard, stop, std::chrono::milliseconds(sleep_ms), [] { return false; });
  return !stop.stop_requested();
}

}  // namespace locklab::clients

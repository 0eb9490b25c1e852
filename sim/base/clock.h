// The server's wall clock: system time plus a test-only offset (clock-skew faults).
// Everything that reads "now" on the server ($$NOW, $currentDate, the TTL monitor,
// lastWriteDate, election timers) reads it here, so one offset moves them all.
//
// Thread-safe: any thread may read; the offset is changed by an admin command.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace mongosim {

class ServerClock {
 public:
  // Milliseconds since the Unix epoch, as $$NOW would report them.
  int64_t now_ms() const {
    auto real = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
    return real + offset_ms_.load(std::memory_order_relaxed);
  }
  int64_t offset_ms() const { return offset_ms_.load(std::memory_order_relaxed); }
  void set_offset_ms(int64_t offset_ms) { offset_ms_.store(offset_ms, std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> offset_ms_{0};
};

}  // namespace mongosim

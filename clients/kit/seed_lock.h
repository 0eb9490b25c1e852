// The one interface a seed-lock re-creation implements so the shared worker loop (client_run.h)
// can drive it: acquire as the original waits, release as the original releases, and report a
// lost hold when the original has a watchdog that decides so.
//
// Thread rules: acquire and release are called from the worker's one workload thread, never
// concurrently. `on_lost` may be called from another thread (the lock's own watchdog), at most
// once per hold, and never after release() has returned.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>

#include "checker/history.h"

namespace locklab::clients {

// An exclusive hold, or a shared (reader) hold for locks that have them (the rw workload).
enum class HoldMode { kExclusive, kShared };

struct AcquireResult {
  enum class Kind { kAcquired, kFailed, kUnknown };
  Kind kind = Kind::kFailed;
  std::optional<int64_t> token;  // the fencing token, for locks that issue one
  int64_t lease_ms = 0;          // how long the grant lasts if nothing renews it; 0: no end
  std::string detail;            // kFailed: why (definitely not granted); kUnknown: the error
};

struct ReleaseResult {
  enum class Kind { kReleased, kNotHeld, kUnknown };
  Kind kind = Kind::kUnknown;
  std::string detail;  // kNotHeld: why nothing was released; kUnknown: the error
};

class SeedLock {
 public:
  virtual ~SeedLock() = default;
  // Acquires `lock`, waiting the way the original waits, until granted, a definite failure, an
  // error, or `stop` (then kFailed "cancelled"). `on_lost` is the hold's lost notification.
  // It receives the hold's token (nullopt for locks without tokens).
  // kShared is asked only of locks whose client lists the rw workload.
  virtual AcquireResult acquire(const std::string& lock, HoldMode mode, std::stop_token stop,
                                std::function<void(std::optional<int64_t>)> on_lost) = 0;
  // Releases the hold the last successful acquire of `lock` returned.
  virtual ReleaseResult release(const std::string& lock) = 0;
};

// Appends one worker's events to the shared history. Thread-safe (HistoryWriter is).
class Recorder {
 public:
  Recorder(HistoryWriter& history, std::string process)
      : history_(history), process_(std::move(process)) {}

  void record(const std::string& f, EventType type, const std::string& lock,
              std::optional<int64_t> token, nlohmann::json value) {
    Event e;
    e.process = process_;
    e.type = type;
    e.f = f;
    e.lock = lock;
    e.token = token;
    e.value = std::move(value);
    history_.append(std::move(e));
  }

 private:
  HistoryWriter& history_;
  std::string process_;
};

}  // namespace locklab::clients

// mongolock::LockInfo: what inspect() reports about one lock document (for operators).
//
// Times are the server's wall clock (the values stored in the document); `held` is decided on the
// server clock too ($$NOW at the moment of the read), so it never depends on the client's clock.
// Thread rules: plain value type.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mongolock/options.h"

namespace mongolock {

struct HoldInfo {
  std::string acquisition_id;
  Owner owner;
  std::chrono::system_clock::time_point acquired_at;
  std::chrono::system_clock::time_point expires_at;
  int64_t fencing_token = 0;
  bool live = false;  // expires_at > server now
};

struct LockInfo {
  std::string name;
  int64_t last_token = 0;             // highest token ever minted for this name (document)
  std::optional<HoldInfo> exclusive;  // present if the document records an exclusive hold
  std::vector<HoldInfo> shared;       // RwLock shared holds recorded (live or not yet pruned)
  std::chrono::system_clock::time_point server_now;  // $$NOW of the read
};

}  // namespace mongolock

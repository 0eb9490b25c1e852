// The exact command documents mongolock sends (see mongolock.h for the same text in prose).
//
// Pure builders: no I/O, so tests can print and check them. Write concern is not part of these
// documents; Context adds it as a command option.
// Thread rules: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "bson_ptr.h"
#include "mongolock/options.h"

namespace mongolock::detail {

// Per-name counter floor multiplier: a token granted at server time t ms is >= t * 2^20.
inline constexpr int64_t kTokenTimeScale = int64_t{1} << 20;
// TTL indexes, both on reapAt: kTtlIndexName in the rw collection, kReapIndexName in the plain
// one (whose older "mongolock_ttl" index was on expiresAt and reaped released documents early).
inline constexpr const char* kTtlIndexName = "mongolock_ttl";
inline constexpr const char* kReapIndexName = "mongolock_reap";
// Tombstones kept per lock document: the acquisition ids most recently given up by a
// resolution. An acquire whose id is listed is never granted (see mongolock.h).
inline constexpr int kAbandonedIdsMax = 32;

struct HoldRequest {
  std::string_view collection;
  std::string_view name;
  std::string_view id;  // the per-acquisition id
  const Owner* owner;   // only read by acquire builders
  int64_t expiry_ms;
};

// Plain locks.
Bson acquire_command(const HoldRequest& request);
Bson extend_command(const HoldRequest& request);
Bson release_command(const HoldRequest& request);

// Reader/writer locks. max_shared 0 = unlimited.
Bson rw_acquire_command(const HoldRequest& request, bool exclusive, int32_t max_shared);
Bson rw_extend_command(const HoldRequest& request, bool exclusive);
Bson rw_release_command(const HoldRequest& request, bool exclusive);

// Resolution of an acquire whose outcome is unknown: an upsert on {_id: N} that removes any
// hold with this id and records the id in `abandoned`, so the acquire, should it execute later,
// is not granted. Applied or not, the acquire has no hold afterwards.
Bson resolve_command(const HoldRequest& request, bool rw);

// Operators.
Bson force_release_command(std::string_view collection, std::string_view name, bool rw);
Bson inspect_command(std::string_view collection, std::string_view name);
Bson index_command(std::string_view collection, const char* field, const char* name,
                   int64_t reap_after_s);

}  // namespace mongolock::detail

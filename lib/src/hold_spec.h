// HoldSpec: which kind of hold an acquisition asks for, and the commands that act on it.
//
// Keeps the plain-lock / shared / exclusive distinction in one place so the acquire loop and
// the Lease need not know about it.
// Thread rules: plain value type and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "bson_ptr.h"
#include "commands.h"
#include "mongolock/options.h"

namespace mongolock::detail {

struct HoldSpec {
  std::string collection;
  std::string name;
  bool rw = false;         // a reader/writer lock document
  bool exclusive = true;   // for rw: exclusive or shared
  int32_t max_shared = 0;  // for rw shared: 0 = unlimited
};

// `ticket` (plain locks only; ignored for rw) makes the acquire take its turn in the FIFO queue.
Bson acquire_for(const HoldSpec& spec, const std::string& id, const Options& options,
                 const QueueTicket* ticket = nullptr);
// `token` > 0: only the hold of `id` with that token (a hand-over's claim: the waiter id can be
// handed the lock more than once).
Bson extend_for(const HoldSpec& spec, const std::string& id, const Options& options,
                int64_t token = 0);
// `seat`: a local line's first waiter, offered after the queue (notify releases only).
Bson release_for(const HoldSpec& spec, const std::string& id, const Options& options,
                 std::string_view seat = {});
// The short release that offers `seat` while the queue is empty (commands.h
// seat_release_command; notify plain locks only).
Bson seat_release_for(const HoldSpec& spec, const std::string& id, const Options& options,
                      std::string_view seat);
// The key of the lock's local line (local_line.h): collection and name.
inline std::string line_key(const HoldSpec& spec) {
  return spec.collection + '\0' + spec.name;
}
// The tombstone is kept expiry_ms + reap_after_s, or `keep_at_least_ms` if longer (a notify
// waiter id's must outlive its queue entry: KEEP).
Bson resolve_for(const HoldSpec& spec, const std::string& id, const Options& options,
                 int64_t keep_at_least_ms = 0);

// The fencing token of hold `id` in an acquire reply, if the reply says it was granted.
std::optional<int64_t> granted_token(const HoldSpec& spec, const bson_t& reply,
                                     const std::string& id);

// A fresh random 128-bit acquisition id as 32 lowercase hex characters.
std::string new_acquisition_id();
// 64 bits from the kernel's random pool (getrandom(2); std::random_device when it fails): fresh
// in every process, so ids and seeds differ across fork().
uint64_t random_u64();

}  // namespace mongolock::detail

// mongolock::Options: every tunable of a Provider, with defaults and validation.
//
// Invariants (checked by validated(), which throws InvalidArgument naming the field):
//   100 <= expiry_ms <= 86'400'000
//   0 < extension_cadence_ms; extension_cadence_ms + lost_safety_margin_ms < expiry_ms
//   0 <= lost_safety_margin_ms < expiry_ms / 2
//   1 <= busy_wait_min_ms <= busy_wait_max_ms <= 60'000
//   collection names: 1..120 bytes of valid UTF-8, no '$', no NUL, not starting with "system."
//   reap_after_s in [0, 31'536'000]
// Zero in a field marked "0 = derived" means: use the documented derived default.
//
// Thread rules: a plain value type; copy it freely.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace mongolock {

// How a waiting acquire() sleeps between attempts while the lock is held by someone else.
enum class Backoff {
  kRandom,    // uniform in [busy_wait_min_ms, busy_wait_max_ms] (DistributedLock's behaviour)
  kAdaptive,  // min * 1.5^n with +-20 % jitter, clamped to [min, max]; n = failed attempts in
              // this acquire() call (capped at 10), so it restarts at min after every success
  // Decorrelated jitter: min(max, uniform(min, 3 * previous sleep)), the previous sleep
  // starting at min in every acquire() call.
  kDecorrelated,
  kNotify,    // wait to be woken: a plain lock's waiters queue in FIFO order on the lock
              // document and a change stream on the lock collection wakes the one whose turn
              // it is when the lock is released (mongolock.h [notify]); sleeps as kRandom when
              // the server cannot serve the stream, and for RwLock waits
};

// The write concern of every write.
//   majority()  {w: "majority"}: survives failover. The default and the only safe choice.
//   members(n)  {w: n}, 1 <= n <= kWriteConcernMembersMax: an acknowledged grant can be rolled
//               back on failover when n is below a majority, letting a second client acquire
//               and re-issuing a fencing token (and a count stays a count when the set grows).
//               For demonstrating exactly that.
struct WriteConcern {
  static constexpr int kWriteConcernMembersMax = 50;  // a replica set's largest member count
  int members_count = 0;                              // 0 = "majority"
  static constexpr WriteConcern majority() { return {}; }
  static constexpr WriteConcern members(int n) { return {n}; }
  bool is_majority() const { return members_count == 0; }
  bool operator==(const WriteConcern&) const = default;
  // The names of 1.0, when the write concern was an enum of these two.
  static const WriteConcern kMajority;
  static const WriteConcern kW1;
};
inline constexpr WriteConcern WriteConcern::kMajority = WriteConcern::majority();
inline constexpr WriteConcern WriteConcern::kW1 = WriteConcern::members(1);

enum class ReadConcern {
  kMajority,      // inspect() sees only majority-committed state
  kLocal,         // the primary's latest state, possibly rolled back later
  kLinearizable,  // majority + confirms the primary is still primary (slowest)
};

// Stored with every hold so an operator can see who holds a lock (inspect()).
struct Owner {
  std::string host;         // default: gethostname()
  int64_t pid = 0;          // default: getpid()
  std::string description;  // free text, at most 1024 bytes of UTF-8
};

// What the background machinery of a Handle reports (for histories and metrics).
enum class EventKind {
  kExtendSent,     // an extension request is about to be sent (before it can reach the server)
  kExtended,       // the server extended the lease; token unchanged
  kExtendRefused,  // the server says the lease is gone (expired, force-released or taken)
  kExtendUnknown,  // the extension request failed or timed out; lease NOT extended client-side
  kLost,           // the lost notification fired (client lease deadline passed or refusal)
};

struct Event {
  EventKind kind;
  std::string_view lock;  // lock name, valid only during the callback
  int64_t fencing_token;
  std::string_view detail;  // error text for kExtendUnknown, cause for kLost
};

struct Options {
  // Lease length granted by the server on acquire and on each extension.
  int64_t expiry_ms = 30'000;
  // How often a held lock is extended in the background. 0 = derived: expiry_ms / 3.
  int64_t extension_cadence_ms = 0;
  // The lost notification fires at (send time of the last successful acquire/extend request +
  // expiry_ms - lost_safety_margin_ms) on the client's steady clock. The margin absorbs clock
  // rate differences between client and server and the time to react.
  // 0 = derived: max(1, expiry_ms / 10).
  int64_t lost_safety_margin_ms = 0;
  int64_t busy_wait_min_ms = 10;
  int64_t busy_wait_max_ms = 800;
  Backoff backoff = Backoff::kRandom;
  std::string collection = "mongolock_locks";       // plain locks
  std::string rw_collection = "mongolock_rwlocks";  // reader/writer locks
  WriteConcern write_concern = WriteConcern::majority();
  // wtimeout sent with every write. 0 = derived: expiry_ms - lost_safety_margin_ms.
  int64_t write_timeout_ms = 0;
  ReadConcern read_concern = ReadConcern::kMajority;
  Owner owner;  // empty host / pid 0 = filled in from the process
  // appname sent in the driver handshake (lets failCommand target one process). Only used
  // when the Provider builds its own pool from a URI that has no appname= of its own.
  std::string app_name;
  // Extend held locks in the background. Off only for tests and manual extend() callers.
  bool auto_extend = true;
  // Create the TTL indexes {reapAt: 1} (expireAfterSeconds = reap_after_s) once per
  // (cluster, database, collection) per process, in the background. Never on the acquire path;
  // a failure is written to stderr and never blocks acquisition. false creates and drops
  // nothing: an index made earlier keeps reaping. Either way, plain locks are refused while
  // the collection has the expiresAt index of earlier versions (mongolock.h [index]).
  bool create_index = true;
  // A document is reaped reap_after_s after its reapAt (the end of the last lease ever granted
  // on it). expiry_ms + reap_after_s is the server clock step back that tokens survive, and how
  // long a resolved acquire's tombstone is kept (mongolock.h [tombstone]).
  int64_t reap_after_s = 60;
  // Called from background threads; must be quick and must not call into the same Handle.
  std::function<void(const Event&)> on_event;

  // A copy with derived defaults filled in; throws InvalidArgument naming the bad field.
  Options validated() const;
};

}  // namespace mongolock

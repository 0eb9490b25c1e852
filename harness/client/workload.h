// The workloads a locklab-worker process runs on mongolock, each operation recorded in the
// history (vocabulary in checker/history.h):
//   mutex    acquire, hold for critical_section_ms, release;
//   fenced   acquire, hold, then write to a fenced resource: a document in the cluster updated
//            with a server-side token check, so the server accepts a token only if it is not
//            lower than the highest it has seen (with fencing off the check is skipped: the
//            known-unsafe configuration);
//   counter  acquire, read the counter document, hold, write the value read plus one: a
//            read-modify-write guarded only by the lock, so a lost update shows as a count
//            below the number of completed critical sections;
//   rw       on a reader/writer lock (mongolock::RwLock, max_shared readers): each operation
//            takes a shared hold (read_percent of them) or an exclusive one, holds for a random
//            time in [0, 2 * critical_section_ms] (so holds granted in one order write in
//            another), then writes the fenced resource with its token, as `fenced` does;
//            acquire ok carries value.mode ("shared" | "exclusive") and value.max_shared.
// With honour_lost (the default) the lost notification stops the critical section: `lost` is
// recorded once it has stopped (after a write already in flight completes), and nothing more is
// written with that token. Without it, `lost-ignored` is recorded when the notification fires
// and the critical section runs on to its release.
// Every operation that can take effect (acquire, fenced and counter writes, release, background
// extensions) is recorded as `invoke` before its request is sent, and completes with ok, fail
// (definitely not applied) or info (unknown).
//
// Thread rules: run_workload runs on one thread; run_workload_threads runs one such loop per
// config, each on a thread of its own. The lost notification arrives on the lock library's
// watchdog thread and only sets a flag and appends one event.
#pragma once

#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "run/scenario.h"

namespace mongolock {
class Provider;
}

namespace locklab {

struct WorkerConfig {
  std::string id;   // "w1": history process name and driver appname
  std::string uri;  // the cluster's connection string (with appname=id)
  std::string database = "locklab";
  std::string history_path;
  WorkloadKind kind = WorkloadKind::kMutex;
  int locks = 1;
  int64_t critical_section_ms = 50;
  int read_percent = 80;    // rw: the share of operations that take a shared hold
  bool honour_lost = true;  // false: the critical section runs on after the lost notification
  int64_t operations = 0;   // 0: until stopped
  LockSpec lock;
  uint64_t seed = 0;
  int64_t incarnation = 0;  // how many times this worker id was started before (kill-worker)
};

// Collections the workloads use in WorkerConfig::database.
inline constexpr const char* kFencedCollection = "fenced";
inline constexpr const char* kCounterCollection = "counter";
inline constexpr const char* kCounterResource = "counter";
// A fenced resource document keeps the last this many accepted writes in its `writes` list
// (its `count` keeps counting); a final read beyond it cannot name the oldest writes.
inline constexpr int kFencedWritesKept = 10'000;
// Fenced write ids are "<worker>-<incarnation * this + sequence>"; an incarnation stops after
// this many operations minus one, so ids never collide.
inline constexpr int64_t kWriteIdsPerIncarnation = 1'000'000;

// The worker protocol's --write-concern: "majority" (0) or a member count "1".."7" (the
// number itself); nullopt for anything else. And back: the flag's text for a write_concern_w.
inline constexpr int kWriteConcernMembersMax = 7;
std::optional<int> parse_write_concern_flag(const std::string& text);
std::string write_concern_flag(int write_concern_w);

// The name of lock i (0-based): "L1", "L2"...
std::string lock_name(int index);
// The fenced resource guarded by a lock: "R" + lock name.
std::string resource_name(const std::string& lock);

// Runs operations until `operations` are done or `stop` is requested (a held lock is released
// first). Returns the process exit code: 0, or 2 when the worker could not start (the error is
// printed to stderr).
int run_workload(const WorkerConfig& config, std::stop_token stop);

// Threads of one process contending through one Provider, as an application's threads do (what
// mongolock does per Provider, such as its local line, only shows this way: a locklab-worker runs
// one thread): one operation loop per config, each on its own thread, all through `provider`
// (whose options stand instead of each config's `lock`, but for lock.expiry_ms, which is what
// the history's acquire ok says of the lease: give the Provider's; background extensions are not
// recorded), appending to configs[0].history_path. Every config needs a distinct id and that
// history path.
// Returns when every loop has ended (`stop`, or its operations done). Throws
// std::invalid_argument for configs that break those rules, std::runtime_error with the first
// loop's error after all have ended.
void run_workload_threads(mongolock::Provider& provider, const std::vector<WorkerConfig>& configs,
                          std::stop_token stop);

}  // namespace locklab

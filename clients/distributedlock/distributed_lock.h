// A re-creation of DistributedLock.MongoDB 1.0 (the MongoDB provider of the .NET DistributedLock
// library, released in 2.8.0) on libmongoc: the same commands, options, clocks and defaults,
// written here from the algorithm (no code taken from it). Collection "distributed_locks", one
// document per lock name: {_id: name, lockId, acquiredAt, expiresAt, fencingToken}.
//
// Commands, in the order the library sends them:
//   acquire  findAndModify {query: {_id: name}, upsert: true, new: true (ReturnDocument.After),
//            update: [ {$set: {
//              lockId:       {$cond: [E, <new GUID, "N" format>, "$lockId"]},
//              expiresAt:    {$cond: [E, {$dateAdd: {startDate: "$$NOW", unit: "millisecond",
//                                                    amount: <expiry ms>}}, "$expiresAt"]},
//              acquiredAt:   {$cond: [E, "$$NOW", "$acquiredAt"]},
//              fencingToken: {$cond: [E, {$add: [{$ifNull: ["$fencingToken", 0]}, 1]},
//                                     "$fencingToken"]} }} ]}
//            with E = {$lte: [{$ifNull: ["$expiresAt", <1970-01-01>]}, "$$NOW"]}: server time
//            ($$NOW) for both the lease and its expiry. Granted iff the returned lockId is the
//            GUID just sent; the token is the returned fencingToken. No duplicate-key handling:
//            a concurrent insert race is left to the server's upsert retry. Waiting: one
//            immediate try, then sleep min + U(0,1) * (max - min) (BusyWaitSleepTime, default
//            10..800 ms) and retry, without end (Acquire with no timeout). An error ends the
//            acquire (the library throws).
//   index    after the first successful acquire, fire-and-forget on its own thread:
//            createIndexes {key: {expiresAt: 1}, name: "expiresAt_ttl", expireAfterSeconds: 0};
//            IndexOptionsConflict (85), IndexKeySpecsConflict (86) and IndexAlreadyExists (68)
//            count as done, Unauthorized (13) gives up, any other error is retried after the
//            next successful acquire a minute later.
//   renew    see lease_monitor.h (every ExtensionCadence, default Expiry / 3).
//   release  stop the monitor, then delete {_id: name, lockId: <this hold's GUID>} (owner
//            checked). The library ignores the count; the history records 0 as "not held".
// Defaults: Expiry 30 s, ExtensionCadence Expiry / 3, BusyWaitSleepTime 10..800 ms. Write
// concern: none of its own (the database's): here the worker's --write-concern.
//
// The token comes from the document alone, and release deletes the document, so the next
// acquire after a clean release (or a TTL deletion) starts again at token 1.
//
// Thread rules: acquire/release on the workload thread; the monitor and index threads own their
// own connections.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <thread>

#include "client/workload.h"
#include "connection.h"
#include "lease_monitor.h"
#include "seed_lock.h"

namespace locklab::clients::distributedlock {

inline constexpr const char* kCollection = "distributed_locks";
inline constexpr int64_t kDefaultExpiryMs = 30'000;
inline constexpr int64_t kDefaultBusyWaitMinMs = 10;
inline constexpr int64_t kDefaultBusyWaitMaxMs = 800;

class DistributedLock final : public SeedLock {
 public:
  DistributedLock(const WorkerConfig& config, Recorder& recorder);
  ~DistributedLock() override;

  AcquireResult acquire(const std::string& lock, HoldMode mode, std::stop_token stop,
                        std::function<void(std::optional<int64_t>)> on_lost) override;
  ReleaseResult release(const std::string& lock) override;

 private:
  using Clock = std::chrono::steady_clock;
  enum class IndexState { kNone, kRunning, kDone, kFailed, kGaveUp };

  WorkerConfig config_;
  Connection connection_;
  LeaseMonitor monitor_;
  std::mt19937_64 wait_rng_;  // the busy-wait draws (seeded: reproducible)
  std::mt19937_64 guid_rng_;  // lock ids (random_device: unique across incarnations)
  std::string held_lock_id_;  // the GUID of the current hold
  std::atomic<IndexState> index_state_{IndexState::kNone};
  Clock::time_point index_failed_at_;  // written by the index thread before kFailed
  std::jthread index_thread_;

  std::string new_guid();
  bool busy_wait(std::stop_token stop);
  void ensure_index();
};

}  // namespace locklab::clients::distributedlock

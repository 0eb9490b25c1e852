// A re-creation of square/mongo-lock (Go; continued as foomo/mongo-lock) on libmongoc: the same
// commands, options and clock, written here from the algorithm (no code taken from it). One
// document per resource: {resource, exclusive: <lock>, shared: {count, locks: [<lock>...]}},
// <lock> = {lockId, owner, host, comment, createdAt, renewedAt, expiresAt, acquired}. The
// caller chooses the lockId; this worker uses a fresh one per hold ("<id>-<incarnation>-<n>").
//
// Commands:
//   indexes  once at start (Client.CreateIndexes): {resource: 1} unique and sparse (required:
//            without it the upsert below inserts a second document and grants twice), and
//            {exclusive.lockId: 1}, {exclusive.expiresAt: 1}, {shared.locks.lockId: 1},
//            {shared.locks.expiresAt: 1}.
//   XLock    now = the CLIENT's wall clock. findAndModify {upsert: true, new: true,
//            query: {resource: R, $or: [{exclusive.acquired: false},
//                                       {exclusive.expiresAt: {$lte: now}}], shared.count: 0},
//            update: {$set: {resource: R, exclusive: {lockId, owner, host, comment: "",
//                     createdAt: now, renewedAt: null, expiresAt: now + TTL, acquired: true},
//                     shared: {count: 0, locks: []}}}}.
//            A held resource makes the query miss, the upsert insert a second document for R,
//            and the unique index answer E11000: "already locked" (ErrAlreadyLocked). The TTL
//            is in whole seconds: --expiry-ms rounds up to the next second.
//   Unlock   Status: aggregate [{$match: {$or: [{exclusive.lockId: id},
//            {shared.locks.lockId: id}]}}], then newest first by _id, per exclusive hold
//            findAndModify {query: {resource: R, exclusive.lockId: id},
//                           update: {$set: {exclusive: <every field null, acquired: false>}}}.
// No renewal, no lost notification, no token, no waiting: the library returns
// ErrAlreadyLocked at once. The worker retries it after min + U(0,1) * (max - min) of the
// busy-wait flags (its own loop: the library has none). README advice: w "majority".
//
// Thread rules: used from the workload thread only.
#pragma once

#include <random>
#include <string>

#include "connection.h"
#include "seed_lock.h"
#include "workload.h"

namespace locklab::clients::square {

inline constexpr const char* kCollection = "locks";

class SquareLock final : public SeedLock {
 public:
  // Creates the indexes; throws std::runtime_error when it cannot.
  SquareLock(const WorkerConfig& config, Recorder& recorder);

  AcquireResult acquire(const std::string& lock, std::stop_token stop,
                        std::function<void(std::optional<int64_t>)> on_lost) override;
  ReleaseResult release(const std::string& lock) override;

 private:
  WorkerConfig config_;
  Connection connection_;
  std::mt19937_64 wait_rng_;
  std::string host_;
  int64_t ttl_s_;
  int64_t holds_ = 0;    // lockIds handed out by this incarnation
  std::string lock_id_;  // of the current hold

  void create_indexes();
  // One XLock: the reply of the findAndModify.
  Reply xlock(const std::string& resource, const std::string& lock_id);
  bool retry_wait(std::stop_token stop);
};

}  // namespace locklab::clients::square

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
//   SLock    (the rw workload's readers) findAndModify {upsert: true, new: true,
//            query: {resource: R, exclusive.acquired: false, shared.locks.lockId: {$ne: id}
//                    [, shared.count: {$lt: maxConcurrent}]},
//            update: {$inc: {shared.count: 1}, $push: {shared.locks: <lock as above>}}};
//            E11000 again means "already locked". maxConcurrent < 0 is unlimited (--max-shared
//            0). The query ignores exclusive.expiresAt: an expired X lock blocks every reader
//            until something purges it, and XLock's shared.count: 0 ignores expired readers.
//   Unlock   Status: aggregate [{$match: {$or: [{exclusive.lockId: id},
//            {shared.locks.lockId: id}]}}, {$sort: {_id: -1}}] (newest first), then per
//            resource: an exclusive hold findAndModify {query: {resource: R, exclusive.lockId:
//            id}, update: {$set: {exclusive: <every field null, acquired: false>}}}, a shared
//            one findAndModify {query: {resource: R, shared.locks.lockId: id}, update: {$inc:
//            {shared.count: -1}, $pull: {shared.locks: {lockId: id}}}}.
//            Without a TTL (Expiry::kNone: the library's TTL is optional, 0 by default) the lock
//            has expiresAt: null, which no {$lte: now} matches: it never expires, and a holder
//            that crashes or whose Unlock fails leaves the resource locked for good.
// No renewal, no lost notification, no token, no waiting: the library returns
// ErrAlreadyLocked at once. The worker retries it after min + U(0,1) * (max - min) of the
// busy-wait flags (its own loop: the library has none). README advice: w "majority".
//
// Thread rules: used from the workload thread only.
#pragma once

#include <optional>
#include <random>
#include <string>

#include "client/workload.h"
#include "connection.h"
#include "seed_lock.h"

namespace locklab::clients::square {

inline constexpr const char* kCollection = "locks";

// Which indexes the lock's user created: the ones the README requires, or all but the unique
// {resource: 1} (a user who skipped Client.CreateIndexes' unique index, or a collection whose
// indexes were made by hand): the misconfiguration under which XLock grants twice.
enum class Indexes { kAsRequired, kWithoutUniqueResource };

// Whether the locks get a TTL (the worker's --expiry-ms, rounded up to whole seconds) or none
// (the library's default TTL of 0: the lock never expires).
enum class Expiry { kTtl, kNone };

class SquareLock final : public SeedLock {
 public:
  // Creates the indexes; throws std::runtime_error when it cannot.
  // max_shared: readers allowed at once on a resource (0 = unlimited).
  SquareLock(const WorkerConfig& config, int32_t max_shared, Indexes indexes = Indexes::kAsRequired,
             Expiry expiry = Expiry::kTtl);

  AcquireResult acquire(const std::string& lock, HoldMode mode, std::stop_token stop,
                        std::function<void(std::optional<int64_t>)> on_lost) override;
  ReleaseResult release(const std::string& lock) override;

 private:
  WorkerConfig config_;
  int32_t max_shared_;  // SLock's maxConcurrent: -1 = unlimited
  Connection connection_;
  std::mt19937_64 wait_rng_;
  std::string host_;
  int64_t ttl_s_;        // 0: no TTL (Expiry::kNone)
  int64_t holds_ = 0;    // lockIds handed out by this incarnation
  std::string lock_id_;  // of the current hold

  void create_indexes(Indexes indexes);
  Json lock_details(const std::string& lock_id, int64_t now_ms) const;
  // One XLock or SLock: the reply of the findAndModify.
  Reply xlock(const std::string& resource, const std::string& lock_id);
  Reply slock(const std::string& resource, const std::string& lock_id);
  // Unlocks one resource document Status returned; nullopt when it holds nothing of id.
  std::optional<Reply> unlock_one(const Json& doc, const std::string& id);
  bool retry_wait(std::stop_token stop);
};

}  // namespace locklab::clients::square

// A re-creation of the MongoDB lock recipe in Alistair Evans's article "Implementing a shared
// resource lock in your load-balanced application with MongoDB in C#" (its sample project
// alistairjevans/mongodb-locks), on libmongoc: the same commands, options and clock, written
// here from the article's description (no code taken from it). One document per lock:
// {_id: <lock id>, ExpireAt: <date>}.
//
// Commands:
//   index    once at start: createIndexes {key: {ExpireAt: 1}, name: "ExpireAt_1",
//            expireAfterSeconds: 0} -- a TTL index: the server deletes a document once its
//            ExpireAt has passed, on the TTL monitor's schedule (every 60 s by default; the
//            harness starts members with a 1 s pass). It is the only way a lock expires.
//   attempt  findAndModify {query: {_id: <lock>}, update: {$setOnInsert: {ExpireAt: now +
//            1 min}}, upsert: true, new: false (ReturnDocument.Before)}, with `now` the CLIENT's
//            wall clock (DateTime.UtcNow). No previous document (value null): the upsert
//            inserted ours, acquired. A document: someone holds it, not acquired. A concurrent
//            insert answered with E11000: not acquired.
//   wait     AcquireLock: an attempt every 100 ms, for up to 10 s; then it gives up (the worker
//            records a failed acquire and tries again).
//   release  delete {_id: <lock>} -- by name only: no owner check, so a holder whose document
//            the TTL monitor already removed deletes the next holder's lock.
// No renewal, no lost notification, no fencing token. --expiry-ms stands for the article's
// one minute (its default); the article's 100 ms / 10 s wait is fixed (the busy-wait flags
// are not used).
//
// Thread rules: used from the workload thread only.
#pragma once

#include <string>

#include "client/workload.h"
#include "connection.h"
#include "seed_lock.h"

namespace locklab::clients::alistairjevans {

inline constexpr const char* kCollection = "locks";
inline constexpr int64_t kDefaultExpiryMs = 60'000;
inline constexpr int64_t kAttemptEveryMs = 100;
inline constexpr int64_t kAcquireTimeoutMs = 10'000;

class RecipeLock final : public SeedLock {
 public:
  // Creates the TTL index; throws std::runtime_error when it cannot.
  RecipeLock(const WorkerConfig& config, Recorder& recorder);

  AcquireResult acquire(const std::string& lock, HoldMode mode, std::stop_token stop,
                        std::function<void(std::optional<int64_t>)> on_lost) override;
  ReleaseResult release(const std::string& lock) override;

 private:
  WorkerConfig config_;
  Connection connection_;

  Reply attempt(const std::string& lock);
};

}  // namespace locklab::clients::alistairjevans

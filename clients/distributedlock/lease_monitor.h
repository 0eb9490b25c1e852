// The renewal watchdog of the DistributedLock.MongoDB re-creation, after the library's shared
// LeaseMonitor: while a hold is watched, every `cadence` it first checks a client stopwatch —
// if more than the expiry has passed since the last successful renewal, the hold is lost —
// and otherwise renews:
//   update {_id: <name>, lockId: <this hold's id>}
//          with [ {$set: {expiresAt: {$dateAdd: {startDate: "$$NOW", unit: "millisecond",
//                                                  amount: <expiry ms>}}}} ]
// (no expiry predicate: an expired hold nobody took is silently revived). Matched >= 1:
// renewed, and the stopwatch restarts when the reply has been processed (not when the request
// was sent: the client believes in a lease that ends later than the server's). Matched 0: lost.
// An error or timeout: unknown, the loop goes on without restarting the stopwatch. The next
// tick is `cadence` after the previous one finished. The renewal request has no deadline of its
// own: it waits as long as the driver's defaults let it.
//
// History: each renewal is `extend` invoke (before the request) -> ok {lease_ms} | fail
// {reason} | info {error}. A renewal still in flight when the hold is released gets no
// completion (allowed by the vocabulary).
//
// Thread rules: one watchdog thread owns the monitor's connection; watch() and unwatch() are
// called from the workload thread; the lost notification is called on the watchdog thread with
// no lock held.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "connection.h"
#include "seed_lock.h"

namespace locklab::clients::distributedlock {

struct WatchedHold {
  std::string lock;
  std::string lock_id;
  int64_t token = 0;
  std::function<void(std::optional<int64_t>)> on_lost;
};

class LeaseMonitor {
 public:
  // The connection must be used by nothing else; the thread starts here.
  LeaseMonitor(std::unique_ptr<Connection> connection, Recorder& recorder, std::string collection,
               int64_t expiry_ms, int64_t cadence_ms);
  ~LeaseMonitor();  // stops and joins the watchdog (waits for a renewal in flight)
  LeaseMonitor(const LeaseMonitor&) = delete;
  LeaseMonitor& operator=(const LeaseMonitor&) = delete;

  // Starts watching a hold whose acquire reply has just been processed (the stopwatch starts).
  void watch(WatchedHold hold);
  // Stops watching (a renewal in flight completes unrecorded).
  void unwatch();

 private:
  using Clock = std::chrono::steady_clock;

  std::unique_ptr<Connection> connection_;
  Recorder& recorder_;
  const std::string collection_;
  const std::chrono::milliseconds expiry_;
  const std::chrono::milliseconds cadence_;

  std::mutex mutex_;
  std::condition_variable_any cv_;
  std::optional<WatchedHold> hold_;  // guarded by mutex_
  uint64_t generation_ = 0;          // guarded; bumped by watch/unwatch/loss
  Clock::time_point renewed_at_;     // guarded; the stopwatch's start
  Clock::time_point next_tick_;      // guarded
  bool notifying_ = false;           // guarded; a lost notification is being delivered
  std::jthread thread_;              // last: starts after every member above exists

  void loop(std::stop_token stop);
  void tick(std::unique_lock<std::mutex>& guard, uint64_t generation);
  void lose(std::unique_lock<std::mutex>& guard);
};

}  // namespace locklab::clients::distributedlock

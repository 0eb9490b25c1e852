// A wake-up for waiters on "the data or the commit point may have moved": a change stream's
// getMore waits here for a new majority-committed event (docs/mongodb-behaviour.md, Change
// streams), and a sync source's replSetFetchOplog for an entry after the fetcher's (Oplog and
// rollback). Producers call notify() after an oplog append or truncation, a commit point advance,
// or a cursor being killed; shutdown() wakes everyone for good.
//
// A waiter that only cares about some moves (a change stream's getMore: a new event for its
// pipeline) parks on pump() instead (change_pump.h), which looks on one thread and wakes only
// the waiters a move was for.
//
// Invariants: generation() never decreases; once shutting_down() is true it stays true.
// Thread rules: internally synchronised with a leaf mutex (nothing else is taken while it is
// held), so producers may notify while holding their own locks (the store's data mutex, the
// replication coordinator's mutex); waiters must hold no lock a producer needs.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

namespace mongosim {

class ChangePump;

class ChangeSignal {
 public:
  ChangeSignal();
  ~ChangeSignal();  // stops and joins the pump's thread, if it ran
  ChangeSignal(const ChangeSignal&) = delete;
  ChangeSignal& operator=(const ChangeSignal&) = delete;

  using Clock = std::chrono::steady_clock;
  // Who waits: counted apart, so a test can tell a waiting getMore from a waiting fetch.
  // kPump: the pump's own thread (waiters(kPump) is 0: it counts nobody).
  enum class Waiter { kChangeStream, kOplogFetch, kPump };

  // A counter bumped by every notify(). A waiter reads it before looking at the state it waits
  // on, then waits for it to move: a notify() between the look and the wait is not lost.
  uint64_t generation() const;
  void notify();
  void shutdown();
  bool shutting_down() const;

  // Blocks until generation() differs from `seen`, shutdown, or `deadline`. Returns false when
  // the deadline passed with nothing new.
  bool wait_for_change(uint64_t seen, Clock::time_point deadline,
                       Waiter who = Waiter::kChangeStream) const;
  // How many threads of that kind wait now, inside wait_for_change() or parked on the pump
  // (serverStatus shows it, so a test can write while a getMore or a fetch is known to be
  // waiting).
  int64_t waiters(Waiter who = Waiter::kChangeStream) const;

  // The pump of this signal, made at the first call; its thread at its first wait.
  ChangePump& pump();

 private:
  friend class ChangePump;
  void count_parked(int64_t delta) const;  // a getMore parked on the pump, as kChangeStream

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  uint64_t generation_ = 0;
  mutable int64_t stream_waiters_ = 0;
  mutable int64_t fetch_waiters_ = 0;
  bool shutting_down_ = false;
  std::once_flag pump_made_;
  std::unique_ptr<ChangePump> pump_;  // last: destroyed first, while the rest is alive
};

}  // namespace mongosim

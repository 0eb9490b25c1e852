// A wake-up for waiters on "the data or the commit point may have moved": a change stream's
// getMore waits here for a new majority-committed event (docs/mongodb-behaviour.md, Change
// streams), and a sync source's replSetFetchOplog for an entry after the fetcher's (Oplog and
// rollback). Producers call notify() after an oplog append or truncation, a commit point advance,
// or a cursor being killed; shutdown() wakes everyone for good.
//
// Invariants: generation() never decreases; once shutting_down() is true it stays true.
// Thread rules: internally synchronised with a leaf mutex (nothing else is taken while it is
// held), so producers may notify while holding their own locks (the store's data mutex, the
// replication coordinator's mutex); waiters must hold no lock a producer needs.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace mongosim {

class ChangeSignal {
 public:
  using Clock = std::chrono::steady_clock;
  // Who waits: counted apart, so a test can tell a waiting getMore from a waiting fetch.
  enum class Waiter { kChangeStream, kOplogFetch };

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
  // How many threads of that kind are inside wait_for_change() now (serverStatus shows it, so a
  // test can write while a getMore or a fetch is known to be waiting).
  int64_t waiters(Waiter who = Waiter::kChangeStream) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  uint64_t generation_ = 0;
  mutable int64_t stream_waiters_ = 0;
  mutable int64_t fetch_waiters_ = 0;
  bool shutting_down_ = false;
};

}  // namespace mongosim

// The replication-state lock (mongod's RSTL): what makes "this member is the writable primary of
// term T" a fact that cannot change under a running write, and what keeps client writes and the
// oplog fetcher from ever appending to the oplog at the same time.
//
// The lock publishes one WriteState {writable, term}. It changes only under the EXCLUSIVE hold;
// whoever holds the lock SHARED sees it frozen.
//
// Which hold guards which invariant:
// - Client writes (insert/update/delete/findAndModify, catalog commands), TTL deletes and the
//   linearizable-read no-op hold it SHARED from their writability check through their last oplog
//   append. They append only if the published state is writable, and stamp every entry with the
//   published term, captured once. So an entry of term T is appended only while this member is the
//   published writable primary of T, and never with a term read later.
// - The oplog fetcher holds it SHARED while it applies a batch, and applies only if the published
//   state is NOT writable. Since the state cannot change while either holds it, a client write and
//   a fetched batch never interleave in the oplog.
// - The replication layer takes it EXCLUSIVE to publish a new state: stepping down, adopting a
//   newer term while primary, starting a replSetStepDown, and stepping up (the new primary's no-op
//   is appended under the same exclusive hold, then writability is published). Asking for the
//   exclusive hold interrupts running writes: interrupt_requested() turns true and they fail with
//   11602 InterruptedDueToReplStateChange at their next append, having written nothing more. New
//   shared holds wait while an exclusive hold is pending (no writer starvation).
// A member without a replication layer (standalone, one-member set) is "unmanaged": its state is
// read from a function (the member's ReplicaState) at each shared acquisition.
//
// Lock order: ReplStateLock before the replication layer's mutex and before the data lock. Nobody
// may ask for this lock while holding either of those.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

namespace mongosim {

struct WriteState {
  bool writable = false;
  int64_t term = 0;
  bool operator==(const WriteState&) const = default;
};

class ReplStateLock {
 public:
  ReplStateLock() = default;
  ReplStateLock(const ReplStateLock&) = delete;
  ReplStateLock& operator=(const ReplStateLock&) = delete;

  // A shared hold: the state it saw is the state until it is released.
  class Shared {
   public:
    explicit Shared(ReplStateLock& lock);
    ~Shared();
    Shared(const Shared&) = delete;
    Shared& operator=(const Shared&) = delete;
    const WriteState& state() const { return state_; }
    // True once someone waits for the exclusive hold: a write must stop at its next append.
    bool interrupt_requested() const { return lock_.exclusive_waiting_.load() > 0; }

   private:
    ReplStateLock& lock_;
    WriteState state_;
  };

  // The exclusive hold; publish() changes the state (managed members only).
  class Exclusive {
   public:
    explicit Exclusive(ReplStateLock& lock);
    ~Exclusive();
    Exclusive(const Exclusive&) = delete;
    Exclusive& operator=(const Exclusive&) = delete;
    void publish(WriteState state);

   private:
    ReplStateLock& lock_;
  };

  // Until the replication layer manages the state, this answers (thread-safe, cheap).
  void set_unmanaged_source(std::function<WriteState()> source);
  // The published state, for a quick "does it need to change" check without the lock; managed()
  // turns true at the first publish().
  WriteState published() const;
  bool managed() const { return managed_.load(); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int readers_ = 0;
  bool writer_ = false;
  std::atomic<int> exclusive_waiting_{0};
  std::atomic<bool> managed_{false};
  std::atomic<bool> published_writable_{false};
  std::atomic<int64_t> published_term_{0};
  std::function<WriteState()> unmanaged_source_;
};

}  // namespace mongosim

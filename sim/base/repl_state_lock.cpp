#include "base/repl_state_lock.h"

#include <cassert>

namespace mongosim {

ReplStateLock::Shared::Shared(ReplStateLock& lock) : lock_(lock) {
  std::function<WriteState()> source;
  {
    std::unique_lock guard(lock_.mu_);
    lock_.cv_.wait(guard, [&] { return !lock_.writer_ && lock_.exclusive_waiting_.load() == 0; });
    ++lock_.readers_;
    if (lock_.managed_.load()) {
      state_ = WriteState{lock_.published_writable_.load(), lock_.published_term_.load()};
    } else {
      source = lock_.unmanaged_source_;
    }
  }
  if (source) state_ = source();
}

ReplStateLock::Shared::~Shared() {
  std::lock_guard guard(lock_.mu_);
  assert(lock_.readers_ > 0);
  if (--lock_.readers_ == 0) lock_.cv_.notify_all();
}

ReplStateLock::Exclusive::Exclusive(ReplStateLock& lock) : lock_(lock) {
  std::unique_lock guard(lock_.mu_);
  ++lock_.exclusive_waiting_;  // from here on, running writes see
                               // interrupt_requested()
  lock_.cv_.wait(guard, [&] { return !lock_.writer_ && lock_.readers_ == 0; });
  --lock_.exclusive_waiting_;
  lock_.writer_ = true;
}

ReplStateLock::Exclusive::~Exclusive() {
  std::lock_guard guard(lock_.mu_);
  lock_.writer_ = false;
  lock_.cv_.notify_all();
}

void ReplStateLock::Exclusive::publish(WriteState state) {
  assert(lock_.writer_);
  // The term a writable state names never goes backwards (one primary per term).
  assert(!state.writable || state.term >= lock_.published_term_.load());
  lock_.published_writable_.store(state.writable);
  lock_.published_term_.store(state.term);
  lock_.managed_.store(true);
}

void ReplStateLock::set_unmanaged_source(std::function<WriteState()> source) {
  std::lock_guard guard(mu_);
  unmanaged_source_ = std::move(source);
}

WriteState ReplStateLock::published() const {
  return WriteState{published_writable_.load(), published_term_.load()};
}

}  // namespace mongosim

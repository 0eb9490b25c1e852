#include "base/change_pump.h"

#include <cassert>
#include <chrono>

namespace mongosim {

namespace {
// The pump's wait on the signal is renewed this often when nothing moves (a bound, not a poll:
// every move of the signal wakes it at once).
constexpr auto kPumpIdleRenewal = std::chrono::hours(1);
}  // namespace

struct ChangePump::Slot {
  enum class State { kParked, kLooking, kWoken };
  uint64_t seen = 0;  // the newest generation a look of this waiter is known to have seen
  std::function<bool()> look;
  State state = State::kParked;
  Woken result = Woken::kDone;
  std::exception_ptr error;
  // Set by the waiter once its deadline passed while its look ran: it now waits for that look's
  // end, so the pump wakes it when the look ends whatever the look found.
  bool awaits_look_end = false;
  std::condition_variable cv;  // this waiter's own: the pump wakes nobody else
};

ChangePump::ChangePump(ChangeSignal& signal, std::chrono::microseconds round_budget)
    : signal_(signal), round_budget_(round_budget) {}

ChangePump::~ChangePump() {
  {
    std::lock_guard lock(mu_);
    assert(slots_.empty());
    stopping_ = true;
  }
  signal_.notify();  // wakes the pump thread from its wait on the signal
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

size_t ChangePump::parked() const {
  std::lock_guard lock(mu_);
  return slots_.size();
}

void ChangePump::start_if_needed() {
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
}

ChangePump::Woken ChangePump::wait(uint64_t seen, ChangeSignal::Clock::time_point deadline,
                                   std::function<bool()> look) {
  std::unique_lock lock(mu_);
  if (stopping_ || signal_.shutting_down() || signal_.generation() != seen) {
    return Woken::kLookAgain;
  }
  if (slots_.size() >= kMaxParked) {
    lock.unlock();
    signal_.wait_for_change(seen, deadline);
    return Woken::kLookAgain;
  }
  start_if_needed();
  Slot slot;
  slot.seen = seen;
  slot.look = std::move(look);
  auto it = slots_.insert(slots_.end(), &slot);
  signal_.count_parked(+1);
  bool woken =
      slot.cv.wait_until(lock, deadline, [&] { return slot.state == Slot::State::kWoken; });
  // At the deadline a running look is let finish: it may have read (and consumed) a batch.
  slot.awaits_look_end = true;
  slot.cv.wait(lock, [&] { return slot.state != Slot::State::kLooking; });
  woken = slot.state == Slot::State::kWoken;
  slots_.erase(it);
  signal_.count_parked(-1);
  lock.unlock();
  if (slot.error) std::rethrow_exception(slot.error);
  return woken ? slot.result : Woken::kDeadline;
}

void ChangePump::run() {
  for (;;) {
    const uint64_t generation = signal_.generation();
    {
      std::unique_lock lock(mu_);
      if (stopping_) return;
      if (signal_.shutting_down()) {
        for (Slot* slot : slots_) {
          if (slot->state != Slot::State::kParked) continue;
          slot->state = Slot::State::kWoken;
          slot->result = Woken::kLookAgain;
          slot->cv.notify_one();
        }
        // wait() parks nobody from now on; only the destructor ends this.
        stop_cv_.wait(lock, [&] { return stopping_; });
        return;
      }
    }
    look_round(generation);
    signal_.wait_for_change(generation, ChangeSignal::Clock::now() + kPumpIdleRenewal,
                            ChangeSignal::Waiter::kPump);
  }
}

void ChangePump::look_round(uint64_t generation) {
  const auto budget_end = ChangeSignal::Clock::now() + round_budget_;
  bool looked = false;
  std::unique_lock lock(mu_);
  // A slot parked during the round is appended (std::list: `it` stays valid), and a waiter
  // erases only its own slot, never one being looked at.
  for (auto it = slots_.begin(); it != slots_.end() && !stopping_; ++it) {
    Slot* slot = *it;
    if (slot->state != Slot::State::kParked || slot->seen == generation) continue;
    if (looked && ChangeSignal::Clock::now() >= budget_end) {
      slot->state = Slot::State::kWoken;  // over budget: it looks on its own thread
      slot->result = Woken::kLookAgain;
      slot->cv.notify_one();
      continue;
    }
    slot->state = Slot::State::kLooking;
    looked = true;
    lock.unlock();
    bool done = false;
    std::exception_ptr error;
    try {
      done = slot->look();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    slot->seen = generation;
    if (done || error) {
      slot->state = Slot::State::kWoken;
      slot->result = Woken::kDone;
      slot->error = error;
    } else {
      slot->state = Slot::State::kParked;
    }
    // A waiter whose look found nothing sleeps on: waking it only to sleep again cost a context
    // switch (and a round of mu_) per parked stream per move of the signal.
    if (slot->state == Slot::State::kWoken || slot->awaits_look_end) slot->cv.notify_one();
  }
}

}  // namespace mongosim

#include "local_line.h"

#include <algorithm>
#include <cassert>

namespace mongolock::detail {

namespace {

bool settled(LocalLines::SeatState state) {
  return state != LocalLines::SeatState::kWaiting && state != LocalLines::SeatState::kOffered;
}

}  // namespace

void LocalLines::set_state(Seat& seat, SeatState state) {
  seat.state_ = state;
  seat.changed_.notify_all();
}

// Every seat not offered leaves with kAsk; an offered one stays until its release settles.
// Allocates nothing, so a release's settling cannot fail half way.
void LocalLines::close(Line& line) {
  line.owner.clear();
  line.pending = false;
  for (const std::shared_ptr<Seat>& seat : line.seats) {
    if (seat->state_ != SeatState::kOffered) set_state(*seat, SeatState::kAsk);
  }
  std::erase_if(line.seats, [](const std::shared_ptr<Seat>& seat) {
    return seat->state_ != SeatState::kOffered;
  });
}

void LocalLines::own(Line& line, const std::string& holder, int64_t token, bool pending,
                     std::chrono::milliseconds stale_after) {
  assert(!holder.empty());
  line.owner = holder;
  line.token = std::max(line.token, token);
  line.pending = pending;
  if (pending) line.stale_at = std::chrono::steady_clock::now() + stale_after;
}

void LocalLines::forget_if_idle(const std::string& lock) {
  auto it = lines_.find(lock);
  if (it != lines_.end() && it->second.owner.empty() && it->second.seats.empty()) lines_.erase(it);
}

std::shared_ptr<LocalLines::Seat> LocalLines::join(const std::string& lock,
                                                   const std::string& waiter, bool* leads) {
  std::lock_guard guard(mutex_);
  auto it = lines_.find(lock);
  if (it == lines_.end() || it->second.owner.empty()) {
    if (leads != nullptr) {
      own(lines_[lock], waiter, /*token=*/0, /*pending=*/true, leader_stale_);
      *leads = true;
    }
    return nullptr;
  }
  if (it->second.seats.size() >= kSeatsMax) return nullptr;
  auto seat = std::make_shared<Seat>(waiter);
  it->second.seats.push_back(seat);
  return seat;
}

LocalLines::Outcome LocalLines::wait(const std::string& lock, Seat& seat, SteadyTime until,
                                     const std::stop_token& stop) {
  std::unique_lock guard(mutex_);
  while (!settled(seat.state_)) {
    const SteadyTime now = std::chrono::steady_clock::now();
    auto it = lines_.find(lock);
    assert(it != lines_.end());  // a seat not settled is in its line
    Line& line = it->second;
    if (stop.stop_requested() || now >= until) {
      if (seat.state_ == SeatState::kWaiting) {
        std::erase_if(line.seats, [&](const std::shared_ptr<Seat>& s) { return s.get() == &seat; });
        seat.state_ = SeatState::kLeft;
        forget_if_idle(lock);
        break;
      }
      // Offered: its release is in flight (one round trip) and settles it.
      seat.changed_.wait(guard, [&] { return seat.state_ != SeatState::kOffered; });
      continue;
    }
    SteadyTime wake = until;
    if (line.pending) {
      const SteadyTime stale_at = line.stale_at;
      if (now >= stale_at) {
        close(line);  // a hand-over nobody claimed
        continue;
      }
      wake = std::min(wake, stale_at);
    }
    const SeatState before = seat.state_;
    seat.changed_.wait_until(guard, stop, wake, [&] { return seat.state_ != before; });
  }
  return Outcome{seat.state_, seat.token_, seat.anchor_};
}

void LocalLines::arrive(const std::string& waiter) {
  std::lock_guard guard(mutex_);
  waiters_.insert(waiter);
}

void LocalLines::depart(const std::string& lock, const std::string& waiter, bool close_owned) {
  std::lock_guard guard(mutex_);
  waiters_.erase(waiter);
  if (!close_owned) return;
  auto it = lines_.find(lock);
  if (it == lines_.end() || it->second.owner != waiter) return;
  close(it->second);
  forget_if_idle(lock);
}

void LocalLines::opened(const std::string& lock, const std::string& hold, int64_t token) {
  std::lock_guard guard(mutex_);
  Line& line = lines_[lock];
  // A Lease starts right after its grant and before its release: it is the lock's holder, the
  // newest grant this Provider has seen (the token check keeps a Lease that started late, after
  // its hold lapsed and another of this Provider's was granted, from taking the line back).
  if (token >= line.token) own(line, hold, token, /*pending=*/false, stale_);
}

void LocalLines::closed(const std::string& lock, const std::string& hold) {
  std::lock_guard guard(mutex_);
  auto it = lines_.find(lock);
  if (it == lines_.end() || it->second.owner != hold) return;
  close(it->second);
  forget_if_idle(lock);
}

std::shared_ptr<LocalLines::Seat> LocalLines::offer(const std::string& lock,
                                                    const std::string& hold) {
  std::lock_guard guard(mutex_);
  auto it = lines_.find(lock);
  if (it == lines_.end() || it->second.owner != hold || it->second.seats.empty()) return nullptr;
  std::shared_ptr<Seat> front = it->second.seats.front();
  if (front->state_ != SeatState::kWaiting) return nullptr;  // an earlier owner's offer in flight
  set_state(*front, SeatState::kOffered);
  return front;
}

void LocalLines::settle(const std::string& lock, const std::string& hold,
                        const std::shared_ptr<Seat>& offered, Settled how,
                        const std::string& holder, int64_t token, SteadyTime sent_at) {
  std::lock_guard guard(mutex_);
  auto it = lines_.find(lock);
  if (it == lines_.end()) return;  // no seat offered (a line with one is kept) and nothing to own
  Line& line = it->second;
  assert(!offered || (offered->state_ == SeatState::kOffered && !line.seats.empty() &&
                      line.seats.front() == offered));
  // Only a release of the line's owner moves it on. Replies are settled in the order their
  // threads get here, not the order the server ran them: a grantee can take its hand-over from
  // its stream or its own attempt, start its Lease (which owns the line from then) and release
  // before the releaser reads its reply, which must then change nothing.
  // A hand-over to a call that has ended (its leave ran after the grant and handed the lock on
  // or freed it) leaves the lock to nobody of this line.
  if (how == Settled::kOwnWaiter && !waiters_.contains(holder)) how = Settled::kGone;
  const bool owns = line.owner == hold;
  const bool granted = how == Settled::kSeatGranted || how == Settled::kOwnWaiter;
  if (owns && !granted) close(line);
  if (offered) {
    offered->token_ = token;
    offered->anchor_ = sent_at;
    // Not granted, and the line still open (given to a queued waiter of this Provider, or owned
    // by a newer hold when this reply came late): it stays first.
    const bool stays =
        how != Settled::kSeatGranted && how != Settled::kUnknown && !line.owner.empty();
    if (stays) {
      set_state(*offered, SeatState::kWaiting);
    } else {
      line.seats.pop_front();
      set_state(*offered, how == Settled::kSeatGranted ? SeatState::kGranted
                          : how == Settled::kUnknown   ? SeatState::kUnknown
                                                       : SeatState::kAsk);
    }
  }
  // Last: the owner's copy is the one step that allocates; if it fails the line closes (its seats
  // attempt) rather than keep an owner that has released.
  if (owns && granted) {
    try {
      own(line, holder, token, /*pending=*/true, stale_);
    } catch (...) {
      close(line);
    }
  }
  forget_if_idle(lock);
}

std::string LocalLines::owner(const std::string& lock) const {
  std::lock_guard guard(mutex_);
  auto it = lines_.find(lock);
  return it == lines_.end() ? std::string() : it->second.owner;
}

size_t LocalLines::seats(const std::string& lock) const {
  std::lock_guard guard(mutex_);
  auto it = lines_.find(lock);
  return it == lines_.end() ? 0 : it->second.seats.size();
}

}  // namespace mongolock::detail

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
void LocalLines::close(Line& line) {
  line.owner.clear();
  line.pending = false;
  std::deque<std::shared_ptr<Seat>> kept;
  for (const std::shared_ptr<Seat>& seat : line.seats) {
    if (seat->state_ == SeatState::kOffered) {
      kept.push_back(seat);
    } else {
      set_state(*seat, SeatState::kAsk);
    }
  }
  line.seats = std::move(kept);
}

void LocalLines::own(Line& line, const std::string& holder, bool pending) {
  assert(!holder.empty());
  line.owner = holder;
  line.pending = pending;
  if (pending) line.pending_since = std::chrono::steady_clock::now();
}

void LocalLines::forget_if_idle(const std::string& lock) {
  auto it = lines_.find(lock);
  if (it != lines_.end() && it->second.owner.empty() && it->second.seats.empty()) lines_.erase(it);
}

std::shared_ptr<LocalLines::Seat> LocalLines::join(const std::string& lock,
                                                   const std::string& waiter) {
  std::lock_guard guard(mutex_);
  auto it = lines_.find(lock);
  if (it == lines_.end() || it->second.owner.empty() || it->second.seats.size() >= kSeatsMax) {
    return nullptr;
  }
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
      const SteadyTime stale_at = line.pending_since + stale_;
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

void LocalLines::opened(const std::string& lock, const std::string& hold) {
  std::lock_guard guard(mutex_);
  own(lines_[lock], hold, /*pending=*/false);
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
  Line& line = lines_[lock];
  if (offered) {
    assert(offered->state_ == SeatState::kOffered && !line.seats.empty() &&
           line.seats.front() == offered);
    if (how == Settled::kOwnWaiter) {
      set_state(*offered, SeatState::kWaiting);  // still first in line
    } else {
      line.seats.pop_front();
      offered->token_ = token;
      offered->anchor_ = sent_at;
      set_state(*offered, how == Settled::kSeatGranted ? SeatState::kGranted
                          : how == Settled::kGone      ? SeatState::kAsk
                                                       : SeatState::kUnknown);
    }
  }
  // Who holds the lock now is what the reply says, whoever owned the line; a release that lost
  // the lock to nobody of this Provider closes only a line it still owns.
  switch (how) {
    case Settled::kSeatGranted:
    case Settled::kOwnWaiter:
      own(line, holder, /*pending=*/true);
      break;
    case Settled::kGone:
    case Settled::kUnknown:
      if (line.owner == hold || line.owner.empty()) close(line);
      break;
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

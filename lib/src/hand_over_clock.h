// HandOverClock: what one notify waiter knows about hand-overs to it, and the lease clock start
// (ANCHOR) of one it takes (notify_waiter.h "Hand-overs").
//
// Invariants: the anchor is the send time of the latest attempt whose reply showed the lock not
// held by this waiter, or of the first sent attempt before any such reply; a hand-over is taken
// only with a token above every token such a reply showed (one not above ran before that
// attempt, so the anchor would not precede it, and it is over: tokens of a lock only grow); of
// two hand-overs seen, the one with the higher token is taken; each is taken once (a later
// reply or event showing a hand-over already taken, or an older one, is dropped: its claim
// ended, and a hand-over whose lease lapsed is never taken again).
// Thread rules: a plain value type, used by its waiter's thread only.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>

namespace mongolock::detail {

class HandOverClock {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;
  struct Taken {
    int64_t token = 0;
    SteadyTime anchor;
  };

  // An attempt was sent at `sent_at` (whatever became of it).
  void sent(SteadyTime sent_at) {
    if (!anchor_) anchor_ = sent_at;
  }
  // Its reply showed the lock held by this waiter with `token` (a hand-over before it ran).
  void reply_held(int64_t token) { seen(token); }
  // Its reply showed the lock not held by this waiter, with `token` (0: none).
  void reply_not_held(SteadyTime sent_at, int64_t token) {
    anchor_ = sent_at;
    not_held_token_ = std::max(not_held_token_, token);
  }
  // The stream delivered a hand-over with `token`.
  void streamed(int64_t token) { seen(token); }
  // The latest hand-over seen since the last take, if it may be taken.
  std::optional<Taken> take() {
    const std::optional<int64_t> token = std::exchange(pending_, std::nullopt);
    if (!token || !anchor_ || *token <= std::max(not_held_token_, taken_token_)) {
      return std::nullopt;
    }
    taken_token_ = *token;
    return Taken{*token, *anchor_};
  }

 private:
  void seen(int64_t token) {
    if (!pending_ || token > *pending_) pending_ = token;
  }
  std::optional<SteadyTime> anchor_;
  std::optional<int64_t> pending_;
  int64_t not_held_token_ = 0;
  int64_t taken_token_ = 0;  // the highest token taken
};

}  // namespace mongolock::detail

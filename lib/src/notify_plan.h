// plan_notify_wait: how long a notify waiter may sleep after a refused attempt, read from the
// lock document that attempt returned (findAndModify new: true), without a wake-up.
//
// The change stream wakes a queued waiter when a release hands it the lock, or frees the lock
// with its entry first (mongolock.h [notify]). What no event announces, it must time itself: a
// lease that lapses (its holder died), a head that does not come for a free lock (the grace
// period; the head is the first live entry not tombstoned, as the acquire's pipeline finds it),
// and its own entry's keep time (it must attempt again to stay queued). The server's clock
// is read from the waiter's own entry (until = NOW + keep_ms at this attempt); the lease end and
// the grace end are differences on that clock, applied to the client's steady clock: a wake-up
// time, never a safety decision (the attempt's pipeline decides on the server clock alone).
//
// Invariant: a planned sleep is in [min_ms, keep_ms / 2], so a live waiter refreshes its entry
// at least twice per keep time.
// Thread rules: a pure function.
#pragma once

#include <bson/bson.h>

#include <algorithm>
#include <cstdint>
#include <optional>

#include "commands.h"
#include "mongolock/options.h"

namespace mongolock::detail {

struct NotifyPlan {
  bool queued = false;              // the document lists the waiter's entry
  std::optional<int64_t> sleep_ms;  // nullopt: not queued (the queue is full): poll instead
};

// How long a queue entry stays live after its waiter's last attempt: twice the longest sleep a
// live waiter takes between attempts (a lease while streaming; busy_wait_max_ms while polling).
inline int64_t queue_keep_ms(const Options& options) {
  return 2 * std::max(options.expiry_ms, options.busy_wait_max_ms);
}

NotifyPlan plan_notify_wait(const bson_t& lock_document, const QueueTicket& ticket, int64_t min_ms);

}  // namespace mongolock::detail

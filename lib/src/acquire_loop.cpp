#include "acquire_loop.h"

#include <condition_variable>
#include <mutex>
#include <random>
#include <system_error>
#include <thread>

#include "backoff.h"
#include "commands.h"
#include "lease.h"
#include "mongolock/errors.h"
#include "notify_plan.h"
#include "notify_waiter.h"
#include "validation.h"

namespace mongolock::detail {

namespace {

using Clock = std::chrono::steady_clock;

enum class Attempt { kGranted, kBusy };

struct AttemptResult {
  Attempt kind = Attempt::kBusy;
  std::optional<Handle> handle;
  std::string unchecked;         // why nothing was sent: the indexes could not be checked
  std::optional<Bson> document;  // the lock document a refused attempt returned
  std::optional<Clock::time_point> sent_at;  // when the attempt was sent, if it was
  ClusterTime operation_time = 0;            // a refused attempt's Reply::operation_time
};

std::string describe(const HoldSpec& spec) {
  std::string kind =
      spec.rw ? (spec.exclusive ? "exclusive hold of rw lock" : "shared hold of rw lock") : "lock";
  return kind + " '" + spec.name + "'";
}

// Takes a hold slot, or throws Error at the holds limit.
void reserve_hold_or_throw(Context& context, const HoldSpec& spec) {
  if (!context.try_reserve_hold()) {
    throw Error("mongolock: acquire of " + describe(spec) + " refused: this Provider already has " +
                std::to_string(kHoldsPerProviderMax) + " holds (the limit)");
  }
}

Clock::time_point deadline_after(std::chrono::milliseconds timeout) {
  const Clock::time_point now = Clock::now();
  if (timeout >=
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::time_point::max() - now)) {
    return Clock::time_point::max();
  }
  return now + timeout;
}

// Sleeps until `wake` or a stop request. Returns false if stopped.
bool sleep_until(Clock::time_point wake, const std::stop_token& stop) {
  std::mutex mutex;
  std::condition_variable_any cv;
  std::unique_lock lock(mutex);
  cv.wait_until(lock, stop, wake, [] { return false; });
  return !stop.stop_requested();
}

// Makes sure attempt `id` holds nothing, now or later: one tombstone update (resolve_for),
// retried on transient failures. Returns std::nullopt once the server acknowledged it (with
// the write concern) and recorded the tombstone; otherwise why not. A stop request ends the
// retries (the outcome then stays unknown). A full tombstone list is not retried: entries
// leave it only when their keep time ends, far beyond this call's retries.
std::optional<std::string> resolve_by_tombstone(Context& context, const HoldSpec& spec,
                                                const std::string& id, const std::stop_token& stop,
                                                int64_t keep_at_least_ms = 0) {
  const auto pause = std::chrono::milliseconds(context.options().busy_wait_min_ms);
  std::string cause = "stopped before the resolution was sent";
  for (int attempt = 0; attempt < kResolveAttemptsMax; ++attempt) {
    if (attempt > 0 && !sleep_until(Clock::now() + pause, stop)) return cause;
    Reply reply = context.write(*resolve_for(spec, id, context.options(), keep_at_least_ms));
    if (reply.outcome == Outcome::kOk) {
      if (find_int64(*reply.doc, "n").value_or(0) == kResolveStatements) return std::nullopt;
      return "the lock document already keeps " + std::to_string(kTombstonesMax) +
             " tombstones (the limit); the attempt may still take effect";
    }
    cause = "resolution failed: " + reply.message;
    if (reply.outcome == Outcome::kRefused && !reply.transient) return cause;
  }
  return cause;
}

// What an acquire reply proves. The acquire is sent once (Context::write_once: no driver
// retry), so every reply is the reply of the one request that can ever execute. Only two
// things prove that nothing was written: a reply that says so (the returned document names
// another holder), and a request that never left the client (server selection failed, or no
// pooled client). Everything else -- a network error, a timeout, a write-concern error, and
// ANY server error, since one can follow an applied write (interrupted while waiting for the
// write concern) -- may hide a grant, now or later.
bool proves_nothing_written(const Reply& reply) {
  return reply.outcome == Outcome::kNotSent;
}

[[noreturn]] void throw_unresolved(const HoldSpec& spec, const Options& options,
                                   Clock::time_point sent_at, const std::string& cause) {
  throw UnknownOutcome("mongolock: acquire of " + describe(spec) +
                           " has an unknown outcome and could not be resolved: " + cause,
                       sent_at + std::chrono::milliseconds(options.expiry_ms));
}

// A granted hold becomes a Handle; if the Provider's scheduler cannot start its threads (the
// first hold, or a pool growing), the hold is given back (tombstone) and the caller gets Error,
// never a hold nobody extends or watches.
// `slot_handed_over` is set once the Lease owns the caller's hold slot.
Handle start_lease(const std::shared_ptr<Context>& context, const HoldSpec& spec,
                   const std::string& id, int64_t token, Clock::time_point sent_at,
                   const std::stop_token& stop, bool& slot_handed_over) {
  auto lease = std::make_shared<Lease>(context, spec, id, token, sent_at);
  slot_handed_over = true;
  try {
    lease->start();
  } catch (const std::system_error& error) {
    lease.reset();  // gives the hold slot back
    if (auto unresolved = resolve_by_tombstone(*context, spec, id, stop)) {
      throw_unresolved(spec, context->options(), sent_at,
                       std::string("the hold scheduler's threads did not start: ") + error.what() +
                           "; " + *unresolved);
    }
    throw Error("mongolock: acquire of " + describe(spec) +
                " was granted but the hold scheduler's threads could not start (" + error.what() +
                "); the hold was given back");
  }
  return make_handle(std::move(lease));
}

// A lock is never acquired in a collection whose TTL indexes would delete its documents (and
// the tombstones and token floor they carry) sooner than reap_after_s after reapAt: the
// expiresAt index of earlier versions, a reapAt index made with a shorter reap_after_s, any
// other TTL index (index_check.h). False: the check could not be made, so nothing was sent this
// attempt (the loop backs off and asks again).
bool collection_usable(Context& context, const HoldSpec& spec, const std::stop_token& stop,
                       std::string& unchecked) {
  std::string detail;
  switch (context.check_indexes(spec.rw, detail, stop)) {
    case Context::IndexCheck::kClean:
      return true;
    case Context::IndexCheck::kUnchecked:
      unchecked = std::move(detail);
      return false;
    case Context::IndexCheck::kRefused:
      break;
  }
  throw Error("mongolock: acquire of " + describe(spec) + " refused: " + detail);
}

// `sent` becomes true just before the attempt is sent (whatever becomes of it).
AttemptResult attempt_once(const std::shared_ptr<Context>& context, const HoldSpec& spec,
                           const QueueTicket* ticket, const std::stop_token& stop,
                           bool& slot_handed_over, bool& sent) {
  AttemptResult unsent;
  if (!collection_usable(*context, spec, stop, unsent.unchecked)) return unsent;
  // The check can take three round trips: a stop asked meanwhile sends nothing.
  if (stop.stop_requested()) return unsent;
  const Options& options = context->options();
  const std::string id = new_acquisition_id();
  const Clock::time_point sent_at = Clock::now();  // the lease clock starts before sending
  // Sent once: a driver retry answered "busy" while this try is still held on its way would
  // read as a definite "not acquired" and leave the held try free to grant later.
  sent = true;
  Reply reply = context->write_once(*acquire_for(spec, id, options, ticket));
  const auto lease_end =
      sent_at + std::chrono::milliseconds(options.expiry_ms - options.lost_safety_margin_ms);
  if (reply.outcome == Outcome::kOk) {
    std::optional<int64_t> token = granted_token(spec, *reply.doc, id);
    if (!token) {
      return {Attempt::kBusy, std::nullopt,        {}, find_document(*reply.doc, "value"),
              sent_at,        reply.operation_time};
    }
    if (Clock::now() < lease_end) {
      return {Attempt::kGranted,
              start_lease(context, spec, id, *token, sent_at, stop, slot_handed_over),
              {},
              std::nullopt,
              sent_at};
    }
    // The reply came back after the client-side lease ended: hand it back rather than return a
    // hold that is already lost.
  } else if (proves_nothing_written(reply)) {
    return {};
  }
  if (auto unresolved = resolve_by_tombstone(*context, spec, id, stop)) {
    throw_unresolved(spec, options, sent_at, reply.message + "; " + *unresolved);
  }
  if (reply.outcome == Outcome::kRefused && !reply.transient) {
    throw ServerError("mongolock: acquire of " + describe(spec) + " refused: " + reply.message,
                      reply.domain, reply.code);
  }
  AttemptResult resolved;
  resolved.sent_at = sent_at;
  return resolved;
}

// attempt_once within one reserved hold slot (the Lease keeps it when granted).
AttemptResult attempt_in_slot(const std::shared_ptr<Context>& context, const HoldSpec& spec,
                              const QueueTicket* ticket, const std::stop_token& stop, bool& sent) {
  reserve_hold_or_throw(*context, spec);
  bool slot_handed_over = false;
  try {
    AttemptResult result = attempt_once(context, spec, ticket, stop, slot_handed_over, sent);
    if (!slot_handed_over) context->release_hold();
    return result;
  } catch (...) {
    if (!slot_handed_over) context->release_hold();
    throw;
  }
}

// attempt_in_slot with the call's ticket: the waiter counts as queued once an attempt was sent,
// whatever became of it (its entry may be there); a call refused before sending (the holds
// limit, the index check) has no entry and sends no leave.
AttemptResult ticketed_attempt(const std::shared_ptr<Context>& context, const HoldSpec& spec,
                               NotifyWaiter& notify, const std::stop_token& stop) {
  bool sent = false;
  try {
    AttemptResult result = attempt_in_slot(context, spec, notify.ticket(), stop, sent);
    if (sent) notify.attempt_sent();
    return result;
  } catch (...) {
    if (sent) notify.attempt_sent();
    throw;
  }
}

// A notify waiter's hand-over (notify_waiter.h) becomes a Handle in a hold slot of its own. With
// less than half the lease (expiry_ms / 2) left on the client's clock (the waiter's last attempt
// was long before), it is extended first (only the hold with the hand-over's token), so the hold is
// not returned on the edge of its loss; an extension that finds it gone (the lease lapsed) leaves
// the call waiting. One with an unknown outcome, or whose reply came back after the lease it
// started had ended on the client's clock (a slow pool or primary), is handed back: a tombstone
// of the waiter id frees the hold, and the call waits on as a new waiter.
// Closes the local line `id` owns (a hand-over that lapsed): its seats attempt. Never throws: an
// allocation failure leaves the line to a seat that finds it stale.
void close_line_of(Context& context, const HoldSpec& spec, const std::string& id) noexcept {
  try {
    context.lines().closed(line_key(spec), id);
  } catch (...) {
  }
}

// `slot_reserved`: the caller already holds a slot for this claim (a seat of the local line).
std::optional<Handle> claim_hand_over(const std::shared_ptr<Context>& context, const HoldSpec& spec,
                                      NotifyWaiter& notify, const NotifyWaiter::HandOver& hand_over,
                                      const std::stop_token& stop, bool slot_reserved = false) {
  if (!slot_reserved) reserve_hold_or_throw(*context, spec);
  bool slot_handed_over = false;
  try {
    const Options& options = context->options();
    Clock::time_point anchor = hand_over.anchor;
    const auto client_lease =
        std::chrono::milliseconds(options.expiry_ms - options.lost_safety_margin_ms);
    if (anchor + client_lease - Clock::now() < std::chrono::milliseconds(options.expiry_ms / 2)) {
      const Clock::time_point sent_at = Clock::now();
      // Token-checked: the waiter id may have been handed the lock again since (its earlier
      // hand-over lapsed, it queued again), and this Handle's token must be the hold's.
      Reply reply = context->write_once(*extend_for(spec, hand_over.id, options, hand_over.token));
      const bool extended =
          reply.outcome == Outcome::kOk && find_int64(*reply.doc, "n").value_or(0) == 1;
      if (reply.outcome == Outcome::kOk && !extended) {
        close_line_of(*context, spec, hand_over.id);  // lapsed: its seats attempt
        context->release_hold();  // the call waits on (its entry is gone: it queues again)
        return std::nullopt;
      }
      if (!extended || Clock::now() >= sent_at + client_lease) {
        const std::string why =
            extended ? "the extension of a hand-over came back after its lease" : reply.message;
        if (auto unresolved =
                resolve_by_tombstone(*context, spec, hand_over.id, stop, queue_keep_ms(options))) {
          throw_unresolved(spec, options, sent_at, why + "; " + *unresolved);
        }
        notify.renew();
        context->release_hold();
        return std::nullopt;
      }
      anchor = sent_at;
    }
    Handle handle =
        start_lease(context, spec, hand_over.id, hand_over.token, anchor, stop, slot_handed_over);
    notify.granted();
    return handle;
  } catch (...) {
    if (!slot_handed_over) context->release_hold();
    throw;
  }
}

// The local line (mongolock.h [notify], "Local line"; local_line.h): while a hold of this
// Provider, or a waiter's first attempt, owns the lock's line, the call waits in it before any
// attempt, sending nothing; with no line open, it leads one until its first attempt's outcome. A
// Handle when the release of the line's owner granted it the lock and the claim went through
// (claim_hand_over: the same rules as a queued waiter's hand-over, anchored at the release's
// send); nullopt to go on attempting: no open line (or a full one), told to attempt (the lock
// left the Provider), the deadline passed or a stop came (the loop then makes its last attempt,
// or throws Cancelled), the grant lapsed, or an unknown outcome of that release was resolved by a
// tombstone of the waiter id (which the call then renews).
std::optional<Handle> wait_in_line(const std::shared_ptr<Context>& context, const HoldSpec& spec,
                                   NotifyWaiter& notify, Clock::time_point deadline,
                                   const std::stop_token& stop) {
  if (notify.ticket() == nullptr || Clock::now() >= deadline) return std::nullopt;
  LocalLines& lines = context->lines();
  const std::string key = line_key(spec);
  // A seat keeps a hold slot while it waits, so a grant from the line never meets the limit
  // (the releasing hold gives its slot back only after its release returns).
  reserve_hold_or_throw(*context, spec);
  bool leads = false;
  std::shared_ptr<LocalLines::Seat> seat;
  try {
    seat = lines.join(key, notify.waiter_id(), &leads);
  } catch (...) {
    context->release_hold();
    throw;
  }
  if (leads) notify.lead();
  if (!seat) {
    context->release_hold();
    return std::nullopt;
  }
  const LocalLines::Outcome outcome = lines.wait(key, *seat, deadline, stop);
  if (outcome.state == LocalLines::SeatState::kGranted) {
    notify.seat_granted();  // from here, a call that ends without it hands the hold on
    if (stop.stop_requested()) {
      context->release_hold();
      throw Cancelled("mongolock: acquire of " + describe(spec) + " cancelled");
    }
    return claim_hand_over(context, spec, notify,
                           NotifyWaiter::HandOver{seat->waiter(), outcome.token, outcome.anchor},
                           stop, /*slot_reserved=*/true);
  }
  context->release_hold();
  if (outcome.state == LocalLines::SeatState::kUnknown) {
    notify.seat_granted();  // the waiter id may hold the lock
    if (auto unresolved = resolve_by_tombstone(*context, spec, seat->waiter(), stop,
                                               queue_keep_ms(context->options()))) {
      throw_unresolved(
          spec, context->options(), outcome.anchor,
          "the release that offered this call its seat has an unknown outcome; " + *unresolved);
    }
    notify.renew();
  }
  return std::nullopt;
}

}  // namespace

std::optional<Handle> acquire_loop(const std::shared_ptr<Context>& context, const HoldSpec& spec,
                                   std::chrono::milliseconds timeout, std::stop_token stop,
                                   std::string* unchecked) {
  check_timeout(timeout);
  if (context->in_forked_child()) {
    throw InvalidArgument("mongolock: acquire of " + describe(spec) +
                          " through a Provider made before fork(); make a new Provider here");
  }
  const Options& options = context->options();
  const Clock::time_point deadline = deadline_after(timeout);
  // kNotify sleeps as kRandom whenever it has no wake-up to wait for.
  const Backoff fallback = options.backoff == Backoff::kNotify ? Backoff::kRandom : options.backoff;
  BackoffPolicy backoff(fallback, options.busy_wait_min_ms, options.busy_wait_max_ms, random_u64());
  NotifyWaiter notify(*context, spec);
  if (auto handle = wait_in_line(context, spec, notify, deadline, stop)) return handle;
  while (true) {
    if (stop.stop_requested())
      throw Cancelled("mongolock: acquire of " + describe(spec) + " cancelled");
    if (auto hand_over = notify.take_hand_over()) {
      if (auto handle = claim_hand_over(context, spec, notify, *hand_over, stop)) return handle;
    }
    const uint64_t seen = notify.before_attempt();
    AttemptResult result = ticketed_attempt(context, spec, notify, stop);
    notify.after_attempt(result.kind == Attempt::kGranted);
    if (result.kind == Attempt::kGranted) {
      notify.granted();
      return std::move(result.handle);
    }
    if (result.sent_at) {
      notify.note_attempt(*result.sent_at, result.document ? result.document->get() : nullptr,
                          result.operation_time);
    }
    // Also after an attempt that was not sent: a hand-over that arrived after the loop's first
    // look, and whose wake-up `seen` already counts, would otherwise wait out the sleep.
    if (auto hand_over = notify.take_hand_over()) {
      if (auto handle = claim_hand_over(context, spec, notify, *hand_over, stop)) return handle;
    }
    if (unchecked != nullptr) *unchecked = std::move(result.unchecked);
    const Clock::time_point now = Clock::now();
    if (now >= deadline) return std::nullopt;
    std::optional<int64_t> sleep_ms =
        notify.planned_sleep_ms(result.document ? result.document->get() : nullptr);
    if (!sleep_ms) sleep_ms = backoff.next_sleep_ms();
    const Clock::time_point wake = std::min(deadline, now + std::chrono::milliseconds(*sleep_ms));
    if (!notify.wait(seen, wake, stop)) {
      throw Cancelled("mongolock: acquire of " + describe(spec) + " cancelled");
    }
  }
}

Handle acquire_or_throw(const std::shared_ptr<Context>& context, const HoldSpec& spec,
                        std::chrono::milliseconds timeout, std::stop_token stop) {
  std::string unchecked;
  std::optional<Handle> handle = acquire_loop(context, spec, timeout, std::move(stop), &unchecked);
  if (!handle) {
    throw Timeout("mongolock: " + describe(spec) + " not acquired within " +
                  std::to_string(timeout.count()) + " ms" +
                  (unchecked.empty() ? std::string()
                                     : " (nothing was sent on the last attempt: the lock "
                                       "collection's indexes could not be checked: " +
                                           unchecked + ")"));
  }
  return std::move(*handle);
}

}  // namespace mongolock::detail

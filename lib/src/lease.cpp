#include "lease.h"

#include <unistd.h>

#include <cassert>

#include "mongolock/errors.h"

namespace mongolock::detail {

Lease::Lease(std::shared_ptr<Context> context, HoldSpec spec, std::string id, int64_t token,
             SteadyTime acquire_sent_at)
    : context_(std::move(context)),
      spec_(std::move(spec)),
      id_(std::move(id)),
      token_(token),
      line_key_(line_key(spec_)),
      creator_pid_(getpid()) {
  deadline_ = acquire_sent_at + lease_span();
  next_extend_at_ =
      acquire_sent_at + std::chrono::milliseconds(context_->options().extension_cadence_ms);
}

Lease::~Lease() {
  // No job runs now (a job holds a reference): only queued timers and jobs are left to cancel.
  if (!in_forked_child() && started_) scheduler().cancel(ticket_);
  context_->release_hold();
}

bool Lease::in_forked_child() const {
  return getpid() != creator_pid_;
}

std::chrono::milliseconds Lease::lease_span() const {
  const Options& options = context_->options();
  return std::chrono::milliseconds(options.expiry_ms - options.lost_safety_margin_ms);
}

void Lease::start() {
  const bool auto_extend = context_->options().auto_extend;
  scheduler().start(auto_extend);  // throws std::system_error before anything is armed
  std::lock_guard guard(mutex_);
  started_ = true;
  scheduler().arm(ticket_, weak_from_this(), HoldScheduler::Timer::kDeadline, deadline_);
  if (auto_extend) {
    scheduler().arm(ticket_, weak_from_this(), HoldScheduler::Timer::kExtend, next_extend_at_);
  }
  if (!lined()) return;
  try {
    context_->lines().opened(line_key_, id_, token_);
  } catch (...) {
    // Allocation failure making the line: the hold has none (its Provider's later waiters
    // attempt), and start() keeps its one failure mode.
  }
}

bool Lease::lined() const {
  return !spec_.rw && context_->options().backoff == Backoff::kNotify;
}

// Cancels what is queued and waits for a job of this hold that is running on another thread
// (an extension in its round trip, a notification in its callbacks). Called with released_ set:
// a job that starts later sees it and does nothing.
void Lease::stop_background() {
  if (started_) scheduler().cancel(ticket_);  // started_ is set once, before any job can run
  const std::thread::id self = std::this_thread::get_id();
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] {
    return (extending_on_ == std::thread::id() || extending_on_ == self) &&
           (notifying_on_ == std::thread::id() || notifying_on_ == self);
  });
}

ReleaseResult Lease::release() noexcept {
  if (in_forked_child()) {
    // The hold, the scheduler and the client pool are the parent's; the mutex may have been held
    // by a parent thread at fork(). Touch none of them. Keeping the Context alive for the rest
    // of the child's life means dropping this Lease never tears the parent's pool down here.
    new std::shared_ptr<Context>(context_);
    return ReleaseResult::kNotHeld;
  }
  {
    std::lock_guard guard(mutex_);
    if (released_) return ReleaseResult::kNotHeld;
    released_ = true;
  }
  changed_.notify_all();  // wait_lost() returns
  stop_background();
  // The front seat of this hold's local line, offered after the server's queue; settled below
  // whatever becomes of the release (an exception settles it as unknown: its id may hold).
  std::shared_ptr<LocalLines::Seat> seat;
  SteadyTime sent_at{};
  try {
    if (lined()) seat = context_->lines().offer(line_key_, id_);
    sent_at = std::chrono::steady_clock::now();  // a seat's lease clock starts before sending
    // Sent once (write_once): a notify release is a findAndModify, which libmongoc's write helper
    // would send again after a network error; every release keeps one round-trip bound.
    Reply reply = seat ? release_offering(*seat)
                       : context_->write_once(*release_for(spec_, id_, context_->options()));
    if (lined()) settle_line(&reply, seat, sent_at);
    // Only an acknowledged reply tells whether the hold was there: n = 1 (or a document
    // returned) removed it, n = 0 found no hold with this id. Anything else leaves the hold as
    // it was or may have removed it: a refusal can come before the update ran (not primary) or
    // after it (interrupted while waiting for the write concern), a request never sent changed
    // nothing, and a timeout may hide either. None of them proves "not held": the hold, if it
    // stays, lapses at its lease end, extended by nobody.
    if (reply.outcome != Outcome::kOk) return ReleaseResult::kUnknown;
    const bool removed = release_removed_hold(*reply.doc);
    wake_local_grantee(*reply.doc);
    return removed ? ReleaseResult::kReleased : ReleaseResult::kNotHeld;
  } catch (...) {
    if (lined()) settle_line(nullptr, seat, sent_at);
    return ReleaseResult::kUnknown;  // allocation failure: the hold lapses at its deadline
  }
}

// A release that offers `seat`: the short form while the queue is empty, the full hand-over
// release when the short one matched nothing (a queue, or no hold of this id). Two round trips at
// most; an unacknowledged short form is the release's reply (its outcome is unknown: the full
// one is not sent after it).
Reply Lease::release_offering(const LocalLines::Seat& seat) {
  const Options& options = context_->options();
  Reply reply = context_->write_once(*seat_release_for(spec_, id_, options, seat.waiter()));
  if (reply.outcome != Outcome::kOk || !find_is_null_or_missing(*reply.doc, "value")) return reply;
  return context_->write_once(*release_for(spec_, id_, options, seat.waiter()));
}

// What this release did to the local line (local_line.h settle): the seat was granted (the reply
// names it holder), a queued waiter of this Provider was (grantW / grantP name it), or the lock
// left the Provider; an unacknowledged reply, or none (nullptr: the release threw), leaves the
// seat's outcome unknown. Never leaves an offered seat unsettled (its waiter waits for it).
void Lease::settle_line(const Reply* reply, const std::shared_ptr<LocalLines::Seat>& seat,
                        SteadyTime sent_at) noexcept {
  using Settled = LocalLines::Settled;
  Settled how = Settled::kUnknown;
  std::string holder;
  int64_t token = 0;
  try {
    if (reply != nullptr && reply->outcome == Outcome::kNotSent) {
      how = Settled::kGone;  // nothing left the client: the seat holds nothing; its hold lapses
    } else if (reply != nullptr && reply->outcome == Outcome::kOk) {
      how = Settled::kGone;
      if (std::optional<Bson> value = find_document(*reply->doc, "value")) {
        holder = find_utf8(**value, "holder").value_or("");
        token = find_int64(**value, "token").value_or(0);
        if (seat && !holder.empty() && holder == seat->waiter() && token > 0) {
          how = Settled::kSeatGranted;
        } else if (!holder.empty() && find_utf8(**value, "grantW") == holder &&
                   find_utf8(**value, "grantP") == context_->provider_id()) {
          how = Settled::kOwnWaiter;
        }
      }
    }
  } catch (...) {
    how = Settled::kUnknown;  // allocation failure reading the reply
  }
  if (how == Settled::kGone || how == Settled::kUnknown) holder.clear();
  if (how == Settled::kUnknown) token = 0;
  try {
    context_->lines().settle(line_key_, id_, seat, how, holder, token, sent_at);
  } catch (...) {
    // Not reached: settle allocates only the new owner's copy, and closes the line if that
    // fails.
  }
}

// A notify release that handed the lock to a waiter of this Provider wakes it from the reply
// (release_watcher.h handed_over_by_release): the waiter need not wait for the stream's event.
// The reply is acknowledged with the write concern, as the stream's events are majority
// committed.
// Never throws: a wake-up that fails (allocation) leaves the waiter to its stream.
void Lease::wake_local_grantee(const bson_t& reply) noexcept {
  if (spec_.rw || context_->options().backoff != Backoff::kNotify) return;
  try {
    std::optional<HandOverSeen> seen = hand_over_in_release(reply, context_->provider_id());
    if (!seen) return;
    if (ReleaseWatcher* watcher = context_->release_watcher_if_made()) {
      watcher->handed_over_by_release(spec_.name, seen->waiter, seen->token);
    }
  } catch (...) {
  }
}

bool Lease::extend() {
  const std::shared_ptr<Lease> keep_alive = shared_from_this();  // a callback may drop the Handle
  {
    std::lock_guard guard(mutex_);
    if (released_)
      throw InvalidArgument("mongolock: extend() on a released hold of '" + spec_.name + "'");
  }
  return extend_once(Notify::kHere) == ExtendResult::kExtended;
}

Lease::ExtendResult Lease::extend_once(Notify notify) {
  const SteadyTime sent_at = std::chrono::steady_clock::now();  // before the request: see header
  emit(EventKind::kExtendSent, "");
  Reply reply = context_->write(*extend_for(spec_, id_, context_->options()));
  if (reply.outcome != Outcome::kOk) {
    emit(EventKind::kExtendUnknown, reply.message);
    return ExtendResult::kUnknown;
  }
  if (find_int64(*reply.doc, "n").value_or(0) != 1) {
    emit(EventKind::kExtendRefused, "no unexpired hold with this acquisition id");
    mark_lost("the server refused the extension: the hold expired, was taken or force-released",
              notify);
    return ExtendResult::kRefused;
  }
  bool too_late = false;
  {
    std::lock_guard guard(mutex_);
    // lost() already reads true once the deadline passed; it must stay true.
    too_late = lost_ || std::chrono::steady_clock::now() >= deadline_;
    if (!too_late) {
      deadline_ = std::max(deadline_, sent_at + lease_span());
      if (started_ && !released_) {
        scheduler().arm(ticket_, weak_from_this(), HoldScheduler::Timer::kDeadline, deadline_);
      }
    }
  }
  if (too_late) {
    mark_lost("the lease deadline passed before the extension's reply arrived", notify);
    return ExtendResult::kRefused;
  }
  changed_.notify_all();
  emit(EventKind::kExtended, "");
  return ExtendResult::kExtended;
}

// On the timer thread: never blocks (a mutex held only for short bookkeeping, no round trip, no
// user code). A timer that finds its time moved (an extension moved the deadline) is armed again.
void Lease::on_timer(HoldScheduler::Timer timer) {
  std::unique_lock lock(mutex_);
  if (released_ || lost_) return;
  const SteadyTime now = std::chrono::steady_clock::now();
  if (timer == HoldScheduler::Timer::kExtend) {
    if (now < next_extend_at_) {
      scheduler().arm(ticket_, weak_from_this(), timer, next_extend_at_);
    } else {
      scheduler().post(ticket_, weak_from_this(), HoldScheduler::Job::kExtend);
    }
    return;
  }
  if (now < deadline_) {
    scheduler().arm(ticket_, weak_from_this(), timer, deadline_);
    return;
  }
  lost_ = true;  // lost() reads true from here on; the notification follows on a notifier
  lost_cause_ = "the lease deadline passed without a successful extension";
  scheduler().post(ticket_, weak_from_this(), HoldScheduler::Job::kNotify);
  lock.unlock();
  changed_.notify_all();
  close_line();
}

// A lost hold no longer owns its local line: its seats attempt (never blocks: the lines' mutex is
// held only for bookkeeping, so the timer thread may call it).
void Lease::close_line() noexcept {
  if (!lined()) return;
  try {
    context_->lines().closed(line_key_, id_);
  } catch (...) {
  }
}

void Lease::run(HoldScheduler::Job job) {
  if (job == HoldScheduler::Job::kExtend) {
    run_extension();
  } else {
    run_notification();
  }
}

void Lease::run_extension() {
  const auto cadence = std::chrono::milliseconds(context_->options().extension_cadence_ms);
  // After a failed attempt retry sooner, but never spin.
  const auto retry = std::max(std::chrono::milliseconds(1), cadence / 4);
  {
    std::lock_guard guard(mutex_);
    if (released_ || lost_) return;
    extending_on_ = std::this_thread::get_id();
  }
  const SteadyTime started = std::chrono::steady_clock::now();
  const ExtendResult result = extend_once(Notify::kOnNotifier);
  {
    std::lock_guard guard(mutex_);
    extending_on_ = std::thread::id();
    if (!released_ && !lost_) {
      next_extend_at_ = started + (result == ExtendResult::kExtended ? cadence : retry);
      scheduler().arm(ticket_, weak_from_this(), HoldScheduler::Timer::kExtend, next_extend_at_);
    }
  }
  changed_.notify_all();  // a release() waiting for this extension
}

void Lease::run_notification() {
  std::string cause;
  {
    std::lock_guard guard(mutex_);
    if (released_) return;  // released after the loss was marked: a release wins
    notifying_on_ = std::this_thread::get_id();
    cause = lost_cause_;
  }
  deliver_lost(cause);
}

void Lease::mark_lost(const std::string& cause, Notify notify) {
  {
    std::lock_guard guard(mutex_);
    if (lost_ || released_) return;
    lost_ = true;
    lost_cause_ = cause;
    if (notify == Notify::kOnNotifier) {
      scheduler().post(ticket_, weak_from_this(), HoldScheduler::Job::kNotify);
    } else {
      notifying_on_ = std::this_thread::get_id();
    }
  }
  changed_.notify_all();
  close_line();
  if (notify == Notify::kHere) deliver_lost(cause);
}

// The notification of a loss marked by mark_lost() or on_timer(), on the thread that set
// notifying_on_: the token's stop callbacks and on_lost callbacks (they may release or drop the
// Handle), then the kLost event.
void Lease::deliver_lost(const std::string& cause) {
  if (lost_source_.request_stop()) emit(EventKind::kLost, cause);
  {
    std::lock_guard guard(mutex_);
    lost_signalled_ = true;  // waiters return only after the token and callbacks have run
    notifying_on_ = std::thread::id();
  }
  changed_.notify_all();
}

bool Lease::lost() const {
  std::lock_guard guard(mutex_);
  // The deadline timer may be late (scheduling, a stopped process): the deadline decides too.
  return lost_ || std::chrono::steady_clock::now() >= deadline_;
}

void Lease::on_lost(std::function<void()> callback) {
  {
    std::lock_guard guard(mutex_);
    if (callbacks_.size() >= kLostCallbacksMax) {
      throw InvalidArgument("mongolock: more than 64 on_lost callbacks on one hold of '" +
                            spec_.name + "'");
    }
  }
  // Constructed outside the mutex: it runs the callback at once if the hold is already lost.
  auto registered = std::make_unique<std::stop_callback<std::function<void()>>>(
      lost_source_.get_token(), std::move(callback));
  std::lock_guard guard(mutex_);
  callbacks_.push_back(std::move(registered));
}

bool Lease::wait_lost(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [this] { return lost_signalled_ || released_; });
  return lost_ || std::chrono::steady_clock::now() >= deadline_;
}

SteadyTime Lease::deadline() const {
  std::lock_guard guard(mutex_);
  return deadline_;
}

void Lease::emit(EventKind kind, std::string_view detail) const {
  const auto& observer = context_->options().on_event;
  if (!observer) return;
  {
    std::lock_guard guard(mutex_);
    if (released_ && kind != EventKind::kLost) return;
  }
  observer(Event{kind, spec_.name, token_, detail});
}

}  // namespace mongolock::detail

#include "lease.h"

#include <unistd.h>

#include <atomic>
#include <cassert>
#include <system_error>

#include "mongolock/errors.h"

namespace mongolock::detail {

namespace {

std::atomic<int> g_failing_thread_starts{0};

// std::thread, unless the test hook says this creation fails.
template <typename Function>
std::thread start_thread(Function&& function) {
  int left = g_failing_thread_starts.load();
  while (left > 0 && !g_failing_thread_starts.compare_exchange_weak(left, left - 1)) {
  }
  if (left > 0) {
    throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                            "thread creation failed (test hook)");
  }
  return std::thread(std::forward<Function>(function));
}

}  // namespace

void fail_next_thread_starts_for_testing(int count) {
  g_failing_thread_starts = count;
}

Lease::Lease(std::shared_ptr<Context> context, HoldSpec spec, std::string id, int64_t token,
             SteadyTime acquire_sent_at)
    : context_(std::move(context)),
      spec_(std::move(spec)),
      id_(std::move(id)),
      token_(token),
      creator_pid_(getpid()) {
  deadline_ = acquire_sent_at + lease_span();
  next_extend_at_ =
      acquire_sent_at + std::chrono::milliseconds(context_->options().extension_cadence_ms);
}

Lease::~Lease() {
  stop_threads();
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
  try {
    watchdog_ = start_thread([self = shared_from_this()] { self->watchdog_loop(); });
    if (context_->options().auto_extend) {
      extender_ = start_thread([self = shared_from_this()] { self->extender_loop(); });
    }
  } catch (...) {
    stop_threads();
    throw;
  }
}

void Lease::stop_threads() {
  {
    std::lock_guard guard(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread* thread : {&extender_, &watchdog_}) {
    if (!thread->joinable()) continue;
    if (in_forked_child()) {
      // The parent's threads do not exist here; joining or detaching them would act on the
      // parent's thread descriptors. Leak the handle (a few bytes) instead.
      new std::thread(std::move(*thread));
    } else if (thread->get_id() == std::this_thread::get_id()) {
      thread->detach();  // release() from a lost callback, or the last reference dropped here
    } else {
      thread->join();
    }
  }
}

ReleaseResult Lease::release() noexcept {
  if (in_forked_child()) {
    // The hold, the threads and the client pool are the parent's; the mutex may have been held
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
  stop_threads();
  try {
    Reply reply = context_->write(*release_for(spec_, id_, context_->options()));
    // Only an acknowledged reply tells whether the hold was there: n = 1 removed it, n = 0
    // found no hold with this id. Anything else leaves the hold as it was or may have removed
    // it: a refusal can come before the update ran (not primary) or after it (interrupted
    // while waiting for the write concern), a request never sent changed nothing, and a
    // timeout may hide either. None of them proves "not held": the hold, if it stays, lapses
    // at its lease end, extended by nobody.
    if (reply.outcome == Outcome::kOk) {
      return find_int64(*reply.doc, "n").value_or(0) == 1 ? ReleaseResult::kReleased
                                                          : ReleaseResult::kNotHeld;
    }
    return ReleaseResult::kUnknown;
  } catch (...) {
    return ReleaseResult::kUnknown;  // allocation failure: the hold lapses at its deadline
  }
}

bool Lease::extend() {
  const std::shared_ptr<Lease> keep_alive = shared_from_this();  // a callback may drop the Handle
  {
    std::lock_guard guard(mutex_);
    if (released_)
      throw InvalidArgument("mongolock: extend() on a released hold of '" + spec_.name + "'");
  }
  return extend_once() == ExtendResult::kExtended;
}

Lease::ExtendResult Lease::extend_once() {
  const SteadyTime sent_at = std::chrono::steady_clock::now();  // before the request: see header
  emit(EventKind::kExtendSent, "");
  Reply reply = context_->write(*extend_for(spec_, id_, context_->options()));
  if (reply.outcome != Outcome::kOk) {
    emit(EventKind::kExtendUnknown, reply.message);
    return ExtendResult::kUnknown;
  }
  if (find_int64(*reply.doc, "n").value_or(0) != 1) {
    emit(EventKind::kExtendRefused, "no unexpired hold with this acquisition id");
    mark_lost("the server refused the extension: the hold expired, was taken or force-released");
    return ExtendResult::kRefused;
  }
  bool too_late = false;
  {
    std::lock_guard guard(mutex_);
    // lost() already reads true once the deadline passed; it must stay true.
    too_late = lost_ || std::chrono::steady_clock::now() >= deadline_;
    if (!too_late) deadline_ = std::max(deadline_, sent_at + lease_span());
  }
  if (too_late) {
    mark_lost("the lease deadline passed before the extension's reply arrived");
    return ExtendResult::kRefused;
  }
  changed_.notify_all();
  emit(EventKind::kExtended, "");
  return ExtendResult::kExtended;
}

void Lease::extender_loop() {
  const auto cadence = std::chrono::milliseconds(context_->options().extension_cadence_ms);
  // After a failed attempt retry sooner, but never spin.
  const auto retry = std::max(std::chrono::milliseconds(1), cadence / 4);
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait_until(lock, next_extend_at_, [this] { return stopping_ || lost_; });
    if (stopping_ || lost_) return;
    if (std::chrono::steady_clock::now() < next_extend_at_) continue;
    lock.unlock();
    const SteadyTime started = std::chrono::steady_clock::now();
    const ExtendResult result = extend_once();
    lock.lock();
    next_extend_at_ = started + (result == ExtendResult::kExtended ? cadence : retry);
  }
}

void Lease::watchdog_loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_ && !lost_) {
    if (std::chrono::steady_clock::now() >= deadline_) {
      lock.unlock();
      mark_lost("the lease deadline passed without a successful extension");
      return;
    }
    changed_.wait_until(lock, deadline_);
  }
}

void Lease::mark_lost(const std::string& cause) {
  {
    std::lock_guard guard(mutex_);
    if (lost_ || released_) return;
    lost_ = true;
  }
  changed_.notify_all();  // the extender stops at once
  if (lost_source_.request_stop()) emit(EventKind::kLost, cause);
  {
    std::lock_guard guard(mutex_);
    lost_signalled_ = true;  // waiters return only after the token and callbacks have run
  }
  changed_.notify_all();
}

bool Lease::lost() const {
  std::lock_guard guard(mutex_);
  // The watchdog may be late (scheduling, a stopped process): the deadline decides as well.
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

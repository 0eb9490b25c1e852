// Lease: the client side of one granted hold: its deadline, its extension and its lost
// notification, driven by the Provider's HoldScheduler (hold_scheduler.h): the hold has no thread
// of its own.
//
// Invariants:
//   * deadline_ only moves forward, and only after a successful extension, to
//     (send time of that extension + expiry_ms - lost_safety_margin_ms).
//   * lost_ is sticky; lost_source_ is requested at most once, never on a normal release.
//   * the deadline timer marks the loss at deadline_ on the scheduler's timer thread, whatever
//     the extensions are blocked on; the notification (token, callbacks, kLost) then runs on a
//     notifier thread, so a slow callback of one hold delays no other hold's loss.
//   * after release() returns, no job of this hold runs and no event is emitted: release()
//     cancels its queued timers and jobs and waits for a running one (unless it runs inside it).
//   * a running job and extend() keep the Lease alive (the scheduler locks its weak_ptr;
//     extend() takes shared_from_this), so a callback that releases or drops the Handle never
//     destroys a Lease in use; the last reference may then drop on a scheduler thread (the
//     scheduler allows for that).
//   * in a forked child (getpid() differs from the creator's) release() and the destructor
//     touch neither the server nor the scheduler: the hold stays the parent's.
// Thread rules: release()/extend() from the owning Handle's thread; the accessors from any
// thread. Callbacks registered with on_lost run on a notifier thread of the scheduler (the
// deadline passed, or an extension was refused), on the caller of extend() (refused there), or
// on the caller of on_lost() if already lost; they may call release() on the same hold. The
// on_event observer runs on the worker of an extension (kExtend*) and where the callbacks run
// (kLost). Lock order: mutex_ before the scheduler's mutex.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "context.h"
#include "hold_scheduler.h"
#include "hold_spec.h"
#include "mongolock/handle.h"

namespace mongolock::detail {

inline constexpr size_t kLostCallbacksMax = 64;

class Lease : public std::enable_shared_from_this<Lease>, public HoldScheduler::Client {
 public:
  // Takes over one hold slot the caller reserved with Context::try_reserve_hold().
  Lease(std::shared_ptr<Context> context, HoldSpec spec, std::string id, int64_t token,
        SteadyTime acquire_sent_at);
  ~Lease();
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  // Arms the deadline timer and (if auto_extend) the extension timer on the Provider's
  // scheduler, starting its threads if they do not run yet. Call once, right after construction
  // into a shared_ptr. Throws std::system_error if a scheduler thread cannot be created; then
  // nothing of this Lease is armed.
  void start();
  ReleaseResult release() noexcept;
  bool extend();

  int64_t token() const { return token_; }
  const std::string& name() const { return spec_.name; }
  const std::string& id() const { return id_; }
  bool lost() const;
  std::stop_token lost_token() const { return lost_source_.get_token(); }
  void on_lost(std::function<void()> callback);
  bool wait_lost(std::chrono::milliseconds timeout) const;
  SteadyTime deadline() const;

 private:
  enum class ExtendResult { kExtended, kRefused, kUnknown };
  void wake_local_grantee(const bson_t& release_reply) noexcept;
  // The local line (local_line.h): whether this hold has one (a notify plain lock), what its
  // release did to it, and its closing when the hold is lost.
  bool lined() const;
  void settle_line(const Reply* reply, const std::shared_ptr<LocalLines::Seat>& seat,
                   SteadyTime sent_at) noexcept;
  void close_line() noexcept;
  Reply release_offering(const LocalLines::Seat& seat);
  // Where a loss found by this thread is notified: here (extend()) or on a notifier.
  enum class Notify { kHere, kOnNotifier };

  void on_timer(HoldScheduler::Timer timer) override;
  void run(HoldScheduler::Job job) override;
  ExtendResult extend_once(Notify notify);
  void run_extension();
  void run_notification();
  void mark_lost(const std::string& cause, Notify notify);
  void deliver_lost(const std::string& cause);
  void stop_background();
  bool in_forked_child() const;
  void emit(EventKind kind, std::string_view detail) const;
  std::chrono::milliseconds lease_span() const;
  HoldScheduler& scheduler() const { return context_->scheduler(); }

  const std::shared_ptr<Context> context_;
  const HoldSpec spec_;
  const std::string id_;
  const int64_t token_;
  const std::string line_key_;  // of the lock's local line (hold_spec.h line_key)

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  SteadyTime deadline_;
  SteadyTime next_extend_at_;
  bool started_ = false;  // armed on the scheduler (set once, before any job can run)
  bool lost_ = false;
  bool lost_signalled_ = false;  // lost_source_ requested and its callbacks run
  bool released_ = false;
  std::string lost_cause_;
  std::thread::id extending_on_;  // the thread running this hold's extension job, if any
  std::thread::id notifying_on_;  // the thread running this hold's lost notification, if any
  std::stop_source lost_source_;
  std::vector<std::unique_ptr<std::stop_callback<std::function<void()>>>> callbacks_;
  HoldScheduler::Ticket ticket_;  // the scheduler's, under its mutex
  const pid_t creator_pid_;
};

}  // namespace mongolock::detail

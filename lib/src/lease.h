// Lease: the client side of one granted hold: its deadline, its background extender and its
// lost-notification watchdog.
//
// Invariants:
//   * deadline_ only moves forward, and only after a successful extension, to
//     (send time of that extension + expiry_ms - lost_safety_margin_ms).
//   * lost_ is sticky; lost_source_ is requested at most once, never on a normal release.
//   * the watchdog fires the lost notification at deadline_ on its own thread, whatever the
//     extender is blocked on.
//   * after release() returns, no background thread runs and no event is emitted.
//   * the background threads and extend() keep the Lease alive (shared_from_this) while they
//     run, so a callback that releases or drops the Handle never destroys a Lease in use; a
//     thread that ends up running the destructor or release() itself is detached, not joined.
//   * in a forked child (getpid() differs from the creator's) release() and the destructor
//     touch neither the server nor the parent's threads: the hold stays the parent's.
// Thread rules: release()/extend() from the owning Handle's thread; the accessors from any
// thread. Callbacks registered with on_lost run on whichever thread noticed the loss (the
// watchdog, the extender, a caller of extend(), or the caller of on_lost() if already lost) and
// may call release() on the same hold.
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
#include "hold_spec.h"
#include "mongolock/handle.h"

namespace mongolock::detail {

using SteadyTime = std::chrono::steady_clock::time_point;

inline constexpr size_t kLostCallbacksMax = 64;

// Test hook: the next `count` thread creations of Lease::start() fail as if the system had no
// threads left (std::system_error). 0 in production.
void fail_next_thread_starts_for_testing(int count);

class Lease : public std::enable_shared_from_this<Lease> {
 public:
  // Takes over one hold slot the caller reserved with Context::try_reserve_hold().
  Lease(std::shared_ptr<Context> context, HoldSpec spec, std::string id, int64_t token,
        SteadyTime acquire_sent_at);
  ~Lease();
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  // Starts the watchdog and (if auto_extend) the extender. Call once, right after construction
  // into a shared_ptr. Throws std::system_error if a thread cannot be created; then no thread
  // of this Lease runs.
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

  ExtendResult extend_once();
  void extender_loop();
  void watchdog_loop();
  void mark_lost(const std::string& cause);
  void stop_threads();
  bool in_forked_child() const;
  void emit(EventKind kind, std::string_view detail) const;
  std::chrono::milliseconds lease_span() const;

  const std::shared_ptr<Context> context_;
  const HoldSpec spec_;
  const std::string id_;
  const int64_t token_;

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  SteadyTime deadline_;
  SteadyTime next_extend_at_;
  bool lost_ = false;
  bool lost_signalled_ = false;  // lost_source_ requested and its callbacks run
  bool stopping_ = false;
  bool released_ = false;
  std::stop_source lost_source_;
  std::vector<std::unique_ptr<std::stop_callback<std::function<void()>>>> callbacks_;
  std::thread extender_;
  std::thread watchdog_;
  const pid_t creator_pid_;
};

}  // namespace mongolock::detail

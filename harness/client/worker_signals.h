// What every worker process (locklab-worker and the clients/ programs) needs around its
// workload: stop signals turned into a stop request, and the lost notification a critical
// section waits on.
//
// Thread rules: stop_on_signals must be called before any other thread starts (the blocked mask
// is inherited); LostSignal::fire may be called from any thread (the lock's watchdog), hold_for
// from the workload thread.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <stop_token>
#include <thread>

namespace locklab {

// Blocks SIGTERM and SIGINT and starts the detached thread that turns them into a stop request,
// so no work happens in a signal handler.
inline void stop_on_signals(std::stop_source& source) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set, source]() mutable {
    int sig = 0;
    sigwait(&set, &sig);
    source.request_stop();
  }).detach();
}

class LostSignal {
 public:
  void fire() {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      lost_ = true;
    }
    cv_.notify_all();
  }
  bool lost() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return lost_;
  }
  // Waits up to duration_ms; false when cut short by the notification (if heeded: a worker told
  // to ignore it holds for the full time, the unsafe pattern on purpose) or by `stop`.
  bool hold_for(int64_t duration_ms, bool heed, std::stop_token stop) {
    std::unique_lock<std::mutex> guard(mutex_);
    cv_.wait_for(guard, stop, std::chrono::milliseconds(duration_ms),
                 [&] { return heed && lost_; });
    return !(heed && lost_) && !stop.stop_requested();
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable_any cv_;
  bool lost_ = false;
};

}  // namespace locklab

// HoldScheduler: the background threads of one Provider (one per Context). They run the
// extension and the lost watchdog of every hold (Lease) of that Provider, so a hold costs no
// thread of its own.
//
// Threads (at most kSchedulerThreadsMax, none before the first start()):
//   * one timer thread: a deadline-ordered queue of timers (a hold's next extension, its lease
//     deadline). It only calls Client::on_timer, which must never block (no round trip, no user
//     code): a lease deadline is acted on at its time whatever the other threads are blocked on.
//   * extension workers, at most kExtensionWorkersMax: run Job::kExtend, one blocking round trip
//     (bounded by the pool wait and the socket and write timeouts, mongolock.h "Bounds").
//   * notifiers, at most kNotifiersMax: run Job::kNotify, a hold's lost notification (its token's
//     stop callbacks, its on_lost callbacks, the kLost event): user code of any duration.
// A pool (workers or notifiers) grows by one thread when a job is queued while fewer of its
// threads are idle than jobs are queued, up to its cap; a thread beyond the first of its pool
// exits after kIdleExitMs without a job. The timer thread and the first thread of each pool stay
// until the scheduler is destroyed, so an acquire in steady state starts no thread.
// When every thread of a pool is busy, its jobs wait in FIFO order. For the workers that is a
// partition (every extension blocked in a round trip to the same cluster): more threads would
// block on the same cluster, the waiting extensions are due again when a worker frees, and the
// holds they would have extended are declared lost by the timer thread at their deadlines, on
// time. For the notifiers it is kNotifiersMax user callbacks blocked at once: a later loss is
// still marked (Lease::lost(), at its deadline, by the timer thread) but its notification waits.
//
// Invariants: a timer or job is queued at most once per (client, kind); a client's entries are
// removed by cancel(), which every client calls before it is destroyed; the threads hold the
// shared State, never the HoldScheduler, so a thread that ends up destroying the scheduler
// (the last reference to the Context dropped inside a job) is detached and exits by itself.
// Lock order: a client's own mutex before the scheduler's; the scheduler calls into clients
// (on_timer, run) without its mutex and never destroys a client reference under it.
// fork(): in a child (getpid() differs from the creator's) the parent's threads do not exist and
// the mutex may have been held at fork(); cancel() and the destructor touch nothing there.
// Thread rules: every method from any thread.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <chrono>
#include <list>
#include <map>
#include <memory>
#include <optional>

namespace mongolock::detail {

using SteadyTime = std::chrono::steady_clock::time_point;

inline constexpr int kExtensionWorkersMax = 16;
inline constexpr int kNotifiersMax = 16;
inline constexpr int kSchedulerThreadsMax = 1 + kExtensionWorkersMax + kNotifiersMax;
inline constexpr int64_t kIdleExitMs = 2000;

// Test hook, a weak reference: defined only by lib/test/thread_start_hook.cpp, so in the library
// and every program that does not link that file it is null and no thread start fails on
// purpose. While it is above 0, each HoldScheduler thread creation takes one off and fails as if
// the system had no threads left (std::system_error).
extern std::atomic<int> failing_thread_starts_for_testing __attribute__((weak));

class HoldScheduler {
 public:
  enum class Timer { kExtend, kDeadline };
  enum class Job { kExtend, kNotify };

  // What the scheduler drives: a Lease.
  class Client {
   public:
    virtual ~Client() = default;
    // On the timer thread, when a timer armed with arm() is due. Must not block.
    virtual void on_timer(Timer timer) = 0;
    // On an extension worker (kExtend) or a notifier (kNotify).
    virtual void run(Job job) = 0;
  };

  struct State;
  class Ticket;
  struct TimerEntry {
    std::weak_ptr<Client> client;
    Ticket* ticket;
    Timer timer;
  };
  struct JobEntry {
    std::weak_ptr<Client> client;
    Ticket* ticket;
    Job job;
  };
  using TimerQueue = std::multimap<SteadyTime, TimerEntry>;
  using JobQueue = std::list<JobEntry>;

  // A client's queued timers and jobs (indexed by Timer and Job); kept inside the client, read
  // and written only by the scheduler, under its mutex.
  class Ticket {
   public:
    std::array<std::optional<TimerQueue::iterator>, 2> timers;
    std::array<std::optional<JobQueue::iterator>, 2> jobs;
  };

  HoldScheduler();
  ~HoldScheduler();
  HoldScheduler(const HoldScheduler&) = delete;
  HoldScheduler& operator=(const HoldScheduler&) = delete;

  // Makes sure the timer thread, a notifier and (if `extension_worker`) a worker run. Throws
  // std::system_error when one cannot be created; the ones that were created stay.
  void start(bool extension_worker);
  // Queues `timer` of `client` at `at`, replacing the one queued before, if any.
  void arm(Ticket& ticket, const std::weak_ptr<Client>& client, Timer timer, SteadyTime at);
  // Queues `job` of `client` unless it is queued already. A growth of the pool that fails leaves
  // the job queued for the pool's running threads.
  void post(Ticket& ticket, const std::weak_ptr<Client>& client, Job job);
  // Removes every timer and job of `ticket` still queued. A job already taken off the queue may
  // still call run(): the client tells itself whether to do anything.
  void cancel(Ticket& ticket);

  // Threads running now (for tests).
  int threads() const;

 private:
  std::shared_ptr<State> state_;
  const pid_t creator_pid_;
};

}  // namespace mongolock::detail

#include "hold_scheduler.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cassert>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

namespace mongolock::detail {

namespace {

// std::thread, unless the test hook (hold_scheduler.h) says this creation fails.
template <typename Function>
std::thread start_thread(Function&& function) {
  std::atomic<int>* const failing = &failing_thread_starts_for_testing;
  int left = failing != nullptr ? failing->load() : 0;
  while (left > 0 && !failing->compare_exchange_weak(left, left - 1)) {
  }
  if (left > 0) {
    throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                            "thread creation failed (test hook)");
  }
  return std::thread(std::forward<Function>(function));
}

enum class Role { kTimer, kWorker, kNotifier };

const char* thread_name(Role role) {  // at most 15 characters (pthread_setname_np)
  switch (role) {
    case Role::kTimer:
      return "mongolock-timer";
    case Role::kWorker:
      return "mongolock-ext";
    case Role::kNotifier:
      break;
  }
  return "mongolock-lost";
}

size_t slot_of(HoldScheduler::Timer timer) {
  return static_cast<size_t>(timer);
}
size_t slot_of(HoldScheduler::Job job) {
  return static_cast<size_t>(job);
}

struct ThreadRecord {
  std::thread thread;
  bool done = false;  // set by the thread as it leaves after idling; joined by the next reap
};

// Extension workers or notifiers.
struct Pool {
  Pool(int cap_threads, Role pool_role) : cap(cap_threads), role(pool_role) {}
  const int cap;
  const Role role;
  std::condition_variable wake;
  HoldScheduler::JobQueue queue;
  int threads = 0;  // running, idle or not
  int idle = 0;     // waiting for a job
};

// Threads that left after idling, joined (outside the mutex) when this goes out of scope.
struct Finished {
  std::list<ThreadRecord> records;
  Finished() = default;
  Finished(const Finished&) = delete;
  Finished& operator=(const Finished&) = delete;
  ~Finished() {
    for (ThreadRecord& record : records) record.thread.join();
  }
};

}  // namespace

struct HoldScheduler::State {
  std::mutex mutex;
  std::condition_variable timer_wake;
  TimerQueue timers;
  // The time the timer thread sleeps until; min() while it is awake (it reads the queue again
  // before it sleeps). arm() wakes it only for a timer earlier than this.
  SteadyTime timer_sleeps_until = SteadyTime::min();
  bool timer_running = false;
  Pool workers{kExtensionWorkersMax, Role::kWorker};
  Pool notifiers{kNotifiersMax, Role::kNotifier};
  bool stopping = false;
  std::list<ThreadRecord> records;  // every thread started and not yet joined

  Pool& pool(Job job) { return job == Job::kExtend ? workers : notifiers; }

  // Takes the records of threads that left (mutex held).
  void take_finished(Finished& finished) {
    for (auto it = records.begin(); it != records.end();) {
      auto next = std::next(it);
      if (it->done) finished.records.splice(finished.records.end(), records, it);
      it = next;
    }
  }
};

namespace {

using State = HoldScheduler::State;

void timer_loop(State& state, std::unique_lock<std::mutex>& lock) {
  while (!state.stopping) {
    if (state.timers.empty()) {
      state.timer_sleeps_until = SteadyTime::max();
      state.timer_wake.wait(lock);
      state.timer_sleeps_until = SteadyTime::min();
      continue;
    }
    const auto first = state.timers.begin();
    if (first->first > std::chrono::steady_clock::now()) {
      // A copy: wait_until reads its time again after waking, when a cancel() may have freed
      // the queue's node.
      const SteadyTime wake_at = first->first;
      state.timer_sleeps_until = wake_at;
      state.timer_wake.wait_until(lock, wake_at);
      state.timer_sleeps_until = SteadyTime::min();
      continue;
    }
    HoldScheduler::TimerEntry entry = std::move(first->second);
    entry.ticket->timers[slot_of(entry.timer)].reset();
    state.timers.erase(first);
    lock.unlock();
    // The client reference may be the last one (its Handle dropped meanwhile): it is dropped
    // here, outside the mutex, and may destroy the Context and this scheduler (see the header).
    if (std::shared_ptr<HoldScheduler::Client> client = entry.client.lock()) {
      client->on_timer(entry.timer);
    }
    lock.lock();
  }
}

void pool_loop(State& state, Pool& pool, std::unique_lock<std::mutex>& lock) {
  while (!state.stopping) {
    if (pool.queue.empty()) {
      ++pool.idle;
      const bool woken = pool.wake.wait_for(lock, std::chrono::milliseconds(kIdleExitMs),
                                            [&] { return state.stopping || !pool.queue.empty(); });
      --pool.idle;
      if (!woken && pool.threads > 1) return;  // idle beyond the first thread of the pool
      continue;
    }
    HoldScheduler::JobEntry entry = std::move(pool.queue.front());
    entry.ticket->jobs[slot_of(entry.job)].reset();
    pool.queue.pop_front();
    lock.unlock();
    if (std::shared_ptr<HoldScheduler::Client> client = entry.client.lock()) {
      client->run(entry.job);
    }  // dropped outside the mutex, as in timer_loop
    lock.lock();
  }
}

// A scheduler thread's body. `state` is its own reference: the State outlives the
// HoldScheduler when this thread ends up destroying it.
void run_thread(const std::shared_ptr<State>& state, Role role,
                std::list<ThreadRecord>::iterator record) {
  pthread_setname_np(pthread_self(), thread_name(role));
  std::unique_lock lock(state->mutex);
  if (role == Role::kTimer) {
    timer_loop(*state, lock);
    state->timer_running = false;
  } else {
    Pool& pool = role == Role::kWorker ? state->workers : state->notifiers;
    pool_loop(*state, pool, lock);
    --pool.threads;
  }
  // Once stopping, the record belongs to the destructor (it joins or detaches this thread).
  if (!state->stopping) record->done = true;
}

// Starts a thread of `role` (mutex held: the thread waits for it before it reads anything).
void spawn_locked(const std::shared_ptr<State>& state, Role role) {
  state->records.emplace_back();
  const auto record = std::prev(state->records.end());
  try {
    record->thread = start_thread([state, role, record] { run_thread(state, role, record); });
  } catch (...) {
    state->records.erase(record);
    throw;
  }
  if (role == Role::kTimer) {
    state->timer_running = true;
  } else {
    ++(role == Role::kWorker ? state->workers : state->notifiers).threads;
  }
}

}  // namespace

HoldScheduler::HoldScheduler() : state_(std::make_shared<State>()), creator_pid_(getpid()) {}

HoldScheduler::~HoldScheduler() {
  if (getpid() != creator_pid_) {
    // A forked child: the threads are the parent's and the mutex may have been held at fork().
    // Destroying a joinable std::thread would abort: keep the State for the child's life.
    new std::shared_ptr<State>(std::move(state_));
    return;
  }
  std::list<ThreadRecord> records;
  {
    std::lock_guard guard(state_->mutex);
    // Every client holds the Context, so none is left: nothing is queued, no job runs.
    assert(state_->timers.empty() && state_->workers.queue.empty() &&
           state_->notifiers.queue.empty());
    state_->stopping = true;
    records.swap(state_->records);
  }
  state_->timer_wake.notify_all();
  state_->workers.wake.notify_all();
  state_->notifiers.wake.notify_all();
  for (ThreadRecord& record : records) {
    if (record.thread.get_id() == std::this_thread::get_id()) {
      record.thread.detach();  // the last Context reference dropped inside one of our jobs
    } else {
      record.thread.join();
    }
  }
}

void HoldScheduler::start(bool extension_worker) {
  Finished finished;  // joined after the mutex is released, also when a start throws
  std::lock_guard guard(state_->mutex);
  state_->take_finished(finished);
  if (!state_->timer_running) spawn_locked(state_, Role::kTimer);
  if (state_->notifiers.threads == 0) spawn_locked(state_, Role::kNotifier);
  if (extension_worker && state_->workers.threads == 0) spawn_locked(state_, Role::kWorker);
}

void HoldScheduler::arm(Ticket& ticket, const std::weak_ptr<Client>& client, Timer timer,
                        SteadyTime at) {
  std::lock_guard guard(state_->mutex);
  std::optional<TimerQueue::iterator>& slot = ticket.timers[slot_of(timer)];
  if (slot) state_->timers.erase(*slot);
  slot = state_->timers.emplace(at, TimerEntry{client, &ticket, timer});
  if (at < state_->timer_sleeps_until) state_->timer_wake.notify_one();
}

void HoldScheduler::post(Ticket& ticket, const std::weak_ptr<Client>& client, Job job) {
  Finished finished;
  std::lock_guard guard(state_->mutex);
  std::optional<JobQueue::iterator>& slot = ticket.jobs[slot_of(job)];
  if (slot) return;
  Pool& pool = state_->pool(job);
  slot = pool.queue.insert(pool.queue.end(), JobEntry{client, &ticket, job});
  if (static_cast<int>(pool.queue.size()) > pool.idle && pool.threads < pool.cap) {
    state_->take_finished(finished);
    try {
      spawn_locked(state_, pool.role);
    } catch (const std::system_error&) {
      // No thread to grow by: the job waits for one of the pool's running threads.
    }
  }
  pool.wake.notify_one();
}

void HoldScheduler::cancel(Ticket& ticket) {
  if (getpid() != creator_pid_) return;  // see the destructor
  std::lock_guard guard(state_->mutex);
  for (std::optional<TimerQueue::iterator>& slot : ticket.timers) {
    if (slot) state_->timers.erase(*slot);
    slot.reset();
  }
  for (size_t job = 0; job < ticket.jobs.size(); ++job) {
    std::optional<JobQueue::iterator>& slot = ticket.jobs[job];
    if (slot) state_->pool(static_cast<Job>(job)).queue.erase(*slot);
    slot.reset();
  }
}

int HoldScheduler::threads() const {
  std::lock_guard guard(state_->mutex);
  return (state_->timer_running ? 1 : 0) + state_->workers.threads + state_->notifiers.threads;
}

}  // namespace mongolock::detail

#include "cell.h"

#include <mongolock/mongolock.h>

#include <chrono>
#include <future>
#include <latch>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

#include "apm_pool.h"
#include "child.h"
#include "clock.h"
#include "contender.h"

namespace lockbench {
namespace {

constexpr std::chrono::milliseconds kQuietTimeout{10'000};
constexpr std::chrono::milliseconds kWarmUpTimeout{10'000};
// From the published window to its start: time for every warmed-up thread to be waiting on the
// clock.
constexpr int64_t kThreadsStartDelayNs = 50 * kNsPerMs;

void quiet_or_throw(const ApmPool& pool, const char* when) {
  if (!pool.wait_quiet(kQuietTimeout)) {
    throw std::runtime_error(std::string("commands still in flight ") + when + " after " +
                             std::to_string(kQuietTimeout.count()) + " ms");
  }
}

// What the contender threads of a cell share before the window: each warms up on its own thread,
// counts down `ready`, then waits for the window main publishes (or for none, when a warm-up
// failed).
struct ThreadsStart {
  explicit ThreadsStart(int contenders) : ready(contenders) {}
  std::latch ready;
  std::promise<std::optional<std::pair<int64_t, int64_t>>> window;  // start_ns, stop_ns
};

// Publishes "no window" when it goes out of scope before publish() was called: declared after
// the threads' vector, it runs before their joins on every path out of the block (a thread that
// could not start, a failed snapshot, any exception), so no started thread waits forever.
class WindowOrNone {
 public:
  explicit WindowOrNone(ThreadsStart& start) : start_(start) {}
  WindowOrNone(const WindowOrNone&) = delete;
  WindowOrNone& operator=(const WindowOrNone&) = delete;
  ~WindowOrNone() {
    if (!published_) start_.window.set_value(std::nullopt);
  }
  void publish(int64_t start_ns, int64_t stop_ns) {
    start_.window.set_value(std::pair{start_ns, stop_ns});
    published_ = true;
  }

 private:
  ThreadsStart& start_;
  bool published_ = false;
};

// One contender thread: its warm-up (the same first round trips a contender process makes
// before its "ready": a fresh thread's first acquire also pays for its allocator arena and
// first touches, which would otherwise land in the measured window), then its loop.
void run_thread(mongolock::Provider& provider, const std::vector<mongolock::Lock>& locks,
                ContenderPlan plan, const std::string& warm_name, ThreadsStart& start,
                std::shared_future<std::optional<std::pair<int64_t, int64_t>>> window,
                ContenderReport& report) {
  try {
    warm_up(provider, warm_name);
  } catch (const std::exception& e) {
    report.error = "contender " + std::to_string(plan.index) + " warm-up: " + e.what();
  } catch (...) {
    report.error = "contender " + std::to_string(plan.index) + " warm-up: a non-standard exception";
  }
  start.ready.count_down();
  const std::optional<std::pair<int64_t, int64_t>> w = window.get();
  if (!w || !report.error.empty()) return;
  plan.start_ns = w->first;
  plan.stop_ns = w->second;
  report = run_contender(locks, plan);
}

CellRaw run_threads(Target& target, const RunSettings& settings, const CellSpec& spec) {
  CellRaw raw;
  raw.spec = spec;
  // A pool per cell: a Provider sets its borrowed pool's error API, which libmongoc allows once.
  ApmPool apm(target.client_uri("lockbench"));
  auto provider = std::make_unique<mongolock::Provider>(apm.pool(), settings.database,
                                                        cell_options(settings, *spec.strategy));
  apm.open_connections(spec.contenders);  // after the Provider set the pool's error API
  std::vector<mongolock::Lock> locks;
  for (int k = 0; k < spec.locks; ++k) {
    locks.push_back(provider->create_lock(lock_name(settings, spec.index, k)));
  }
  raw.contenders.resize(static_cast<size_t>(spec.contenders));
  ThreadsStart start(spec.contenders);
  const std::shared_future window = start.window.get_future().share();
  std::string failure;
  std::map<std::string, int64_t> sent_before;
  ServerSnapshot before;
  std::optional<double> cpu_before;
  {
    std::vector<std::jthread> threads;
    WindowOrNone window_or_none(start);
    for (int c = 0; c < spec.contenders; ++c) {
      const ContenderPlan plan{c, spec.hold_ms, settings.gap_ms, 0, 0};
      const std::string warm = lock_name(settings, spec.index, -1) + "-" + std::to_string(c);
      try {
        threads.emplace_back([&, plan, warm] {
          run_thread(*provider, locks, plan, warm, start, window,
                     raw.contenders[static_cast<size_t>(plan.index)]);
        });
      } catch (const std::system_error& e) {
        throw std::runtime_error("contender thread " + std::to_string(c) +
                                 " could not start: " + e.what());
      }
    }
    start.ready.wait();
    // Every thread now waits for the window: it gets one, or none from window_or_none.
    try {
      for (const ContenderReport& r : raw.contenders) {
        if (!r.error.empty()) throw std::runtime_error(r.error);
      }
      quiet_or_throw(apm, "before the cell");
      sent_before = apm.started();
      before = target.snapshot();
      cpu_before = target.cpu_seconds();
    } catch (const std::exception& e) {
      failure = e.what();
    }
    if (failure.empty()) {
      raw.start_ns = monotonic_now_ns() + kThreadsStartDelayNs;
      raw.stop_ns = raw.start_ns + static_cast<int64_t>(settings.seconds_per_cell * kNsPerS);
      window_or_none.publish(raw.start_ns, raw.stop_ns);
    }
  }
  if (!failure.empty()) throw std::runtime_error(failure);
  // The Provider's background work ends with it (a notify stream's getMore waits on the server
  // until its maxAwaitTimeMS): counted on both sides, and nothing stays in flight.
  locks.clear();
  provider.reset();
  quiet_or_throw(apm, "after the cell");
  raw.server = count_between(before, target.snapshot());
  raw.client_commands = difference(apm.started(), sent_before);
  const std::optional<double> cpu_after = target.cpu_seconds();
  if (cpu_before && cpu_after) raw.server_cpu_s = *cpu_after - *cpu_before;
  return raw;
}

}  // namespace

const char* mode_name(Mode mode) {
  return mode == Mode::kThreads ? "threads" : "processes";
}

mongolock::Options cell_options(const RunSettings& settings, const Strategy& strategy) {
  if (!strategy.backoff) {
    throw std::invalid_argument("strategy '" + std::string(strategy.name) +
                                "' cannot run: " + std::string(strategy.unavailable));
  }
  mongolock::Options o;
  o.backoff = *strategy.backoff;
  o.busy_wait_min_ms = settings.busy_wait_min_ms;
  o.busy_wait_max_ms = settings.busy_wait_max_ms;
  o.expiry_ms = settings.expiry_ms;
  // The run's first Provider made the TTL indexes (main.cpp); a background index thread per
  // cell would send commands into the measured window.
  o.create_index = false;
  return o;
}

std::string lock_name(const RunSettings& settings, int cell, int lock) {
  return "lb-" + settings.run_id + "-" + std::to_string(cell) + "-" +
         (lock < 0 ? std::string("warm") : std::to_string(lock));
}

void warm_up(mongolock::Provider& provider, const std::string& name) {
  mongolock::Lock lock = provider.create_lock(name);
  std::optional<mongolock::Handle> held = lock.try_acquire(kWarmUpTimeout);
  if (!held) throw std::runtime_error("warm-up lock '" + name + "' not acquired");
  if (!held->release()) {
    throw std::runtime_error("warm-up lock '" + name + "' not released");
  }
}

void prepare_server(const std::string& uri, const RunSettings& settings) {
  mongolock::Options o;
  o.expiry_ms = settings.expiry_ms;
  mongolock::Provider provider(uri, settings.database, o);
  warm_up(provider, "lb-" + settings.run_id + "-indexes");
}

CellRaw run_cell(Target& target, const RunSettings& settings, const CellSpec& spec) {
  if (spec.mode == Mode::kThreads) return run_threads(target, settings, spec);
  return run_processes(target, settings, spec);
}

}  // namespace lockbench

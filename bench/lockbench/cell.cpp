#include "cell.h"

#include <mongolock/mongolock.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

#include "apm_pool.h"
#include "child.h"
#include "clock.h"
#include "contender.h"

namespace lockbench {
namespace {

constexpr std::chrono::milliseconds kQuietTimeout{10'000};
constexpr std::chrono::milliseconds kWarmUpTimeout{10'000};
// From the start signal to the first acquire: time for every thread to be waiting on the clock.
constexpr int64_t kThreadsStartDelayNs = 50 * kNsPerMs;

void quiet_or_throw(const ApmPool& pool, const char* when) {
  if (!pool.wait_quiet(kQuietTimeout)) {
    throw std::runtime_error(std::string("commands still in flight ") + when + " after " +
                             std::to_string(kQuietTimeout.count()) + " ms");
  }
}

CellRaw run_threads(Target& target, const RunSettings& settings, const CellSpec& spec) {
  CellRaw raw;
  raw.spec = spec;
  // A pool per cell: a Provider sets its borrowed pool's error API, which libmongoc allows once.
  ApmPool apm(target.client_uri("lockbench"));
  auto provider = std::make_unique<mongolock::Provider>(apm.pool(), settings.database,
                                                        cell_options(settings, *spec.strategy));
  apm.open_connections(spec.contenders);  // after the Provider set the pool's error API
  warm_up(*provider, lock_name(settings, spec.index, -1));
  std::vector<mongolock::Lock> locks;
  for (int k = 0; k < spec.locks; ++k) {
    locks.push_back(provider->create_lock(lock_name(settings, spec.index, k)));
  }
  quiet_or_throw(apm, "before the cell");
  const std::map<std::string, int64_t> sent_before = apm.started();
  const ServerSnapshot before = target.snapshot();
  const std::optional<double> cpu_before = target.cpu_seconds();
  raw.start_ns = monotonic_now_ns() + kThreadsStartDelayNs;
  raw.stop_ns = raw.start_ns + static_cast<int64_t>(settings.seconds_per_cell * kNsPerS);
  raw.contenders.resize(static_cast<size_t>(spec.contenders));
  {
    std::vector<std::jthread> threads;
    for (int c = 0; c < spec.contenders; ++c) {
      const ContenderPlan plan{c, spec.hold_ms, settings.gap_ms, raw.start_ns, raw.stop_ns};
      threads.emplace_back([&raw, &locks, plan] {
        raw.contenders[static_cast<size_t>(plan.index)] = run_contender(locks, plan);
      });
    }
  }
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

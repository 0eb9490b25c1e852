#include "client/workload.h"

#include <mongoc/mongoc.h>

#include <cassert>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <iostream>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "checker/history.h"
#include "client/resource_steps.h"
#include "client/worker_signals.h"
#include "mongolock/errors.h"
#include "mongolock/provider.h"
#include "mongolock/rw_lock.h"

namespace locklab {
namespace {

constexpr const char* kLockCollection = "locks";

mongolock::Backoff mongolock_backoff(Backoff backoff) {
  switch (backoff) {
    case Backoff::kRandom:
      return mongolock::Backoff::kRandom;
    case Backoff::kAdaptive:
      return mongolock::Backoff::kAdaptive;
    case Backoff::kDecorrelated:
      return mongolock::Backoff::kDecorrelated;
    case Backoff::kNotify:
      break;
  }
  return mongolock::Backoff::kNotify;
}

mongolock::Options lock_options(const WorkerConfig& c,
                                std::function<void(const mongolock::Event&)> on_event) {
  mongolock::Options o;
  o.on_event = std::move(on_event);
  o.expiry_ms = c.lock.expiry_ms;
  o.extension_cadence_ms = c.lock.extension_cadence_ms;
  o.busy_wait_min_ms = c.lock.busy_wait_min_ms;
  o.busy_wait_max_ms = c.lock.busy_wait_max_ms;
  o.backoff = mongolock_backoff(c.lock.backoff);
  o.write_concern = c.lock.write_concern_w == 0
                        ? mongolock::WriteConcern::majority()
                        : mongolock::WriteConcern::members(c.lock.write_concern_w);
  o.collection = kLockCollection;
  if (c.lock.reap_after_s >= 0) o.reap_after_s = c.lock.reap_after_s;
  o.app_name = c.id;
  o.owner.description = c.id;
  return o;
}

// The lock library's URI: the cluster's, with the scenario's socket timeout when it sets one
// (the command-delay fault delays commands past it, so requests time out and execute later).
std::string lock_uri(const WorkerConfig& c) {
  if (c.lock.socket_timeout_ms == 0) return c.uri;
  return c.uri + (c.uri.find('?') == std::string::npos ? "?" : "&") +
         "socketTimeoutMS=" + std::to_string(c.lock.socket_timeout_ms);
}

// Records the lock library's background events (extensions) in the history. Called on the
// library's extender thread, concurrently with the workload thread: it only appends.
void record_lock_event(HistoryWriter& history, const WorkerConfig& config,
                       const mongolock::Event& event) {
  Event e;
  e.process = config.id;
  e.f = "extend";
  e.lock = std::string(event.lock);
  e.token = event.fencing_token;
  switch (event.kind) {
    case mongolock::EventKind::kExtendSent:
      e.type = EventType::kInvoke;
      break;
    case mongolock::EventKind::kExtended:
      e.type = EventType::kOk;
      e.value = {{"lease_ms", config.lock.expiry_ms}};
      break;
    case mongolock::EventKind::kExtendRefused:
      e.type = EventType::kFail;
      e.value = {{"reason", std::string(event.detail)}};
      break;
    case mongolock::EventKind::kExtendUnknown:
      e.type = EventType::kInfo;
      e.value = {{"error", std::string(event.detail)}};
      break;
    case mongolock::EventKind::kLost:
      return;  // recorded by the workload itself (lost / lost-ignored)
  }
  history.append(std::move(e));
}

// One worker's loop state and its history.
class Worker {
 public:
  Worker(const WorkerConfig& config, HistoryWriter& history, mongolock::Provider& provider)
      : config_(config),
        history_(history),
        provider_(provider),
        steps_(config_,
               [this](const std::string& f, EventType type, const std::string& lock_id,
                      std::optional<int64_t> token,
                      nlohmann::json value) { record(f, type, lock_id, token, std::move(value)); }),
        rng_(config.seed) {}

  // Operations until `operations` are done, stop is requested or write ids run out.
  void run(std::stop_token stop) {
    for (int64_t done = 0; config_.operations == 0 || done < config_.operations; ++done) {
      if (stop.stop_requested() || !operation(stop)) return;
    }
  }

 private:
  // One acquire, critical section, release. Returns false when the worker should stop.
  bool operation(std::stop_token stop) {
    const std::string lock = pick_lock();
    const bool shared =
        config_.kind == WorkloadKind::kRw && static_cast<int>(rng_() % 100) < config_.read_percent;
    std::optional<mongolock::Handle> held = acquire(lock, shared, stop);
    if (!held) return !stop.stop_requested();
    const int64_t token = held->fencing_token();
    auto signal = std::make_shared<LostSignal>();
    const bool honour = config_.honour_lost;
    held->on_lost([this, signal, lock, token, honour] {
      signal->fire();
      // A worker that honours the notification records `lost` itself once its critical
      // section has stopped (a write may still be in flight now).
      if (!honour) record("lost-ignored", EventType::kOk, lock, token, nullptr);
    });
    critical_section(lock, token, *signal, stop);
    if (honour && signal->lost()) {
      record("lost", EventType::kOk, lock, token, {{"detail", "lost notification"}});
    }
    release(lock, token, *held);
    return steps_.write_ids_left();
  }

  WorkerConfig config_;
  HistoryWriter& history_;
  mongolock::Provider& provider_;
  ResourceSteps steps_;
  std::mt19937_64 rng_;

  void record(const std::string& f, EventType type, const std::string& lock,
              std::optional<int64_t> token, nlohmann::json value) {
    Event e;
    e.process = config_.id;
    e.type = type;
    e.f = f;
    e.lock = lock;
    e.token = token;
    e.value = std::move(value);
    history_.append(std::move(e));
  }

  std::string pick_lock() {
    // The counter is one document guarded by one lock.
    if (config_.kind == WorkloadKind::kCounter || config_.locks == 1) return lock_name(0);
    return lock_name(static_cast<int>(rng_() % static_cast<uint64_t>(config_.locks)));
  }

  // A plain lock, or for the rw workload a shared or exclusive hold of the RwLock.
  mongolock::Handle take(const std::string& lock, bool shared, std::stop_token stop) {
    if (config_.kind != WorkloadKind::kRw)
      return provider_.create_lock(lock).acquire(mongolock::kWaitForever, stop);
    mongolock::RwLock rw = provider_.create_rw_lock(lock, config_.lock.max_shared);
    return shared ? rw.acquire_shared(mongolock::kWaitForever, stop)
                  : rw.acquire_exclusive(mongolock::kWaitForever, stop);
  }

  std::optional<mongolock::Handle> acquire(const std::string& lock, bool shared,
                                           std::stop_token stop) {
    const bool rw = config_.kind == WorkloadKind::kRw;
    const nlohmann::json mode =
        rw ? nlohmann::json{{"mode", shared ? "shared" : "exclusive"}} : nlohmann::json();
    record("acquire", EventType::kInvoke, lock, std::nullopt, mode);
    try {
      mongolock::Handle h = take(lock, shared, stop);
      nlohmann::json value = {{"lease_ms", config_.lock.expiry_ms}};
      if (rw) value.update({{"mode", mode["mode"]}, {"max_shared", config_.lock.max_shared}});
      record("acquire", EventType::kOk, lock, h.fencing_token(), std::move(value));
      return h;
    } catch (const mongolock::Cancelled&) {
      record("acquire", EventType::kFail, lock, std::nullopt, {{"reason", "cancelled"}});
    } catch (const mongolock::Timeout& e) {
      record("acquire", EventType::kFail, lock, std::nullopt, {{"reason", e.what()}});
    } catch (const mongolock::UnknownOutcome& e) {
      record("acquire", EventType::kInfo, lock, std::nullopt, {{"error", e.what()}});
    } catch (const mongolock::Error& e) {
      record("acquire", EventType::kFail, lock, std::nullopt, {{"reason", e.what()}});
    }
    return std::nullopt;
  }

  void critical_section(const std::string& lock, int64_t token, LostSignal& signal,
                        std::stop_token stop) {
    switch (config_.kind) {
      case WorkloadKind::kMutex:
        hold(signal, stop);
        return;
      case WorkloadKind::kFenced:
        if (hold(signal, stop)) steps_.fenced_write(lock, token);
        return;
      case WorkloadKind::kCounter:
        steps_.counter_increment(lock, token, [&] { return hold(signal, stop); });
        return;
      case WorkloadKind::kRw: {
        const auto span_ms = static_cast<uint64_t>(2 * config_.critical_section_ms + 1);
        if (hold(signal, stop, static_cast<int64_t>(rng_() % span_ms))) {
          steps_.fenced_write(lock, token);
        }
        return;
      }
    }
  }

  // Holds for the critical section; false means stop early. A worker told not to honour the
  // lost notification holds for the full time regardless (the unsafe pattern, on purpose).
  bool hold(LostSignal& signal, std::stop_token stop) {
    return hold(signal, stop, config_.critical_section_ms);
  }
// GCC 12, inlining the condition variable's stop_token copy into this caller, reports a
// use-after-free of the stop state that is not one (a known false positive of
// -Wuse-after-free on std::stop_token's reference count).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuse-after-free"
#endif
  bool hold(LostSignal& signal, std::stop_token stop, int64_t duration_ms) {
    return signal.hold_for(duration_ms, config_.honour_lost, stop);
  }
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic pop
#endif

  void release(const std::string& lock, int64_t token, mongolock::Handle& held) {
    record("release", EventType::kInvoke, lock, token, nullptr);
    switch (held.release_result()) {
      case mongolock::ReleaseResult::kReleased:
        record("release", EventType::kOk, lock, token, nullptr);
        return;
      case mongolock::ReleaseResult::kNotHeld:
        record("release", EventType::kFail, lock, token,
               {{"reason", "not held (expired, taken over or force-released)"}});
        return;
      case mongolock::ReleaseResult::kUnknown:
        record("release", EventType::kInfo, lock, token,
               {{"error", "outcome unknown: the release may have been applied"}});
        return;
    }
  }
};

}  // namespace

std::optional<int> parse_write_concern_flag(const std::string& text) {
  if (text == "majority") return 0;
  if (text.size() == 1 && text[0] >= '1' && text[0] <= '0' + kWriteConcernMembersMax) {
    return text[0] - '0';
  }
  return std::nullopt;
}

std::string write_concern_flag(int write_concern_w) {
  assert(write_concern_w >= 0 && write_concern_w <= kWriteConcernMembersMax);
  return write_concern_w == 0 ? "majority" : std::to_string(write_concern_w);
}

std::string lock_name(int index) {
  return "L" + std::to_string(index + 1);
}
std::string resource_name(const std::string& lock) {
  return "R" + lock;
}

int run_workload(const WorkerConfig& config, std::stop_token stop) {
  assert(!config.id.empty());
  mongoc_init();
  try {
    HistoryWriter history(config.history_path);
    mongolock::Provider provider(
        lock_uri(config), config.database,
        lock_options(config, [&history, &config](const mongolock::Event& event) {
          record_lock_event(history, config, event);
        }));
    Worker worker(config, history, provider);
    worker.run(stop);
  } catch (const std::exception& e) {
    std::cerr << "locklab-worker " << config.id << ": " << e.what() << std::endl;
    return 2;
  }
  return 0;
}

void run_workload_threads(mongolock::Provider& provider, const std::vector<WorkerConfig>& configs,
                          std::stop_token stop) {
  if (configs.empty()) throw std::invalid_argument("run_workload_threads: no config");
  std::set<std::string> ids;
  for (const WorkerConfig& c : configs) {
    if (c.id.empty() || !ids.insert(c.id).second)
      throw std::invalid_argument("run_workload_threads: worker id \"" + c.id +
                                  "\" is empty or given twice");
    if (c.history_path != configs[0].history_path)
      throw std::invalid_argument("run_workload_threads: worker " + c.id +
                                  " has another history path than " + configs[0].id);
  }
  HistoryWriter history(configs[0].history_path);
  std::mutex errors_mu;
  std::vector<std::string> errors;
  // The loops watch this one, so that a thread that cannot be started stops those that were.
  std::stop_source all;
  std::stop_callback forward(stop, [&all] { all.request_stop(); });
  {
    std::vector<std::jthread> threads;
    threads.reserve(configs.size());
    for (const WorkerConfig& config : configs) {
      try {
        threads.emplace_back([&, stop = all.get_token()] {
          try {
            Worker(config, history, provider).run(stop);
          } catch (const std::exception& e) {
            std::lock_guard lock(errors_mu);
            errors.push_back(config.id + ": " + e.what());
          }
        });
      } catch (...) {
        all.request_stop();  // before the loops already started are joined
        throw;
      }
    }
  }  // joins every loop
  if (!errors.empty()) throw std::runtime_error("run_workload_threads: " + errors.front());
}

}  // namespace locklab

#include "client_run.h"

#include <mongoc/mongoc.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cassert>
#include <chrono>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <random>
#include <thread>

#include "client/resource_steps.h"
#include "client/worker_signals.h"
#include "client/write_concern_flag.h"
#include "db/admin.h"

namespace locklab::clients {
namespace {

// One worker's loop state.
class Worker {
 public:
  Worker(const ClientConfig& client, Recorder& recorder, std::unique_ptr<SeedLock> lock)
      : client_(client),
        config_(client.worker),
        recorder_(recorder),
        lock_(std::move(lock)),
        steps_(config_,
               [this](const std::string& f, EventType type, const std::string& lock_id,
                      std::optional<int64_t> token,
                      nlohmann::json value) { record(f, type, lock_id, token, std::move(value)); }),
        rng_(config_.seed) {}

  // One acquire, critical section, release. Returns false when the worker should stop.
  bool operation(std::stop_token stop) {
    const std::string lock = pick_lock();
    const HoldMode mode = client_.rw && static_cast<int>(rng_() % 100) < client_.read_percent
                              ? HoldMode::kShared
                              : HoldMode::kExclusive;
    auto signal = std::make_shared<LostSignal>();
    std::optional<int64_t> token;
    if (!acquire(lock, mode, signal, stop, &token)) return !stop.stop_requested();
    critical_section(lock, token, *signal, stop);
    if (config_.honour_lost && signal->lost()) {
      record("lost", EventType::kOk, lock, token, {{"detail", "lost notification"}});
    }
    release(lock, token);
    return steps_.write_ids_left();
  }

 private:
  ClientConfig client_;
  WorkerConfig config_;  // client_.worker
  Recorder& recorder_;
  std::unique_ptr<SeedLock> lock_;
  ResourceSteps steps_;
  std::mt19937_64 rng_;

  void record(const std::string& f, EventType type, const std::string& lock,
              std::optional<int64_t> token, nlohmann::json value) {
    recorder_.record(f, type, lock, token, std::move(value));
  }

  std::string pick_lock() {
    if (config_.kind == WorkloadKind::kCounter || config_.locks == 1) return lock_name(0);
    return lock_name(static_cast<int>(rng_() % static_cast<uint64_t>(config_.locks)));
  }

  bool acquire(const std::string& lock, HoldMode mode, const std::shared_ptr<LostSignal>& signal,
               std::stop_token stop, std::optional<int64_t>* token) {
    const nlohmann::json mode_value =
        client_.rw ? nlohmann::json{{"mode", mode == HoldMode::kShared ? "shared" : "exclusive"}}
                   : nlohmann::json();
    record("acquire", EventType::kInvoke, lock, std::nullopt, mode_value);
    const bool honour = config_.honour_lost;
    AcquireResult r = lock_->acquire(lock, mode, stop, [this, signal, lock, honour](auto held) {
      signal->fire();
      // A worker that heeds the notification records `lost` once its section has stopped.
      if (!honour) record("lost-ignored", EventType::kOk, lock, held, nullptr);
    });
    if (r.kind == AcquireResult::Kind::kFailed) {
      record("acquire", EventType::kFail, lock, std::nullopt, {{"reason", r.detail}});
      return false;
    }
    if (r.kind == AcquireResult::Kind::kUnknown) {
      record("acquire", EventType::kInfo, lock, std::nullopt, {{"error", r.detail}});
      return false;
    }
    nlohmann::json value = {{"lease_ms", r.lease_ms}};
    if (!r.token) value["no_token"] = true;
    if (client_.rw)
      value.update({{"mode", mode_value["mode"]}, {"max_shared", client_.max_shared}});
    record("acquire", EventType::kOk, lock, r.token, value);
    *token = r.token;
    return true;
  }

  void critical_section(const std::string& lock, std::optional<int64_t> token, LostSignal& signal,
                        std::stop_token stop) {
    if (config_.kind == WorkloadKind::kCounter) {
      steps_.counter_increment(lock, token, [&] {
        return signal.hold_for(config_.critical_section_ms, config_.honour_lost, stop);
      });
      return;
    }
    int64_t hold_ms = config_.critical_section_ms;
    if (client_.rw) hold_ms = static_cast<int64_t>(rng_() % static_cast<uint64_t>(2 * hold_ms + 1));
    const bool held = signal.hold_for(hold_ms, config_.honour_lost, stop);
    if (config_.kind == WorkloadKind::kFenced && held) {
      assert(token.has_value());  // fenced runs only on locks with tokens (SeedClient::kinds)
      steps_.fenced_write(lock, *token);
    }
  }

  void release(const std::string& lock, std::optional<int64_t> token) {
    record("release", EventType::kInvoke, lock, token, nullptr);
    const ReleaseResult r = lock_->release(lock);
    if (r.kind == ReleaseResult::Kind::kReleased) {
      record("release", EventType::kOk, lock, token, nullptr);
    } else if (r.kind == ReleaseResult::Kind::kNotHeld) {
      record("release", EventType::kFail, lock, token, {{"reason", r.detail}});
    } else {
      record("release", EventType::kInfo, lock, token, {{"error", r.detail}});
    }
  }
};

// The locklab-worker command line, with this client's defaults and workloads.
void add_flags(CLI::App& app, const SeedClient& spec, ClientConfig& client, std::string& kind,
               std::string& backoff, std::string& write_concern, bool& no_fencing) {
  WorkerConfig& c = client.worker;
  app.add_option("--id", c.id, "worker id (history process name and driver appname)")->required();
  app.add_option("--uri", c.uri, "cluster connection string")->required();
  app.add_option("--history", c.history_path, "history.jsonl to append to")->required();
  app.add_option("--database", c.database, "database for locks and resources");
  app.add_option("--kind", kind, "workload")->check(CLI::IsMember(spec.kinds));
  app.add_option("--locks", c.locks, "number of locks")->check(CLI::Range(1, 64));
  app.add_option("--critical-section-ms", c.critical_section_ms)->check(CLI::Range(0, 600'000));
  app.add_option("--read-percent", client.read_percent, "rw: the share of shared holds")
      ->check(CLI::Range(0, 100));
  app.add_option("--max-shared", client.max_shared, "rw: readers at once (0 = unlimited)")
      ->check(CLI::Range(0, 100'000));
  app.add_option("--honour-lost", c.honour_lost,
                 "false: finish the critical section even after a lost notification");
  app.add_option("--operations", c.operations, "0 = until SIGTERM")
      ->check(CLI::Range(0, 1'000'000));
  app.add_option("--expiry-ms", c.lock.expiry_ms, "the lock's lease")
      ->check(CLI::Range(100, 600'000));
  app.add_option("--extension-cadence-ms", c.lock.extension_cadence_ms,
                 "renewal period, 0 = the original's default (ignored by locks without renewal)")
      ->check(CLI::Range(int64_t{0}, int64_t{600'000}));
  app.add_option("--backoff", backoff)->check(CLI::IsMember({"random", "adaptive"}));
  app.add_option("--busy-wait-min-ms", c.lock.busy_wait_min_ms)->check(CLI::Range(1, 60'000));
  app.add_option("--busy-wait-max-ms", c.lock.busy_wait_max_ms)->check(CLI::Range(1, 60'000));
  app.add_option("--write-concern", write_concern, "majority or 1..7")
      ->check(write_concern_validator());
  app.add_flag("--no-fencing", no_fencing, "the fenced resource skips its token check");
  app.add_option("--seed", c.seed, "seed for the worker's random choices");
  app.add_option("--incarnation", c.incarnation, "how many times this worker id was started")
      ->check(CLI::Range(int64_t{0}, int64_t{1'000'000}));
}

// rw holds are plain holds of either mode: the loop runs them as mutex holds.
WorkloadKind parse_kind(const std::string& kind) {
  if (kind == "fenced") return WorkloadKind::kFenced;
  if (kind == "counter") return WorkloadKind::kCounter;
  assert(kind == "mutex" || kind == "rw");
  return WorkloadKind::kMutex;
}

int run(const ClientConfig& client, const SeedClient& spec, std::stop_token stop) {
  const WorkerConfig& config = client.worker;
  mongoc_init();
  try {
    HistoryWriter history(config.history_path);
    Recorder recorder(history, config.id);
    Worker worker(client, recorder, spec.make_lock(client, recorder));
    for (int64_t done = 0; config.operations == 0 || done < config.operations; ++done) {
      if (stop.stop_requested() || !worker.operation(stop)) break;
    }
  } catch (const std::exception& e) {
    std::cerr << spec.program << " " << config.id << ": " << e.what() << std::endl;
    return 2;
  }
  return 0;
}

}  // namespace

int client_main(int argc, char** argv, const SeedClient& spec) {
  assert(!spec.kinds.empty() && spec.make_lock);
  keep_driver_out_of_shm(argv);  // before the sigwait thread and the driver
  ClientConfig client;
  WorkerConfig& c = client.worker;
  c.lock = spec.defaults;
  std::string kind = "mutex";
  std::string backoff = "random";
  std::string write_concern = "majority";
  bool no_fencing = false;
  CLI::App app{spec.program + ": " + spec.description};
  add_flags(app, spec, client, kind, backoff, write_concern, no_fencing);
  // The worker protocol: flags a later harness adds are accepted and ignored (said in the log).
  app.allow_extras();
  CLI11_PARSE(app, argc, argv);
  for (const std::string& extra : app.remaining()) {
    std::cerr << spec.program << ": ignoring argument " << extra << std::endl;
  }
  c.kind = parse_kind(kind);
  client.rw = kind == "rw";
  c.lock.backoff = backoff == "random" ? Backoff::kRandom : Backoff::kAdaptive;
  c.lock.write_concern_w = *parse_write_concern_flag(write_concern);
  c.lock.fencing = !no_fencing;
  if (c.lock.busy_wait_max_ms < c.lock.busy_wait_min_ms) {
    std::cerr << spec.program << ": --busy-wait-max-ms " << c.lock.busy_wait_max_ms
              << " is below --busy-wait-min-ms " << c.lock.busy_wait_min_ms << std::endl;
    return 2;
  }
  if (const std::string problem = spec.refuse ? spec.refuse(client) : ""; !problem.empty()) {
    std::cerr << spec.program << ": " << problem << std::endl;
    return 2;
  }
  std::stop_source stop;
  stop_on_signals(stop);
  return run(client, spec, stop.get_token());
}

}  // namespace locklab::clients

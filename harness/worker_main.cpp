// locklab-worker: one contending client process. The harness starts one per worker (inside the
// worker's network namespace) and stops it with SIGTERM, on which it finishes or abandons its
// critical section, releases what it holds and exits 0.
//
// SIGTERM and SIGINT are blocked in every thread and taken by one sigwait thread, which turns
// them into a stop request, so no work happens in a signal handler.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <stop_token>
#include <thread>

#include "client/worker_signals.h"
#include "client/workload.h"
#include "client/write_concern_flag.h"
#include "db/admin.h"

int main(int argc, char** argv) {
  locklab::keep_driver_out_of_shm(argv);  // before the sigwait thread and the driver
  locklab::WorkerConfig c;
  std::string kind = "mutex";
  std::string backoff = "random";
  std::string write_concern = "majority";
  bool no_fencing = false;
  CLI::App app{"locklab-worker: one contending lock client; appends its events to a history"};
  app.add_option("--id", c.id, "worker id (history process name and driver appname)")->required();
  app.add_option("--uri", c.uri, "cluster connection string")->required();
  app.add_option("--history", c.history_path, "history.jsonl to append to")->required();
  app.add_option("--database", c.database, "database for locks and resources");
  app.add_option("--kind", kind, "workload")
      ->check(CLI::IsMember({"mutex", "fenced", "counter", "rw"}));
  app.add_option("--locks", c.locks, "number of locks")->check(CLI::Range(1, 64));
  app.add_option("--critical-section-ms", c.critical_section_ms)->check(CLI::Range(0, 600'000));
  app.add_option("--read-percent", c.read_percent, "rw: the share of shared holds")
      ->check(CLI::Range(0, 100));
  app.add_option("--max-shared", c.lock.max_shared, "rw: readers at once (0 = unlimited)")
      ->check(CLI::Range(0, 100'000));
  app.add_option("--socket-timeout-ms", c.lock.socket_timeout_ms,
                 "socketTimeoutMS for the lock library's connections (0 = its default)")
      ->check(CLI::Range(int64_t{0}, int64_t{600'000}));
  app.add_option("--reap-after-s", c.lock.reap_after_s, "TTL reap delay (-1 = the default)")
      ->check(CLI::Range(int64_t{-1}, int64_t{31'536'000}));
  app.add_option("--honour-lost", c.honour_lost,
                 "false: finish the critical section even after the lock is lost (unsafe)");
  app.add_option("--operations", c.operations, "0 = until SIGTERM")
      ->check(CLI::Range(0, 1'000'000));
  app.add_option("--expiry-ms", c.lock.expiry_ms)->check(CLI::Range(100, 600'000));
  app.add_option("--extension-cadence-ms", c.lock.extension_cadence_ms);
  app.add_option("--backoff", backoff)
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(locklab::kBackoffNames),
                                                     std::end(locklab::kBackoffNames))));
  app.add_option("--busy-wait-min-ms", c.lock.busy_wait_min_ms)->check(CLI::Range(1, 60'000));
  app.add_option("--busy-wait-max-ms", c.lock.busy_wait_max_ms)->check(CLI::Range(1, 60'000));
  app.add_option("--write-concern", write_concern, "majority or 1..7")
      ->check(locklab::write_concern_validator());
  app.add_flag("--no-fencing", no_fencing, "the fenced resource skips its token check");
  app.add_option("--seed", c.seed, "seed for the worker's random choices");
  app.add_option("--incarnation", c.incarnation,
                 "how many times this worker id was started before (keeps write ids unique)")
      ->check(CLI::Range(int64_t{0}, int64_t{1'000'000}));
  CLI11_PARSE(app, argc, argv);

  c.kind = kind == "mutex"     ? locklab::WorkloadKind::kMutex
           : kind == "fenced"  ? locklab::WorkloadKind::kFenced
           : kind == "counter" ? locklab::WorkloadKind::kCounter
                               : locklab::WorkloadKind::kRw;
  c.lock.backoff = *locklab::backoff_named(backoff);
  c.lock.write_concern_w = *locklab::parse_write_concern_flag(write_concern);
  c.lock.fencing = !no_fencing;

  std::stop_source stop;
  locklab::stop_on_signals(stop);
  return locklab::run_workload(c, stop.get_token());
}

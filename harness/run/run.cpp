#include "run/run.h"

#include <mongoc/mongoc.h>
#include <signal.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <thread>

#include "checker/checker.h"
#include "checker/clock.h"
#include "checker/history.h"
#include "client/client_manifest.h"
#include "client/clients.h"
#include "client/resource_client.h"
#include "db/admin.h"
#include "db/db.h"
#include "db/docker_engine.h"
#include "nemesis/fault_kind.h"
#include "nemesis/nemesis.h"
#include "run/backend.h"
#include "run/check_command.h"
#include "run/cleanup.h"
#include "run/files.h"
#include "run/process.h"
#include "run/progress.h"
#include "run/sandbox.h"
#include "run/scenario.h"
#include "run/workers.h"

namespace locklab {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kTickMs = 20;
constexpr int64_t kOperationsRunMaxMs = 600'000;  // an operations-counted run ends by then
constexpr int64_t kSilentWorkersMinMs = 10'000;   // a counted run's workers may be silent so long
constexpr const char* kDatabase = "locklab";

volatile std::sig_atomic_t g_stop_signal = 0;

// A member process that ended on its own; run_experiment records it in kMemberDiedFile.
class MemberDied : public std::runtime_error {
 public:
  MemberDied(std::string what, std::string line)
      : std::runtime_error(std::move(what)), line_(std::move(line)) {}
  const std::string& line() const { return line_; }

 private:
  std::string line_;
};

void on_stop_signal(int sig) {
  g_stop_signal = sig;
}

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // In the sandbox the stop signals start blocked (run_sandboxed): those sent meanwhile arrive now.
  sigset_t stop_signals;
  stop_signal_set(&stop_signals);
  sigprocmask(SIG_UNBLOCK, &stop_signals, nullptr);
}

// Bound on finding the primary for the final reads (an election may still be running after
// the last heal).
constexpr int64_t kFinalPrimaryWaitMs = 30'000;
// Attempts at one confirmed final read (a primary that steps down during the read is asked
// again), and the bound on all final reads together; past either the read is `final info`.
constexpr int kFinalReadAttempts = 5;
constexpr int64_t kFinalReadsMaxMs = 90'000;

nlohmann::json versions(const std::string& member_program) {
  utsname u{};
  uname(&u);
  return {{"locklab", "0.1.0"},
          {"mongoc", MONGOC_VERSION_S},
          {"member_program", member_program},
          {"kernel", std::string(u.sysname) + " " + u.release}};
}

// Everything one run owns, torn down in reverse order by the destructor.
class Run {
 public:
  Run(const RunOptions& options, Scenario scenario, uint64_t seed, BackendChoice backend,
      fs::path out)
      : options_(options),
        s_(std::move(scenario)),
        seed_(seed),
        backend_(std::move(backend)),
        out_(std::move(out)),
        prefix_(run_prefix()) {}

  ~Run() { teardown(); }

  void execute() {
    prepare();
    history_ = std::make_unique<HistoryWriter>((out_ / "history.jsonl").string());
    // The history starts when the set is ready: its span and the report's time axis are the
    // experiment's, whatever the backend took to come up (seconds for processes, tens of seconds
    // for containers on a loaded machine), which start's setup_ms records.
    const int64_t setup_began_ms = steady_now_ms();
    start_db();
    history_->append({0, "harness", EventType::kInfo, "start", "", std::nullopt,
                      start_value(steady_now_ms() - setup_began_ms)});
    start_workers();
    fault_phase();
    quiet_phase();
    record_stop(workers_all_failed() ? "every worker ended and one failed the run" : "end of run");
    workers_->stop_all(s_.lock.expiry_ms + 3000);
    reap();
    workers_->drain();  // a worker that outlived even SIGKILL's grace: what it wrote so far
    final_reads();
    history_->append({0, "harness", EventType::kInfo, "end", "", std::nullopt, nullptr});
    display_.finish();
  }

  // Bad worker output and workers that ended on their own: the run fails with these.
  std::vector<std::string> worker_problems() const {
    if (!workers_) return {};
    std::vector<std::string> out = workers_->problems();
    if (workers_->problem_count() > out.size()) {
      out.push_back("... and " + std::to_string(workers_->problem_count() - out.size()) +
                    " more (harness worker-output events in history.jsonl)");
    }
    return out;
  }

  void teardown() {
    display_.finish();
    nemesis_.reset();  // heals what is still active
    if (workers_) {
      record_stop("teardown");
      workers_->stop_all(1000);
    }
    if (db_) db_->stop();
    supervisor_.stop_all(1000);
    if (db_) db_->teardown();
    if (!temp_dir_.empty()) {
      remove_run_temp_dir(temp_dir_, GoneGroups::kEnd);
      temp_dir_.clear();
    }
  }

 private:
  RunOptions options_;
  Scenario s_;
  uint64_t seed_;
  BackendChoice backend_;
  fs::path out_;
  std::string prefix_;
  std::string temp_dir_;
  Supervisor supervisor_;
  std::unique_ptr<HistoryWriter> history_;
  std::unique_ptr<Db> db_;
  std::unique_ptr<WorkerPool> workers_;
  std::unique_ptr<Nemesis> nemesis_;
  std::unique_ptr<ProgressTracker> progress_;
  ProgressDisplay display_;
  int64_t start_ms_ = 0;
  bool stop_recorded_ = false;

  // The start event: what the run is and what its `ok`s mean (write concern, fencing).
  nlohmann::json start_value(int64_t setup_ms) const {
    return {
        {"scenario", s_.name},
        {"setup_ms", setup_ms},
        {"seed", seed_},
        {"backend", backend_.name},
        {"check", check_config(s_).to_json()},
        {"vocabulary", kHistoryVocabulary},
        {"workload", to_string(s_.workload.kind)},
        {"client", s_.workload.client},
        {"tokens", find_client(s_.workload.client)->fencing_tokens},
        {"write_concern", s_.lock.write_concern_w == 0 ? nlohmann::json("majority")
                                                       : nlohmann::json(s_.lock.write_concern_w)},
        {"fencing", s_.lock.fencing},
        {"honour_lost", s_.workload.honour_lost}};
  }

  // Written once, when the harness starts stopping the workers: acquires pending then were
  // stopped, not starved. Never throws (teardown calls it).
  void record_stop(const std::string& reason) {
    if (stop_recorded_ || !history_) return;
    stop_recorded_ = true;
    try {
      history_->append(
          {0, "harness", EventType::kInfo, "stop", "", std::nullopt, {{"reason", reason}}});
    } catch (const std::exception& e) {
      std::cerr << "locklab: cannot record the stop: " << e.what() << std::endl;
    }
  }

  void check_interrupt() const {
    if (g_stop_signal != 0)
      throw Interrupted("interrupted by signal " + std::to_string(g_stop_signal));
  }

  void prepare() {
    temp_dir_ = make_run_temp_dir(prefix_);
    fs::create_directories(out_ / "members");
    fs::create_directories(out_ / "workers");
  }

  void start_db() {
    DbConfig c = scenario_db_config(s_);
    c.run_prefix = prefix_;
    c.data_dir = temp_dir_;
    c.log_dir = (out_ / "members").string();
    c.database = kDatabase;
    c.interrupted = [] { return g_stop_signal != 0; };
    db_ = make_db(options_, s_, backend_, std::move(c), supervisor_);
    db_->start();
    check_interrupt();
  }

  void start_workers() {
    WorkerLaunch launch;
    const ClientSpec& client = *find_client(s_.workload.client);
    launch.program = client_program(client, ClientEnvironment::current());
    launch.program_args.assign(client.args.begin(), client.args.end());
    launch.grants = GrantTokens::of(client.name, client.fencing_tokens);
    launch.log_dir = (out_ / "workers").string();
    launch.base.database = kDatabase;
    launch.base.history_path = (out_ / "history.jsonl").string();
    launch.base.kind = s_.workload.kind;
    launch.base.locks = s_.workload.locks;
    launch.base.critical_section_ms = s_.workload.critical_section_ms;
    launch.base.honour_lost = s_.workload.honour_lost;
    launch.base.read_percent = s_.workload.read_percent;
    if (moves_worker_clocks(s_)) launch.faketime = worker_faketime_preload();
    launch.record_dir = temp_dir_;
    launch.base.operations = s_.workload.operations;
    launch.base.lock = s_.lock;
    launch.seed = seed_;
    launch.uri_for = [this](const std::string& id) { return db_->uri(id); };
    launch.netns_for = [this](const std::string& id) { return db_->worker_netns(id); };
    workers_ = std::make_unique<WorkerPool>(supervisor_, *history_, launch, s_.workload.workers);
    progress_ = std::make_unique<ProgressTracker>(launch.base.history_path);
    const int64_t run_ms = s_.workload.duration_ms > 0 ? s_.workload.duration_ms
                           : s_.nemesis.random         ? s_.nemesis.random->end_ms
                                                       : 0;
    std::vector<PlannedFault> plan = plan_faults(s_, run_ms, seed_);
    nlohmann::json plan_json = nlohmann::json::array();
    for (const PlannedFault& f : plan) plan_json.push_back(to_json(f));
    write_file(out_ / "plan.json", plan_json.dump(2) + "\n");
    WorkerView view;
    view.holder = [this] {
      workers_->drain();
      progress_->poll();  // the holder now, not as of the last tick
      return progress_->current_holder();
    };
    view.role = [this](const std::string& worker) {
      workers_->drain();
      progress_->poll();
      return progress_->role(worker);
    };
    nemesis_ =
        std::make_unique<Nemesis>(plan, FaultContext{*db_, *workers_}, *history_, view, seed_);
    workers_->start_all();
    start_ms_ = steady_now_ms();
  }

  // Reaps ended children; a member that dies on its own is a harness error, whether the run
  // reaps it (its child) or the backend noticed it (a container).
  void reap() {
    for (const ExitStatus& e : supervisor_.poll()) {
      if (workers_ && workers_->record_exit(e)) continue;
      if (db_) {
        if (std::optional<std::string> helper = db_->helper_of(e.pid)) {
          throw std::runtime_error(*helper + " ended (" + e.describe() + ")");
        }
      }
      for (int m = 0; db_ && m < db_->size(); ++m) {
        if (db_->pid(m) == e.pid) member_died(m, e.describe());
      }
    }
    if (!db_) return;
    for (const MemberEnd& end : db_->poll_ended_members()) member_died(end.member, end.how);
    for (const std::string& line : db_->poll_ended_worker_hosts()) throw std::runtime_error(line);
  }

  [[noreturn]] void member_died(int member, const std::string& how) const {
    const std::string line = "member m" + std::to_string(member) + " ended (" + how + ")";
    throw MemberDied(line + "; see " + (out_ / "members").string(), line);
  }

  void tick() {
    check_interrupt();
    reap();
    workers_->drain();
    progress_->poll();
    const int64_t elapsed = steady_now_ms() - start_ms_;
    nemesis_->tick(elapsed);
    display_.show(progress_->line(elapsed, nemesis_->active()));
    std::this_thread::sleep_for(std::chrono::milliseconds(kTickMs));
  }

  // Every worker has ended and one of them failed the run (a crash at start, say): waiting out
  // the duration would judge nothing more.
  bool workers_all_failed() const {
    return workers_->running() == 0 && workers_->problem_count() > 0;
  }

  void fault_phase() {
    if (s_.workload.duration_ms > 0) {
      while ((steady_now_ms() - start_ms_ < s_.workload.duration_ms || !nemesis_->finished()) &&
             !workers_all_failed()) {
        tick();
      }
    } else {
      counted_fault_phase();
    }
    nemesis_->heal_all();
  }

  // A counted run ends when the workers have done their operations (or have all ended, one
  // failing the run); one whose running workers all stay silent (no event) for silent_max_ms
  // with no fault active is ended with an error naming them, rather than waited out to
  // kOperationsRunMaxMs.
  void counted_fault_phase() {
    // Three times the widest liveness bound: a correct lock grants within it after a heal, and
    // a member clock moved by d stretches a lease by up to d (widest_liveness_bound_ns counts it).
    const int64_t silent_max_ms =
        std::max<int64_t>(kSilentWorkersMinMs, 3 * widest_liveness_bound_ns(s_) / 1'000'000);
    int64_t events_seen = -1;
    int64_t seen_at_ms = steady_now_ms();
    while ((workers_->running() > 0 || !nemesis_->finished()) && !workers_all_failed()) {
      const int64_t now_ms = steady_now_ms();
      if (now_ms - start_ms_ > kOperationsRunMaxMs) {
        throw std::runtime_error("workers did not finish their operations within " +
                                 std::to_string(kOperationsRunMaxMs) + " ms");
      }
      if (progress_->worker_events() != events_seen || nemesis_->active() > 0) {
        events_seen = progress_->worker_events();
        seen_at_ms = now_ms;
      } else if (workers_->running() > 0 && now_ms - seen_at_ms > silent_max_ms) {
        throw std::runtime_error(silent_workers_message(silent_max_ms));
      }
      tick();
    }
  }

  std::string silent_workers_message(int64_t silent_ms) const {
    std::string running;
    for (const std::string& id : workers_->ids()) {
      if (workers_->pid(id) != 0) running += (running.empty() ? "" : ", ") + id;
    }
    return "no worker wrote an event for " + std::to_string(silent_ms) +
           " ms with no fault active, in a run counted by operations; still running: " + running +
           " (their output: " + (out_ / "workers").string() + "/<id>.log)";
  }

  void quiet_phase() {
    const int64_t end = steady_now_ms() + s_.nemesis.quiet_ms;
    while (steady_now_ms() < end && (s_.workload.duration_ms > 0 || workers_->running() > 0) &&
           !workers_all_failed())
      tick();
  }

  // One `final` per resource the workload used, read at majority from a member confirmed
  // primary for the whole read (Db::read_confirmed); a missing document is a final read
  // too; a read that cannot be confirmed is `final info`.
  void final_reads() {
    if (s_.workload.kind == WorkloadKind::kMutex) return;
    const int64_t deadline = steady_now_ms() + kFinalReadsMaxMs;
    if (s_.workload.kind == WorkloadKind::kCounter) {
      final_read(kCounterCollection, kCounterResource, deadline);
      return;
    }
    for (int l = 0; l < s_.workload.locks; ++l) {
      final_read(kFencedCollection, resource_name(lock_name(l)), deadline);
    }
  }

  void final_read(const std::string& collection, const std::string& resource, int64_t deadline) {
    std::string error = "no time left for the final reads";
    for (int attempt = 0; attempt < kFinalReadAttempts && steady_now_ms() < deadline; ++attempt) {
      const int primary =
          db_->wait_for_primary(std::min(kFinalPrimaryWaitMs, deadline - steady_now_ms()));
      if (primary < 0) {
        error = "no primary within the final-read bound";
        continue;
      }
      try {
        const nlohmann::json doc = db_->read_confirmed(primary, kDatabase, collection, resource);
        history_->append(
            {0, "harness", EventType::kOk, "final", "", std::nullopt, final_value(resource, doc)});
        return;
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    history_->append({0,
                      "harness",
                      EventType::kInfo,
                      "final",
                      "",
                      std::nullopt,
                      {{"resource", resource}, {"error", error}}});
  }

  // count is kept beside missing so that a reader counting writes sees 0 for no document.
  nlohmann::json final_value(const std::string& resource, const nlohmann::json& doc) const {
    if (s_.workload.kind != WorkloadKind::kCounter) return fenced_final_value(resource, doc);
    if (doc.is_null()) return {{"resource", resource}, {"missing", true}, {"count", 0}};
    return {{"resource", resource}, {"count", doc.value("count", int64_t{0})}};
  }
};

// A scenario whose client cannot run on this machine (node missing, program not built) is not
// run: "locklab: unsupported: ..." and kExitNotRun, before anything starts; a client manifest
// whose own program is missing is a mistake in it: an error (exit 2), not a skip. Returns 0 when
// the client is available.
int refuse_unavailable_client(const Scenario& s) {
  const ClientSpec* client = find_client(s.workload.client);
  assert(client != nullptr);  // load_scenario refuses unknown clients
  const std::string where = s.workload.client_line > 0
                                ? s.path + ":" + std::to_string(s.workload.client_line)
                                : s.path + " (the default client)";
  if (const std::string broken = manifest_program_problem(*client); !broken.empty()) {
    std::cerr << "locklab: " << where << ": workload.client: client \"" << s.workload.client
              << "\": its manifest " << manifest_path_of(*client) << " names a program that "
              << "cannot run: " << broken << "\n";
    return kExitError;
  }
  const std::string why = client_unavailable(*client, ClientEnvironment::current());
  if (why.empty()) return 0;
  std::cerr << "locklab: unsupported: " << where << ": workload.client: client \""
            << s.workload.client << "\" is unavailable here: " << why << "\n";
  return kExitNotRun;
}

// Does the verdict match what the scenario expects? Prints why not.
bool expectation_met(const Scenario& s, const Verdict& v, std::ostream& out) {
  bool met = true;
  auto outcome_of = [&](const std::string& p) {
    const PropertyResult* r = v.find(p);
    return r ? r->outcome : Outcome::kUnknown;
  };
  if (s.expect == Expect::kValid && v.overall != Outcome::kValid) {
    out << "expected valid, got " << to_string(v.overall) << "\n";
    met = false;
  }
  for (const std::string& p : s.expect_violated) {
    if (outcome_of(p) != Outcome::kInvalid) {
      out << "expected " << p << " to be violated, got " << to_string(outcome_of(p)) << "\n";
      met = false;
    }
  }
  for (const std::string& p : s.expect_holding) {
    if (outcome_of(p) != Outcome::kValid) {
      out << "expected " << p << " to hold, got " << to_string(outcome_of(p)) << "\n";
      met = false;
    }
  }
  return met;
}

// Bad worker output found by the run, one problem per line; absent when there was none.
constexpr const char* kWorkerProblemsFile = "worker-problems.txt";

std::vector<std::string> read_lines(const fs::path& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

// Everything from the cluster's start to the end of the final reads: 0 when the history is
// complete, 2 (after printing why) when not. On the netns backend this is the sandbox's PID 1.
int run_experiment(const RunOptions& options, const Scenario& scenario, uint64_t seed,
                   const BackendChoice& backend, const fs::path& out) {
  try {
    Supervisor::become_subreaper();
    install_signal_handlers();
    init_driver();
    Run run(options, scenario, seed, backend, out);
    run.execute();
    // On the netns backend this process is not the one that reports: the problems cross the
    // sandbox as a file of the run directory (one per line), which also keeps them for a reader.
    std::string problems;
    for (const std::string& p : run.worker_problems()) problems += p + "\n";
    if (!problems.empty()) write_file(out / kWorkerProblemsFile, problems);
  } catch (const Unsupported& e) {
    std::cerr << "\nlocklab: unsupported: " << e.what() << "\n";
    return 2;
  } catch (const MemberDied& e) {
    std::cerr << "\nlocklab: run failed: " << e.what() << "\n";
    try {
      write_file(out / kMemberDiedFile, e.line() + "\n");
    } catch (const std::exception& w) {
      std::cerr << "locklab: " << w.what() << "\n";
    }
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "\nlocklab: run failed: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace

// How far the schedule moves members' clocks in all: the sum of every member clock fault's
// magnitude (a skew's offset, a jump, a divergence's clock_ms), in ms.
int64_t member_clock_movement_ms(const Scenario& s) {
  int64_t total_ms = 0;
  for (const FaultSpec& f : s.nemesis.schedule) {
    if (fault_row(f.fault).clock != ClockMoved::kMember) continue;
    for (const char* key : {"offset_ms", "jump_ms", "clock_ms"}) {
      if (f.params.contains(key)) total_ms += std::abs(f.params[key].get<int64_t>());
    }
  }
  return total_ms;
}

// The names of the fault kinds that move member clocks, in table order.
std::vector<std::string> member_clock_fault_kinds() {
  std::vector<std::string> kinds;
  for (const FaultKindRow& row : fault_kinds()) {
    if (row.clock == ClockMoved::kMember) kinds.emplace_back(row.name);
  }
  return kinds;
}

CheckConfig check_config(const Scenario& s) {
  CheckConfig c;
  // Member clock faults widen the lease model's skew (twice their moves: the granting and the
  // judging member may each be off) and the liveness bound where the checkers judge, counting
  // the faults begun by then (CheckConfig::clock_fault_kinds).
  c.clock_fault_kinds = member_clock_fault_kinds();
  c.properties = s.check.properties;
  // The lease the client really grants (npm's ttl is whole seconds), not the one asked for.
  const int64_t derived_ms = granted_lease_ms(s.workload.client, s.lock.expiry_ms) +
                             s.cluster.election_timeout_ms + s.lock.busy_wait_max_ms +
                             s.workload.critical_section_ms;
  // A hold granted on a clock d ahead of the one that judges it, or judged on one d behind its
  // granter's, lasts up to d longer than its lease (mongolock.h, "Liveness under a clock that is
  // off"; a jump stays after its heal): the checker adds at each heal the moves of the member
  // clock faults begun by then, to the derived bound or the one the scenario sets.
  c.liveness_bound_ns =
      (s.check.liveness_bound_ms > 0 ? s.check.liveness_bound_ms : derived_ms) * 1'000'000;
  if (s.check.lost_signal_bound_ms > 0) c.lost_bound_ns = s.check.lost_signal_bound_ms * 1'000'000;
  c.counter_resource = kCounterResource;
  return c;
}

int64_t widest_liveness_bound_ns(const Scenario& s) {
  return check_config(s).liveness_bound_ns + member_clock_movement_ms(s) * 1'000'000;
}

std::string binary_dir() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "." : self.parent_path().string();
}

int run_scenario(const RunOptions& options) {
  Scenario scenario;
  try {
    scenario = load_scenario(options.scenario_path, options.overrides);
  } catch (const ScenarioError& e) {
    std::cerr << "locklab: " << e.what() << "\n";
    return 2;
  }
  if (int code = refuse_unavailable_client(scenario); code != 0) return code;
  const uint64_t seed = options.seed ? *options.seed : std::random_device{}();
  std::vector<std::string> worker_problems;
  const fs::path out = options.out_dir.empty()
                           ? fs::path("results/runs") / (utc_stamp() + "-" + scenario.name)
                           : fs::path(options.out_dir);
  std::cout << "locklab: scenario " << scenario.name << ", seed " << seed << ", output "
            << out.string() << std::endl;
  try {
    const BackendChoice backend = choose_backend(options, scenario);
    std::string member_program;
    {
      // Constructing a Db starts nothing: this one only answers what it supports.
      Supervisor none;
      const std::unique_ptr<Db> db =
          make_db(options, scenario, backend, scenario_db_config(scenario), none);
      preflight(scenario, *db);
      member_program = db->member_program();
    }
    fs::create_directories(out);
    // A reused directory starts a fresh history: appending to an old one would mix two runs.
    fs::remove(out / "history.jsonl");
    fs::remove(out / kWorkerProblemsFile);
    fs::remove(out / kMemberDiedFile);
    write_file(out / "scenario.toml", scenario_text(options.scenario_path, options.overrides));
    write_file(out / "seed", std::to_string(seed) + "\n");
    write_file(out / "versions.json", versions(member_program).dump(2) + "\n");
    // A sandboxed run leaves the host's named namespaces alone: it never creates any there.
    const HostNamespaces host =
        backend.name == "netns" ? HostNamespaces::kLeave : HostNamespaces::kClean;
    sweep_stale_runs(host);
    // What a SIGKILLed docker run left (its containers, network, images, a daemon it started).
    if (backend.name == "docker") sweep_docker_leftovers();
    // Forked here, outside the sandbox: it removes the run's /tmp directory after a SIGKILL.
    start_janitor(run_prefix(), host);
    const auto experiment = [&] { return run_experiment(options, scenario, seed, backend, out); };
    const int code = backend.name == "netns" ? run_sandboxed(experiment) : experiment();
    if (code != 0) return code;
    worker_problems = read_lines(out / kWorkerProblemsFile);
  } catch (const std::exception& e) {
    std::cerr << "\nlocklab: run failed: " << e.what() << "\n";
    return 2;
  }
  CheckCommandOptions check_options;
  check_options.junit_path = options.junit_path;
  const CheckCommandResult result = run_check_command(out.string(), check_options);
  if (!worker_problems.empty()) {
    // The history lacks what the bad lines said, or a fault did not reach a worker: its verdict
    // cannot be trusted either way.
    std::cerr << "locklab: run failed: worker problems (every other event is kept in "
              << (out / "history.jsonl").string() << "):\n";
    for (const std::string& p : worker_problems) std::cerr << "  " << p << "\n";
    return 2;
  }
  if (!result.error.empty()) return 2;
  const bool met = expectation_met(scenario, result.verdict, std::cout);
  std::cout << "expectation (" << to_string(scenario.expect) << "): " << (met ? "met" : "NOT met")
            << "\nseed: " << seed << "\n";
  if (options.expectation_gate) return met ? 0 : 1;
  return result.exit_code;
}

}  // namespace locklab

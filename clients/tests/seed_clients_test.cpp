// The seed-lock clients as the harness runs them: 2-3 real worker processes of one client on one
// lock, against a real mongosim member (one member, on loopback, the harness's own cluster
// definition), their shared history judged by the real checkers. Where the lock is sound under
// no faults the history must be valid; each client's documented hole that needs no fault
// (DistributedLock.MongoDB's token reset after a clean release; the recipe's hold outliving its
// TTL; square's expiry judged on a client clock that runs ahead) must show as the checker's
// violation.
//
// Model left out: every fault but one worker's wall clock set ahead at start (libfaketime; no
// pauses, partitions, elections, jumps during a hold), more than one lock name, worker
// restarts; the server's TTL pass is 1 s (the harness's setting), not MongoDB's 60 s.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "checker/checker.h"
#include "checker/history.h"
#include "client/workload.h"
#include "db/db.h"
#include "harness_db.h"
#include "poll_until.h"
#include "programs.h"
#include "run/process.h"
#include "temp_dir.h"

namespace locklab {
namespace {

constexpr int64_t kWorkerExitMs = 60'000;  // bound on each worker's run

bool clients_built() {
  const std::string bin = LOCKLAB_BIN_DIR;
  for (const char* program :
       {"locklab-distributedlock", "locklab-square", "locklab-alistairjevans"}) {
    if (!std::filesystem::exists(bin + "/" + program)) return false;
  }
  return testing::programs_built();
}

void expect_exit_zero(const std::vector<ExitStatus>& statuses, size_t workers) {
  ASSERT_EQ(statuses.size(), workers);
  for (const ExitStatus& s : statuses) EXPECT_EQ(s.code, 0) << "pid " << s.pid << s.describe();
}

class SeedClientsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!clients_built()) GTEST_SKIP() << "needs mongosim and the seed clients built";
    dir_ = std::make_unique<testkit::TempDir>();
    cluster_ = testkit::harness_db(dir_->path(), 1, supervisor_);
    cluster_->start();
  }
  void TearDown() override {
    supervisor_.stop_all(1000);
    if (cluster_) cluster_->stop();
  }

  std::string history_path() const { return dir_->file("history.jsonl"); }

  void append_start(const std::string& kind) {
    HistoryWriter(history_path())
        .append({0,
                 "harness",
                 EventType::kInfo,
                 "start",
                 "",
                 std::nullopt,
                 {{"vocabulary", kHistoryVocabulary}, {"workload", kind}}});
  }

  // Starts worker `id` of `program` with the given workload flags; with a non-empty
  // clock_offset (libfaketime's "+60s") its wall clock runs that far off the machine's, while
  // CLOCK_MONOTONIC (the history's clock) stays the machine's.
  pid_t start_worker(const std::string& program, const std::string& id, const std::string& kind,
                     const std::vector<std::string>& flags, const std::string& clock_offset = "") {
    SpawnOptions spawn;
    if (!clock_offset.empty()) {
      spawn.argv = {"/usr/bin/env", "FAKETIME_DONT_FAKE_MONOTONIC=1", "faketime", "-f",
                    clock_offset};
    }
    const std::vector<std::string> worker = {std::string(LOCKLAB_BIN_DIR) + "/" + program,
                                             "--id",
                                             id,
                                             "--uri",
                                             cluster_->uri(id),
                                             "--history",
                                             history_path(),
                                             "--database",
                                             "locklab",
                                             "--kind",
                                             kind,
                                             "--seed",
                                             id.substr(1)};
    spawn.argv.insert(spawn.argv.end(), worker.begin(), worker.end());
    spawn.argv.insert(spawn.argv.end(), flags.begin(), flags.end());
    spawn.log_path = dir_->file(id + ".log");
    return supervisor_.spawn(spawn);
  }

  std::vector<ExitStatus> wait_all(const std::vector<pid_t>& pids) {
    std::vector<ExitStatus> statuses;
    for (pid_t pid : pids) {
      std::optional<ExitStatus> status = supervisor_.wait_exit(pid, kWorkerExitMs);
      EXPECT_TRUE(status.has_value()) << "worker pid " << pid << " did not finish";
      if (status) statuses.push_back(*status);
    }
    return statuses;
  }

  // Runs `workers` processes of `program` to completion with the given workload flags, after a
  // vocabulary-2 start event, and returns each worker's exit status.
  std::vector<ExitStatus> run_workers(const std::string& program, int workers,
                                      const std::string& kind,
                                      const std::vector<std::string>& flags) {
    append_start(kind);
    std::vector<pid_t> pids;
    for (int w = 1; w <= workers; ++w) {
      pids.push_back(start_worker(program, "w" + std::to_string(w), kind, flags));
    }
    return wait_all(pids);
  }

  // Waits (bounded) until `process` has an acquire ok in the history.
  bool wait_acquired(const std::string& process) {
    return testkit::poll_until(testkit::after(std::chrono::milliseconds(kWorkerExitMs)), [&] {
      if (!std::filesystem::exists(history_path())) return false;
      const std::vector<Event> history = read_history(history_path());
      return std::any_of(history.begin(), history.end(), [&](const Event& e) {
        return e.process == process && e.f == "acquire" && e.type == EventType::kOk;
      });
    });
  }

  // w1 (true clock) takes the lock and holds it 10 s of a 30 s lease; once it holds, w2 starts
  // with its wall clock 60 s ahead and asks for the same lock. Returns strict exclusion's verdict.
  // The 10 s hold is the time w2 has to start and steal (a process start, a connection and one
  // attempt): a slow (sanitizer) build takes a few seconds for what takes 100 ms here.
  Verdict fast_clock_contender(const std::string& program) {
    append_start("mutex");
    if (run_tool({"sh", "-c", "command -v faketime"}).code != 0) {
      ADD_FAILURE() << "faketime is not on PATH";
      return {};
    }
    const std::vector<std::string> flags = {"--operations",       "1", "--expiry-ms", "30000",
                                            "--busy-wait-max-ms", "50"};
    std::vector<std::string> w1_flags = flags;
    w1_flags.insert(w1_flags.end(), {"--critical-section-ms", "10000"});
    const pid_t w1 = start_worker(program, "w1", "mutex", w1_flags);
    EXPECT_TRUE(wait_acquired("w1")) << "w1 never acquired";
    std::vector<std::string> w2_flags = flags;
    w2_flags.insert(w2_flags.end(), {"--critical-section-ms", "100"});
    const pid_t w2 = start_worker(program, "w2", "mutex", w2_flags, "+60s");
    expect_exit_zero(wait_all({w1, w2}), 2);
    return check_history({"exclusion.strict"});
  }

  // The harness's final read of the counter, appended as the harness appends it.
  void append_counter_final() {
    const nlohmann::json doc =
        cluster_->read_confirmed(0, "locklab", kCounterCollection, kCounterResource);
    HistoryWriter(history_path())
        .append({0,
                 "harness",
                 EventType::kOk,
                 "final",
                 "",
                 std::nullopt,
                 {{"resource", kCounterResource}, {"count", doc.value("count", int64_t{0})}}});
  }

  Verdict check_history(const std::vector<std::string>& properties) {
    CheckConfig config;
    config.properties = properties;
    return check(read_history(history_path()), config);
  }

  std::unique_ptr<testkit::TempDir> dir_;
  Supervisor supervisor_;
  std::unique_ptr<Db> cluster_;
};

// Every acquire ok in the history: with a token for locks that issue one, and otherwise without
// one and with value.no_token = true.
void expect_acquire_tokens(const std::vector<Event>& history, bool tokens) {
  size_t acquired = 0;
  for (const Event& e : history) {
    if (e.f != "acquire" || e.type != EventType::kOk) continue;
    ++acquired;
    EXPECT_EQ(e.token.has_value(), tokens) << to_json_line(e);
    EXPECT_EQ(e.value.value("no_token", false), !tokens) << to_json_line(e);
  }
  EXPECT_GT(acquired, 0u);
}

std::string outcome_of(const Verdict& verdict, std::string_view property) {
  const PropertyResult* result = verdict.find(property);
  if (result == nullptr) return "not checked";
  std::string text(to_string(result->outcome));
  for (const Violation& v : result->violations) text += "; " + v.message;
  return text;
}

// Three DistributedLock workers, counter workload: one holder at a time, no lost update, and
// every acquisition carries a token.
TEST_F(SeedClientsTest, DistributedLockCounterIsValid) {
  const auto statuses =
      run_workers("locklab-distributedlock", 3, "counter",
                  {"--operations", "6", "--critical-section-ms", "20", "--expiry-ms", "5000"});
  expect_exit_zero(statuses, 3);
  append_counter_final();
  const Verdict v = check_history({"exclusion.strict", "counter.no-lost-updates"});
  EXPECT_EQ(v.stats.acquisitions, 18u);
  EXPECT_EQ(outcome_of(v, kExclusionStrict), "valid");
  EXPECT_EQ(outcome_of(v, kCounterNoLostUpdates), "valid");
  expect_acquire_tokens(read_history(history_path()), true);
}

// The library's token lives in the lock document, which a clean release deletes: the next
// acquire starts again at 1. Two workers, fenced workload, no fault: tokens.unique must fail
// (the same token granted to several holds of L1) while strict exclusion holds.
TEST_F(SeedClientsTest, DistributedLockTokenResetsAfterCleanRelease) {
  const auto statuses =
      run_workers("locklab-distributedlock", 2, "fenced",
                  {"--operations", "4", "--critical-section-ms", "20", "--expiry-ms", "5000"});
  expect_exit_zero(statuses, 2);
  const Verdict v = check_history({"exclusion.strict", "tokens.unique"});
  EXPECT_EQ(v.stats.acquisitions, 8u);
  EXPECT_EQ(outcome_of(v, kExclusionStrict), "valid");
  const PropertyResult* unique = v.find(kTokensUnique);
  ASSERT_NE(unique, nullptr);
  EXPECT_EQ(unique->outcome, Outcome::kInvalid) << outcome_of(v, kTokensUnique);
}

// Three square workers on the exclusive lock, counter workload: valid with synchronized clocks.
TEST_F(SeedClientsTest, SquareCounterIsValid) {
  const auto statuses = run_workers("locklab-square", 3, "counter",
                                    {"--operations", "6", "--critical-section-ms", "20",
                                     "--expiry-ms", "5000", "--busy-wait-max-ms", "50"});
  expect_exit_zero(statuses, 3);
  append_counter_final();
  const Verdict v = check_history({"exclusion.strict", "counter.no-lost-updates"});
  EXPECT_EQ(v.stats.acquisitions, 18u);
  EXPECT_EQ(outcome_of(v, kExclusionStrict), "valid");
  EXPECT_EQ(outcome_of(v, kCounterNoLostUpdates), "valid");
  expect_acquire_tokens(read_history(history_path()), false);
}

// Three recipe workers, holds well inside the TTL: valid.
TEST_F(SeedClientsTest, RecipeCounterIsValid) {
  const auto statuses = run_workers("locklab-alistairjevans", 3, "counter",
                                    {"--operations", "6", "--critical-section-ms", "20"});
  expect_exit_zero(statuses, 3);
  append_counter_final();
  const Verdict v = check_history({"exclusion.strict", "counter.no-lost-updates"});
  EXPECT_EQ(v.stats.acquisitions, 18u);
  EXPECT_EQ(outcome_of(v, kExclusionStrict), "valid");
  EXPECT_EQ(outcome_of(v, kCounterNoLostUpdates), "valid");
  expect_acquire_tokens(read_history(history_path()), false);
}

// The recipe's only expiry is the TTL index: a hold of 10 s on a 1 s TTL is deleted under its
// holder (the TTL pass runs every second), and the waiting worker takes the lock while the first
// still holds it: strict exclusion must fail. The hold leaves the waiter seconds to see the
// deletion and insert, however slow the build.
TEST_F(SeedClientsTest, RecipeHoldLongerThanTtlOverlaps) {
  const auto statuses =
      run_workers("locklab-alistairjevans", 2, "mutex",
                  {"--operations", "2", "--critical-section-ms", "10000", "--expiry-ms", "1000"});
  expect_exit_zero(statuses, 2);
  const Verdict v = check_history({"exclusion.strict"});
  const PropertyResult* strict = v.find(kExclusionStrict);
  ASSERT_NE(strict, nullptr);
  EXPECT_EQ(strict->outcome, Outcome::kInvalid) << outcome_of(v, kExclusionStrict);
}

// One hold: a worker's acquire ok to its release invoke (or the end of the history).
struct Hold {
  std::string process;
  bool shared = false;
  int64_t from_ns = 0;
  int64_t to_ns = INT64_MAX;
};

std::vector<Hold> holds_of(const std::vector<Event>& history) {
  std::vector<Hold> holds;
  std::map<std::string, size_t> open;  // process -> index of its open hold
  for (const Event& e : history) {
    if (e.f == "acquire" && e.type == EventType::kOk) {
      open[e.process] = holds.size();
      holds.push_back({e.process, e.value.value("mode", "") == "shared", e.t_ns});
    } else if (e.f == "release" && e.type == EventType::kInvoke && open.count(e.process)) {
      holds[open[e.process]].to_ns = e.t_ns;
      open.erase(e.process);
    }
  }
  return holds;
}

// Three square workers, half their holds shared (SLock), half exclusive (XLock), no reader
// limit: no exclusive hold may overlap any other hold, and readers do share (some two shared
// holds overlap), or the shared path would be an exclusive lock in disguise. The checker's
// reader/writer property is not on this branch: the overlaps are judged here.
TEST_F(SeedClientsTest, SquareSharedAndExclusiveHolds) {
  const auto statuses =
      run_workers("locklab-square", 3, "rw",
                  {"--operations", "12", "--critical-section-ms", "60", "--expiry-ms", "5000",
                   "--busy-wait-max-ms", "20", "--read-percent", "60"});
  expect_exit_zero(statuses, 3);
  const std::vector<Hold> holds = holds_of(read_history(history_path()));
  ASSERT_EQ(holds.size(), 36u);
  size_t shared_overlaps = 0;
  for (size_t i = 0; i < holds.size(); ++i) {
    for (size_t j = i + 1; j < holds.size(); ++j) {
      const Hold& a = holds[i];
      const Hold& b = holds[j];
      if (a.process == b.process || a.to_ns <= b.from_ns || b.to_ns <= a.from_ns) continue;
      EXPECT_TRUE(a.shared && b.shared) << a.process << " and " << b.process << " overlap with "
                                        << "an exclusive hold";
      ++shared_overlaps;
    }
  }
  EXPECT_GT(shared_overlaps, 0u);
}

// square/mongo-lock judges expiry on the client's wall clock: a contender whose clock runs 60 s
// ahead sees the holder's 30 s lease as over and takes the lock while it is held. Strict
// exclusion must fail. (The harness's worker clock fault does the same inside a run.)
TEST_F(SeedClientsTest, SquareFastClockStealsLiveLock) {
  const Verdict v = fast_clock_contender("locklab-square");
  const PropertyResult* strict = v.find(kExclusionStrict);
  ASSERT_NE(strict, nullptr);
  EXPECT_EQ(strict->outcome, Outcome::kInvalid) << outcome_of(v, kExclusionStrict);
  EXPECT_EQ(v.stats.acquisitions, 2u);
}

// The same contender against mongolock, whose leases are on the server's clock: it waits for
// the release, strict exclusion holds.
TEST_F(SeedClientsTest, MongolockIgnoresFastClockContender) {
  const Verdict v = fast_clock_contender("locklab-worker");
  EXPECT_EQ(outcome_of(v, kExclusionStrict), "valid");
  EXPECT_EQ(v.stats.acquisitions, 2u);
}

std::vector<Event> events_of(const std::vector<Event>& history, const std::string& f) {
  std::vector<Event> out;
  for (const Event& e : history) {
    if (e.f == f) out.push_back(e);
  }
  return out;
}

// DistributedLock's watchdog renews a 3 s lease every second through a 6 s hold; when the
// lock document is deleted under the holder (as the TTL index or an operator would), the next
// renewal matches nothing, the hold is lost, the worker stops its critical section and records
// `lost` before its release, which finds nothing to delete. The lease is long enough that a
// slow (sanitizer) build's late renewal still finds it live.
TEST_F(SeedClientsTest, DistributedLockRenewsThenLosesDeletedDocument) {
  append_start("mutex");
  const pid_t w1 =
      start_worker("locklab-distributedlock", "w1", "mutex",
                   {"--operations", "2", "--critical-section-ms", "6000", "--expiry-ms", "3000"});
  ASSERT_TRUE(wait_acquired("w1"));
  // Renewals must be seen before the document is deleted.
  EXPECT_TRUE(testkit::poll_until(testkit::after(std::chrono::milliseconds(kWorkerExitMs)), [&] {
    const auto extends = events_of(read_history(history_path()), "extend");
    return std::count_if(extends.begin(), extends.end(),
                         [](const Event& e) { return e.type == EventType::kOk; }) >= 2;
  })) << "no two renewals before the deletion";
  cluster_->command(0, "locklab",
                    {{"delete", "distributed_locks"},
                     {"deletes", nlohmann::json::array({{{"q", {{"_id", "L1"}}}, {"limit", 1}}})}});
  expect_exit_zero(wait_all({w1}), 1);
  const std::vector<Event> history = read_history(history_path());
  const std::vector<Event> extends = events_of(history, "extend");
  EXPECT_GE(std::count_if(extends.begin(), extends.end(),
                          [](const Event& e) { return e.type == EventType::kOk; }),
            2);
  EXPECT_EQ(std::count_if(extends.begin(), extends.end(),
                          [](const Event& e) { return e.type == EventType::kFail; }),
            1);
  const std::vector<Event> lost = events_of(history, "lost");
  ASSERT_EQ(lost.size(), 1u);
  const std::vector<Event> releases = events_of(history, "release");
  ASSERT_EQ(releases.size(), 4u);  // two holds: invoke + completion each
  EXPECT_LT(lost[0].t_ns, releases[0].t_ns);
  EXPECT_EQ(releases[1].type, EventType::kFail) << to_json_line(releases[1]);
  EXPECT_EQ(releases[3].type, EventType::kOk) << to_json_line(releases[3]);
}

// The worker protocol: a flag added by a later harness is accepted and ignored.
TEST_F(SeedClientsTest, UnknownFlagIsIgnored) {
  const auto statuses = run_workers("locklab-square", 1, "mutex",
                                    {"--operations", "1", "--flag-from-the-future", "3"});
  expect_exit_zero(statuses, 1);
  EXPECT_EQ(check_history({"exclusion.strict"}).stats.acquisitions, 1u);
}

// A flag the original has no equivalent for is refused before anything starts.
TEST_F(SeedClientsTest, DistributedLockRefusesAdaptiveBackoff) {
  const auto statuses = run_workers("locklab-distributedlock", 1, "mutex",
                                    {"--operations", "1", "--backoff", "adaptive"});
  ASSERT_EQ(statuses.size(), 1u);
  EXPECT_EQ(statuses[0].code, 2);
}

}  // namespace
}  // namespace locklab

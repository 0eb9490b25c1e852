// The seed-lock clients as the harness runs them: 2-3 real worker processes of one client on one
// lock, against a real mongosim member (one member, on loopback, the harness's own cluster
// definition), their shared history judged by the real checkers. Where the lock is sound under
// no faults the history must be valid; each client's documented hole that needs no fault
// (DistributedLock.MongoDB's token reset after a clean release; the recipe's hold outliving its
// TTL) must show as the checker's violation.
//
// Model left out: every fault (pauses, partitions, elections, clock skew), more than one lock
// name, worker restarts; the server's TTL pass is 1 s (the harness's setting), not MongoDB's
// 60 s.
#include <gtest/gtest.h>

#include <climits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "checker.h"
#include "cluster.h"
#include "history.h"
#include "process.h"
#include "programs.h"
#include "temp_dir.h"
#include "test_cluster.h"
#include "workload.h"

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

class SeedClientsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!clients_built()) GTEST_SKIP() << "needs mongosim and the seed clients built";
    dir_ = std::make_unique<testing::TempDir>();
    cluster_ =
        std::make_unique<Cluster>(testing::local_cluster_options(dir_->path(), 1), supervisor_);
    cluster_->start();
  }
  void TearDown() override {
    supervisor_.stop_all(1000);
    if (cluster_) cluster_->stop();
  }

  std::string history_path() const { return dir_->file("history.jsonl"); }

  // Runs `workers` processes of `program` to completion with the given workload flags, after a
  // vocabulary-2 start event, and returns each worker's exit status.
  std::vector<ExitStatus> run_workers(const std::string& program, int workers,
                                      const std::string& kind,
                                      const std::vector<std::string>& flags) {
    HistoryWriter(history_path())
        .append({0,
                 "harness",
                 EventType::kInfo,
                 "start",
                 "",
                 std::nullopt,
                 {{"vocabulary", kHistoryVocabulary}, {"workload", kind}}});
    std::vector<pid_t> pids;
    for (int w = 1; w <= workers; ++w) {
      const std::string id = "w" + std::to_string(w);
      SpawnOptions spawn;
      spawn.argv = {std::string(LOCKLAB_BIN_DIR) + "/" + program,
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
                    std::to_string(w)};
      spawn.argv.insert(spawn.argv.end(), flags.begin(), flags.end());
      spawn.log_path = dir_->file(id + ".log");
      pids.push_back(supervisor_.spawn(spawn));
    }
    std::vector<ExitStatus> statuses;
    for (pid_t pid : pids) {
      std::optional<ExitStatus> status = supervisor_.wait_exit(pid, kWorkerExitMs);
      EXPECT_TRUE(status.has_value()) << program << " pid " << pid << " did not finish";
      if (status) statuses.push_back(*status);
    }
    return statuses;
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

  std::unique_ptr<testing::TempDir> dir_;
  Supervisor supervisor_;
  std::unique_ptr<Cluster> cluster_;
};

void expect_all_exited_zero(const std::vector<ExitStatus>& statuses, size_t workers) {
  ASSERT_EQ(statuses.size(), workers);
  for (const ExitStatus& s : statuses) EXPECT_EQ(s.code, 0) << "pid " << s.pid << s.describe();
}

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
  expect_all_exited_zero(statuses, 3);
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
  expect_all_exited_zero(statuses, 2);
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
  expect_all_exited_zero(statuses, 3);
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
  expect_all_exited_zero(statuses, 3);
  append_counter_final();
  const Verdict v = check_history({"exclusion.strict", "counter.no-lost-updates"});
  EXPECT_EQ(v.stats.acquisitions, 18u);
  EXPECT_EQ(outcome_of(v, kExclusionStrict), "valid");
  EXPECT_EQ(outcome_of(v, kCounterNoLostUpdates), "valid");
  expect_acquire_tokens(read_history(history_path()), false);
}

// The recipe's only expiry is the TTL index: a hold of 3.5 s on a 1 s TTL is deleted under its
// holder (the TTL pass runs every second), and the waiting worker takes the lock while the first
// still holds it: strict exclusion must fail.
TEST_F(SeedClientsTest, RecipeHoldLongerThanTtlOverlaps) {
  const auto statuses =
      run_workers("locklab-alistairjevans", 2, "mutex",
                  {"--operations", "2", "--critical-section-ms", "3500", "--expiry-ms", "1000"});
  expect_all_exited_zero(statuses, 2);
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
  expect_all_exited_zero(statuses, 3);
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

// A flag the original has no equivalent for is refused before anything starts.
TEST_F(SeedClientsTest, DistributedLockRefusesAdaptiveBackoff) {
  const auto statuses = run_workers("locklab-distributedlock", 1, "mutex",
                                    {"--operations", "1", "--backoff", "adaptive"});
  ASSERT_EQ(statuses.size(), 1u);
  EXPECT_EQ(statuses[0].code, 2);
}

}  // namespace
}  // namespace locklab

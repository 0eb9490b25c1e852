// The order in which the primary-divergence fault heals: the old primary's clock comes back
// before the partition goes and before the killed member is started again. A backend whose
// restart takes seconds (a container start) must not leave the old primary reconnected to the
// majority with its moved clock meanwhile.
//
// A recording Db stands in for the set (a mock of the database, inside this unit test of one
// fault): it answers hello with the primary it is told, and logs every lever the fault pulls.
// What the model leaves out: elections, replication and rollback (the "new primary" is whatever
// the fake says once the cut is made), timing, and the nemesis's history events.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "checker/history.h"
#include "db/db.h"
#include "nemesis/kinds.h"
#include "run/process.h"
#include "run/workers.h"
#include "temp_dir.h"

namespace locklab {
namespace {

class RecordingPartitions : public Partitions {
 public:
  explicit RecordingPartitions(std::vector<std::string>& log) : log_(log) {}
  void isolate(const std::string& role, IsolationMode) override {
    log_.push_back("isolate " + role);
  }
  void heal(const std::string& role) override { log_.push_back("heal " + role); }
  bool isolated(const std::string&) const override { return false; }
  void cut(const std::vector<Cut>&) override { log_.push_back("cut"); }
  void uncut(const std::vector<Cut>&) override { log_.push_back("uncut"); }
  std::vector<std::string> cut_peers(const std::string&) const override { return {}; }

 private:
  std::vector<std::string>& log_;
};

class RecordingDb : public Db {
 public:
  RecordingDb() : Db(DbConfig{}), partitions_(log) {}
  std::vector<std::string> log;
  int primary_member = 0;

  std::string name() const override { return "recording"; }
  std::string member_program() const override { return "none"; }
  std::optional<std::string> supports(FaultKind) const override { return std::nullopt; }
  void start() override {}
  void stop(int64_t) override {}
  void teardown() override {}
  std::string host(int m) const override { return "m" + std::to_string(m) + ":1"; }
  std::string uri(const std::string&) const override { return "mongodb://m0:1"; }
  std::string worker_netns(const std::string&) const override { return ""; }
  void kill_member(int m) override {
    log.push_back("kill m" + std::to_string(m));
    running_.at(m) = false;
  }
  void restart_member(int m) override {
    log.push_back("restart m" + std::to_string(m));
    running_.at(m) = true;
  }
  void pause_member(int) override {}
  void resume_member(int) override {}
  bool running(int m) const override { return running_.at(m); }
  bool paused(int) const override { return false; }
  int64_t set_clock_offset(int m, int64_t offset_ms) override {
    log.push_back("clock m" + std::to_string(m) + " " + std::to_string(offset_ms));
    return std::exchange(offsets_.at(m), offset_ms);
  }
  int64_t clock_offset(int m) const override { return offsets_.at(m); }
  Partitions* partitions() override { return &partitions_; }
  nlohmann::json try_command(int m, const std::string&,
                             const nlohmann::ordered_json&) const override {
    // Once the old primary is cut off, m1 wins the majority side's election.
    const bool cut = std::find(log.begin(), log.end(), "cut") != log.end();
    const int primary = cut ? 1 : primary_member;
    return {{"ok", 1}, {"isWritablePrimary", running_.at(m) && m == primary}};
  }

 private:
  RecordingPartitions partitions_;
  std::vector<bool> running_ = {true, true, true};
  std::vector<int64_t> offsets_ = {0, 0, 0};
};

size_t position(const std::vector<std::string>& log, const std::string& entry) {
  const auto it = std::find(log.begin(), log.end(), entry);
  return it == log.end() ? log.size() : static_cast<size_t>(it - log.begin());
}

TEST(PrimaryDivergence, HealBringsTheClockBackBeforeTheMajorityIsReachable) {
  testkit::TempDir dir;
  Supervisor supervisor;
  HistoryWriter history(dir.file("history.jsonl"));
  WorkerLaunch launch;
  launch.log_dir = dir.file("workers");
  WorkerPool workers(supervisor, history, launch, 1);  // never started: the fault needs none
  RecordingDb db;
  FaultContext context{db, workers};
  const std::unique_ptr<Fault> fault =
      make_replset_fault(FaultKind::kPrimaryDivergence, "primary", {{"clock_ms", 30000}});
  ASSERT_NE(fault, nullptr);
  fault->begin(context);
  EXPECT_EQ(db.log, (std::vector<std::string>{"cut", "clock m0 30000", "kill m1"}));
  db.log.clear();
  fault->heal(context);
  const size_t clock_back = position(db.log, "clock m0 0");
  ASSERT_LT(clock_back, db.log.size()) << "the old primary's clock did not come back";
  EXPECT_LT(clock_back, position(db.log, "uncut"))
      << "heal order: " << ::testing::PrintToString(db.log);
  EXPECT_LT(clock_back, position(db.log, "restart m1"))
      << "heal order: " << ::testing::PrintToString(db.log);
  EXPECT_LT(position(db.log, "uncut"), db.log.size());
  EXPECT_LT(position(db.log, "restart m1"), db.log.size());
}

}  // namespace
}  // namespace locklab

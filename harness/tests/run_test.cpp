// Pieces of a run that need no cluster: the fault plan and the live progress view.
#include <gtest/gtest.h>

#include <filesystem>

#include "checker/history.h"
#include "nemesis/nemesis.h"
#include "run/progress.h"
#include "run/scenario.h"

namespace locklab {
namespace {

Scenario random_mix_scenario() {
  return parse_scenario(R"(
[workload]
workers = 4
duration_ms = 60000
[nemesis.random]
faults = { "pause-worker" = 1, "kill-worker" = 1, "pause-member" = 1 }
duration_min_ms = 100
duration_max_ms = 2000
[[nemesis.fault]]
at_ms = 500
fault = "isolate-worker"
duration_ms = 100
)",
                        "mix.toml");
}

TEST(FaultPlan, SameSeedSamePlanOtherSeedOtherPlan) {
  const Scenario s = random_mix_scenario();
  auto dump = [&](uint64_t seed) {
    nlohmann::json out = nlohmann::json::array();
    for (const PlannedFault& f : plan_faults(s, 60000, seed)) out.push_back(to_json(f));
    return out.dump();
  };
  EXPECT_EQ(dump(42), dump(42));
  EXPECT_NE(dump(42), dump(43));
}

TEST(FaultPlan, RandomWindowsStayInsideTheRunAndTargetsResolve) {
  const Scenario s = random_mix_scenario();
  const std::vector<PlannedFault> plan = plan_faults(s, 60000, 7);
  ASSERT_GT(plan.size(), 5u);
  for (size_t i = 0; i < plan.size(); ++i) {
    const PlannedFault& f = plan[i];
    EXPECT_LE(f.at_ms + f.duration_ms, 60000);
    if (i > 0) {
      EXPECT_LE(plan[i - 1].at_ms, f.at_ms);
    }
    if (fault_row(f.fault).target != FaultTarget::kWorker) {
      EXPECT_EQ(f.target, "m0");
    } else {
      ASSERT_EQ(f.target[0], 'w') << f.target;
      const int w = std::stoi(f.target.substr(1));
      EXPECT_GE(w, 1);
      EXPECT_LE(w, 4);
    }
  }
  EXPECT_EQ(plan[0].fault, FaultKind::kIsolateWorker);  // the fixed window at 500 ms comes first
}

TEST(Progress, TracksHoldersAndOperations) {
  const std::string path = testing::TempDir() + "/progress_history.jsonl";
  std::filesystem::remove(path);
  HistoryWriter history(path);
  ProgressTracker tracker(path);
  tracker.poll();
  EXPECT_EQ(tracker.current_holder(), "");
  history.append({100, "w1", EventType::kOk, "acquire", "L1", 5, nullptr});
  history.append({200, "w2", EventType::kOk, "acquire", "L2", 6, nullptr});
  tracker.poll();
  EXPECT_EQ(tracker.operations(), 2);
  EXPECT_EQ(tracker.holds(), 2);
  EXPECT_EQ(tracker.current_holder(), "w2");
  history.append({300, "w2", EventType::kOk, "lost", "L2", 6, nullptr});
  history.append({400,
                  "harness",
                  EventType::kInfo,
                  "exit",
                  "",
                  std::nullopt,
                  {{"worker", "w1"}, {"pid", 1}, {"status", "signal 9"}}});
  tracker.poll();
  EXPECT_EQ(tracker.holds(), 0);
  EXPECT_EQ(tracker.current_holder(), "");
  EXPECT_EQ(tracker.line(12345, 1), "12.3s  ops 2  holds 0  faults 1");
}

// The role a fault's target had (recorded with the fault): holder, waiting (acquire pending)
// or idle; a lost-ignored holder still holds.
TEST(Progress, KnowsEachWorkersRole) {
  const std::string path = testing::TempDir() + "/progress_roles.jsonl";
  std::filesystem::remove(path);
  HistoryWriter history(path);
  ProgressTracker tracker(path);
  history.append({100, "w1", EventType::kInvoke, "acquire", "L1", std::nullopt, nullptr});
  history.append({110, "w2", EventType::kInvoke, "acquire", "L1", std::nullopt, nullptr});
  history.append({120, "w1", EventType::kOk, "acquire", "L1", 5, nullptr});
  history.append({130, "w1", EventType::kOk, "lost-ignored", "L1", 5, nullptr});
  tracker.poll();
  EXPECT_EQ(tracker.role("w1"), "holder");
  EXPECT_EQ(tracker.role("w2"), "waiting");
  EXPECT_EQ(tracker.role("w3"), "idle");
  history.append({140, "w1", EventType::kInvoke, "release", "L1", 5, nullptr});
  history.append({150, "w2", EventType::kFail, "acquire", "L1", std::nullopt, nullptr});
  tracker.poll();
  EXPECT_EQ(tracker.role("w1"), "idle");
  EXPECT_EQ(tracker.role("w2"), "idle");
}

// Each planned window says how its target is chosen, so the history can record it.
TEST(FaultPlan, WindowsSayHowTheirTargetIsChosen) {
  const Scenario s = parse_scenario(R"(
[cluster]
members = 3
[workload]
workers = 2
duration_ms = 10000
[[nemesis.fault]]
at_ms = 100
fault = "pause-worker"
target = "holder"
duration_ms = 100
[[nemesis.fault]]
at_ms = 200
fault = "kill-member"
target = "primary"
duration_ms = 100
[[nemesis.fault]]
at_ms = 300
fault = "pause-worker"
target = "random"
duration_ms = 100
[[nemesis.fault]]
at_ms = 400
fault = "pause-worker"
target = "w2"
duration_ms = 100
)",
                                    "selection.toml");
  const std::vector<PlannedFault> plan = plan_faults(s, 10000, 3);
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_EQ(plan[0].selection, "holder");
  EXPECT_EQ(plan[1].selection, "primary");
  EXPECT_EQ(plan[2].selection, "random");
  EXPECT_EQ(plan[3].selection, "fixed");
}

}  // namespace
}  // namespace locklab

// Deterministic simulation of replica sets under faults (the rules: docs/mongodb-behaviour.md,
// Replica sets; the simulator: cluster_sim.h): RapidCheck generates fault schedules, the
// simulator checks safety after every event, and after a heal the set must converge.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cluster_sim.h"

namespace mongosim::repl::sim {
namespace {

enum class FaultKind {
  kIsolate,
  kIsolatePrimary,
  kSplit,
  kRing,
  kBridge,
  kHeal,
  kStepDown,
  kFreeze,
  kPause,
  kLoss,
};

struct Fault {
  FaultKind kind = FaultKind::kHeal;
  int64_t wait_ms = 0;  // simulated time before the fault
  int member = 0;
  uint32_t mask = 0;
  int64_t secs = 0;
  int64_t catch_up_secs = 0;
  bool force = false;
  int64_t pause_ms = 0;
  int loss_percent = 0;
};

std::string describe(const Fault& f) {
  static const char* names[] = {"isolate", "isolate-primary", "split",  "ring",  "bridge",
                                "heal",    "step-down",       "freeze", "pause", "loss"};
  return "+" + std::to_string(f.wait_ms) + "ms " + names[static_cast<int>(f.kind)] + " m" +
         std::to_string(f.member) + " mask=" + std::to_string(f.mask) +
         " secs=" + std::to_string(f.secs) + " force=" + std::to_string(f.force) +
         " pause=" + std::to_string(f.pause_ms) + " loss=" + std::to_string(f.loss_percent);
}

rc::Gen<Fault> gen_fault(int members) {
  return rc::gen::apply(
      [](FaultKind kind, int64_t wait_ms, int member, uint32_t mask, int64_t secs, int64_t catch_up,
         bool force, int64_t pause_ms, int loss) {
        Fault f{kind,  wait_ms,  member, mask, secs, std::min(catch_up, secs - 1),
                force, pause_ms, loss};
        f.catch_up_secs = std::max<int64_t>(0, f.catch_up_secs);
        return f;
      },
      rc::gen::element(FaultKind::kIsolate, FaultKind::kIsolatePrimary, FaultKind::kIsolatePrimary,
                       FaultKind::kSplit, FaultKind::kRing, FaultKind::kBridge, FaultKind::kHeal,
                       FaultKind::kStepDown, FaultKind::kFreeze, FaultKind::kPause,
                       FaultKind::kLoss),
      rc::gen::inRange<int64_t>(0, 25'000), rc::gen::inRange(0, members),
      rc::gen::inRange<uint32_t>(1, (1u << members) - 1), rc::gen::inRange<int64_t>(1, 31),
      rc::gen::inRange<int64_t>(0, 11), rc::gen::arbitrary<bool>(),
      rc::gen::inRange<int64_t>(0, 15'000), rc::gen::inRange(0, 31));
}

struct Outcome {
  std::vector<std::string> safety;
  std::vector<std::string> liveness;
  SimReport report;
};

// Runs a schedule, heals, and checks the set converges within the bound: a frozen or paused
// member may hold things up until its window ends; after that two election rounds (timeout +
// 15% jitter each), heartbeats to spread the term, and time for secondaries to catch up.
Outcome run_schedule(int members, uint64_t seed, const std::vector<Fault>& faults) {
  SimOptions options;
  options.members = members;
  options.seed = seed;
  ClusterSim sim(options);
  sim.run_for(15'000);  // the first election
  int64_t pause_end_ms = 0;
  for (const Fault& f : faults) {
    sim.run_for(f.wait_ms);
    switch (f.kind) {
      case FaultKind::kIsolate:
        sim.isolate(f.member);
        break;
      case FaultKind::kIsolatePrimary:
        sim.isolate(sim.writable_primary() >= 0 ? sim.writable_primary() : f.member);
        break;
      case FaultKind::kSplit:
        sim.split(f.mask);
        break;
      case FaultKind::kRing:
        sim.ring();
        break;
      case FaultKind::kBridge:
        sim.bridge();
        break;
      case FaultKind::kHeal:
        sim.heal();
        break;
      case FaultKind::kStepDown:
        if (sim.writable_primary() >= 0) {
          sim.step_down(sim.writable_primary(), StepDownRequest{f.secs, f.catch_up_secs, f.force});
        }
        break;
      case FaultKind::kFreeze:
        sim.freeze(f.member, f.secs);
        break;
      case FaultKind::kPause:
        sim.pause(f.member, f.pause_ms);
        pause_end_ms = std::max(pause_end_ms, sim.now_ms() + f.pause_ms);
        break;
      case FaultKind::kLoss:
        sim.set_loss_percent(f.loss_percent);
        break;
    }
  }
  sim.heal();
  sim.set_loss_percent(0);
  int64_t quiet_from = std::max({sim.now_ms(), sim.latest_freeze_end_ms(), pause_end_ms});
  int64_t bound_ms = (quiet_from - sim.now_ms()) + 2 * 11'500 + 3 * 2'000 + 5'000;
  sim.run_for(bound_ms);
  Outcome out;
  if (sim.writable_primary() < 0)
    out.liveness.push_back("no single writable primary within the bound");
  sim.stop_writes(true);
  sim.run_for(5'000);  // let secondaries fetch the last writes
  auto problems = sim.convergence_problems();
  out.liveness.insert(out.liveness.end(), problems.begin(), problems.end());
  out.safety = sim.report().violations;
  out.report = sim.report();
  return out;
}

void check_schedule(int members) {
  auto faults =
      *rc::gen::container<std::vector<Fault>>(*rc::gen::inRange<size_t>(1, 9), gen_fault(members));
  auto seed = *rc::gen::inRange<uint64_t>(1, 1'000'000);
  for (const Fault& f : faults) RC_LOG() << describe(f) << "\n";
  Outcome out = run_schedule(members, seed, faults);
  for (const auto& v : out.safety) RC_LOG() << "safety: " << v << "\n";
  for (const auto& v : out.liveness) RC_LOG() << "liveness: " << v << "\n";
  RC_ASSERT(out.safety.empty());
  RC_ASSERT(out.liveness.empty());
  for (int64_t id : out.report.rolled_back) RC_ASSERT(!out.report.majority_acked.count(id));
}

RC_GTEST_PROP(ReplSimulation, ThreeMembersStaySafeAndConvergeAfterAnyFaults, ()) {
  check_schedule(3);
}

RC_GTEST_PROP(ReplSimulation, FiveMembersStaySafeAndConvergeAfterAnyFaults, ()) {
  check_schedule(5);
}

TEST(ReplSimulation, QuietSetElectsOneWritablePrimaryAndReplicates) {
  ClusterSim sim(SimOptions{});
  sim.run_for(30'000);
  ASSERT_GE(sim.writable_primary(), 0);
  sim.stop_writes(true);
  sim.run_for(2'000);
  EXPECT_TRUE(sim.convergence_problems().empty());
  EXPECT_TRUE(sim.report().violations.empty());
  EXPECT_EQ(sim.report().elections_won, 1);
  EXPECT_GT(sim.report().majority_acked.size(), 10u);
  EXPECT_EQ(sim.report().rollbacks, 0);
}

// An isolated primary keeps taking w:1 writes until it notices it lost the majority; those writes
// are rolled back when it rejoins, while majority-acknowledged writes survive
// (docs/mongodb-behaviour.md: Losing the majority; Oplog and rollback).
TEST(ReplSimulation, IsolatedPrimaryRollsBackItsUnreplicatedWrites) {
  ClusterSim sim(SimOptions{.members = 3, .seed = 7});
  sim.run_for(20'000);
  int old_primary = sim.writable_primary();
  ASSERT_GE(old_primary, 0);
  sim.isolate(old_primary);
  sim.run_for(30'000);
  int new_primary = sim.writable_primary();
  ASSERT_GE(new_primary, 0);
  EXPECT_NE(new_primary, old_primary);
  EXPECT_GT(sim.topology(new_primary).term(), sim.report().primary_of_term.begin()->first);
  sim.heal();
  sim.run_for(20'000);
  sim.stop_writes(true);
  sim.run_for(5'000);
  EXPECT_TRUE(sim.convergence_problems().empty());
  EXPECT_TRUE(sim.report().violations.empty());
  EXPECT_GE(sim.report().rollbacks, 1);
  EXPECT_FALSE(sim.report().rolled_back.empty());
  for (int64_t id : sim.report().rolled_back) EXPECT_FALSE(sim.report().majority_acked.count(id));
}

// The campaign must actually exercise rollback, or the "majority writes survive" property
// above could pass vacuously.
TEST(ReplSimulation, FixedSeedCampaignProducesRollbacksAndNoViolations) {
  int rollbacks = 0;
  size_t rolled_back_writes = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    std::vector<Fault> faults{
        Fault{.kind = FaultKind::kIsolatePrimary, .wait_ms = static_cast<int64_t>(seed) * 1000},
        Fault{.kind = FaultKind::kHeal, .wait_ms = 25'000},
        Fault{.kind = FaultKind::kSplit,
              .wait_ms = 5'000,
              .mask = static_cast<uint32_t>(seed % 7 + 1)},
        Fault{.kind = FaultKind::kHeal, .wait_ms = 20'000},
    };
    Outcome out = run_schedule(seed % 2 ? 3 : 5, seed, faults);
    EXPECT_TRUE(out.safety.empty()) << "seed " << seed << ": " << out.safety.front();
    EXPECT_TRUE(out.liveness.empty()) << "seed " << seed << ": " << out.liveness.front();
    rollbacks += out.report.rollbacks;
    rolled_back_writes += out.report.rolled_back.size();
  }
  EXPECT_GT(rollbacks, 0);
  EXPECT_GT(rolled_back_writes, 0u);
}

// Regression for a safety bug the random campaign found (first with a 5-member ring; this is
// the shortest schedule it shrank to). While the primary of the old term still took writes, a
// member that had voted for the new term's candidate kept fetching from it and reporting
// entries the candidate did not have; the old primary counted those reports towards its commit
// point and acknowledged w:"majority" writes that the new primary's term then rolled back. The
// fetch now carries the member's term, and the old primary steps down on it instead.
TEST(ReplSimulation, VoterOfANewTermCannotHelpTheOldPrimaryCommit) {
  std::vector<Fault> faults{
      Fault{.kind = FaultKind::kBridge, .wait_ms = 0},
      Fault{.kind = FaultKind::kStepDown, .wait_ms = 9671, .secs = 1, .catch_up_secs = 0},
  };
  Outcome out = run_schedule(3, 1, faults);
  EXPECT_TRUE(out.safety.empty()) << out.safety.front();
  EXPECT_TRUE(out.liveness.empty()) << out.liveness.front();
  // The schedule still reaches the situation: primaries of two terms, the old one's tail undone.
  EXPECT_GE(out.report.primary_of_term.size(), 2u);
  EXPECT_GE(out.report.rollbacks, 1);
  EXPECT_FALSE(out.report.rolled_back.empty());
}

}  // namespace
}  // namespace mongosim::repl::sim

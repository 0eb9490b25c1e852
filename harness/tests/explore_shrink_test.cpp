// Shrinking on a fake runner whose failure condition is known: "fails iff the primary is cut off
// (isolate-member of the primary) and there are at least 2 workers". The shrunk scenario must be
// exactly the minimal one; with a runner that fails only on a candidate's third run, K = 3 reruns
// must still reach it and K = 1 must not move; the confirmation count must be what the fake gave.
// What the fake leaves out: real runs (timing, the cluster); that is the explore.* ctest runs.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>

#include "explore/generators.h"
#include "explore/scenario_writer.h"
#include "explore/shrink.h"

namespace locklab {
namespace {

Scenario big_failing_scenario() {
  return parse_scenario(R"(
[cluster]
members = 5
election_timeout_ms = 800
[lock]
expiry_ms = 1000
write_concern = 1
[workload]
kind = "fenced"
workers = 5
locks = 2
duration_ms = 6000
[nemesis]
quiet_ms = 3000
[[nemesis.fault]]
fault = "pause-worker"
target = "w5"
at_ms = 500
duration_ms = 1000
[[nemesis.fault]]
fault = "isolate-member"
target = "primary"
at_ms = 1500
duration_ms = 2000
[[nemesis.fault]]
fault = "kill-member"
target = "m4"
at_ms = 3000
duration_ms = 1000
[[nemesis.fault]]
fault = "step-down"
at_ms = 4000
duration_ms = 1500
)",
                        "big.toml");
}

bool cuts_off_primary(const Scenario& s) {
  for (const FaultSpec& f : s.nemesis.schedule) {
    if (f.fault == FaultKind::kIsolateMember && f.target == "primary") return true;
  }
  return false;
}

bool condition(const Scenario& s) {
  return cuts_off_primary(s) && s.workload.workers >= 2;
}

CaseOutcome outcome_of(bool failed) {
  CaseOutcome o;
  o.verdict = failed ? CaseVerdict::kInvalid : CaseVerdict::kValid;
  if (failed) o.violated = {"exclusion.fenced"};
  return o;
}

// The fake: fails iff the condition holds and this scenario has already been run `first_fail`
// times (0: every run of it fails).
struct FakeRunner {
  int first_fail = 0;
  std::map<std::string, int> runs;  // by the scenario's JSON
  int total = 0;
  CaseOutcome operator()(const Scenario& s, uint64_t, const std::string&) {
    ++total;
    const int n = runs[to_json(s).dump()]++;
    return outcome_of(condition(s) && n >= first_fail);
  }
};

void expect_minimal(const Scenario& s) {
  ASSERT_EQ(s.nemesis.schedule.size(), 1u);
  const FaultSpec& f = s.nemesis.schedule[0];
  EXPECT_EQ(f.fault, FaultKind::kIsolateMember);
  EXPECT_EQ(f.target, "primary");
  EXPECT_EQ(f.at_ms, 1500);  // starts are kept
  EXPECT_EQ(f.duration_ms, kExploreMinFaultMs);
  EXPECT_EQ(s.workload.workers, 2);
  EXPECT_EQ(s.cluster.members, 3);  // isolate-member needs 3
  EXPECT_EQ(s.workload.locks, 1);
  EXPECT_EQ(s.workload.duration_ms, kExploreMinRunMs);
}

TEST(ExploreShrink, DeterministicFakeShrinksToExactlyTheMinimalScenario) {
  const Scenario start = big_failing_scenario();
  FakeRunner fake;
  ShrinkOptions o;
  o.reruns = 1;
  o.confirm_runs = 4;
  const ShrinkResult r = shrink(
      start, outcome_of(true), 1,
      [&](const Scenario& s, uint64_t seed, const std::string& d) { return fake(s, seed, d); }, o);
  expect_minimal(r.minimal);
  EXPECT_TRUE(r.complete);
  EXPECT_GT(r.steps, 10);
  EXPECT_EQ(r.confirm_failed, 4);
  EXPECT_EQ(r.confirm_runs, 4);
  EXPECT_EQ(fake.total, r.runs + r.confirm_runs);
}

TEST(ExploreShrink, FailingOnlyOnTheThirdRunNeedsThreeReruns) {
  const Scenario start = big_failing_scenario();
  ShrinkOptions o;
  o.confirm_runs = 5;
  FakeRunner three;
  three.first_fail = 2;
  o.reruns = 3;
  const ShrinkResult r = shrink(
      start, outcome_of(true), 1,
      [&](const Scenario& s, uint64_t seed, const std::string& d) { return three(s, seed, d); }, o);
  expect_minimal(r.minimal);
  // The minimal scenario already ran 3 times while shrinking: every confirmation run fails.
  EXPECT_EQ(r.confirm_failed, 5);

  FakeRunner one;
  one.first_fail = 2;
  o.reruns = 1;
  const ShrinkResult r1 = shrink(
      start, outcome_of(true), 1,
      [&](const Scenario& s, uint64_t seed, const std::string& d) { return one(s, seed, d); }, o);
  EXPECT_EQ(r1.steps, 0);  // no candidate failed in its one run
  EXPECT_EQ(to_json(r1.minimal), to_json(start));
  // The original had never run in the fake: its first two confirmation runs pass.
  EXPECT_EQ(r1.confirm_failed, 3);
  EXPECT_EQ(r1.confirm_runs, 5);
}

TEST(ExploreShrink, ADifferentFindingDoesNotCountAsFailing) {
  const Scenario start = big_failing_scenario();
  ShrinkOptions o;
  o.reruns = 2;
  o.confirm_runs = 2;
  // Candidates without the primary's isolation fail too, but of another property.
  const auto runner = [](const Scenario& s, uint64_t, const std::string&) {
    CaseOutcome out = outcome_of(true);
    if (!condition(s)) out.violated = {"liveness.recovery"};
    return out;
  };
  const ShrinkResult r = shrink(start, outcome_of(true), 1, runner, o);
  expect_minimal(r.minimal);
}

TEST(ExploreShrink, BudgetAndStopEndTheSearchEarlyAndSaySo) {
  const Scenario start = big_failing_scenario();
  ShrinkOptions o;
  o.max_steps = 3;
  o.confirm_runs = 1;
  FakeRunner fake;
  const ShrinkResult r = shrink(
      start, outcome_of(true), 1,
      [&](const Scenario& s, uint64_t seed, const std::string& d) { return fake(s, seed, d); }, o);
  EXPECT_EQ(r.steps, 3);
  EXPECT_FALSE(r.complete);
  ShrinkOptions stopped;
  stopped.stop = [] { return true; };
  const ShrinkResult s = shrink(
      start, outcome_of(true), 1,
      [&](const Scenario& c, uint64_t seed, const std::string& d) { return fake(c, seed, d); },
      stopped);
  EXPECT_EQ(s.steps, 0);
  EXPECT_EQ(s.confirm_runs, 0);
  EXPECT_FALSE(s.complete);
}

// Every candidate of every generated scenario is valid (it parsed) and strictly smaller.
RC_GTEST_PROP(ExploreShrink, CandidatesAreValidAndSmaller, ()) {
  const ExploreSpace space = make_space(
      {}, [](FaultKind) { return std::string(); },
      [](const std::string&) { return std::string(); });
  const Scenario s = *scenario_gen(space);
  for (const Scenario& c : shrink_candidates(s)) {
    RC_ASSERT(size_of(c) < size_of(s));
    RC_ASSERT(to_json(parse_scenario(scenario_to_toml(c), "c.toml")) == to_json(c));
  }
}

}  // namespace
}  // namespace locklab

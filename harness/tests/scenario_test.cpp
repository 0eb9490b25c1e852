// Scenario parsing: defaults, every section, and errors that name file, line and key.
#include "scenario.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace locklab {
namespace {

std::string error_of(std::string_view text) {
  try {
    parse_scenario(text, "s.toml");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(Scenario, MinimalFileGetsDefaults) {
  Scenario s = parse_scenario("[workload]\nduration_ms = 1000\n", "dir/minimal.toml");
  EXPECT_EQ(s.name, "minimal");
  EXPECT_EQ(s.expect, Expect::kValid);
  EXPECT_EQ(s.tier, Tier::kQuick);
  EXPECT_EQ(s.cluster.members, 1);
  EXPECT_EQ(s.lock.write_concern_w, 0);
  EXPECT_TRUE(s.lock.fencing);
  EXPECT_EQ(s.workload.kind, WorkloadKind::kMutex);
  EXPECT_EQ(s.workload.duration_ms, 1000);
  EXPECT_TRUE(s.nemesis.schedule.empty());
  EXPECT_FALSE(s.nemesis.random.has_value());
}

TEST(Scenario, FullFileParses) {
  Scenario s = parse_scenario(R"(
name = "pause"
tier = "long"
expect = "invalid"
expect_violated = ["exclusion.strict"]
expect_holding = ["exclusion.fenced"]
[cluster]
backend = "loopback"
election_timeout_ms = 1500
[lock]
expiry_ms = 1000
extension_cadence_ms = 300
backoff = "adaptive"
busy_wait_min_ms = 5
busy_wait_max_ms = 50
write_concern = 1
fencing = false
[workload]
kind = "fenced"
workers = 4
locks = 2
critical_section_ms = 20
duration_ms = 10000
[nemesis]
quiet_ms = 2000
[[nemesis.fault]]
at_ms = 1000
fault = "fail-command"
target = "w2"
duration_ms = 500
mode = "block"
block_ms = 3000
commands = ["findAndModify", "update"]
[[nemesis.fault]]
at_ms = 3000
fault = "pause-member"
duration_ms = 500
[check]
properties = ["tokens.unique", "exclusion.fenced"]
liveness_bound_ms = 9000
)",
                              "p.toml");
  EXPECT_EQ(s.name, "pause");
  EXPECT_EQ(s.tier, Tier::kLong);
  EXPECT_EQ(s.expect, Expect::kInvalid);
  EXPECT_EQ(s.expect_violated, std::vector<std::string>{"exclusion.strict"});
  EXPECT_EQ(s.cluster.backend, "loopback");
  EXPECT_EQ(s.lock.backoff, Backoff::kAdaptive);
  EXPECT_EQ(s.lock.write_concern_w, 1);
  EXPECT_FALSE(s.lock.fencing);
  EXPECT_EQ(s.workload.kind, WorkloadKind::kFenced);
  EXPECT_EQ(s.workload.locks, 2);
  ASSERT_EQ(s.nemesis.schedule.size(), 2u);
  EXPECT_EQ(s.nemesis.schedule[0].params["mode"], "block");
  EXPECT_EQ(s.nemesis.schedule[0].params["block_ms"], 3000);
  EXPECT_EQ(s.nemesis.schedule[0].line, 26);
  EXPECT_EQ(s.nemesis.schedule[1].target, "m0");
  EXPECT_EQ(s.check.liveness_bound_ms, 9000);
  EXPECT_EQ(to_json(s)["lock"]["write_concern"], 1);
}

TEST(Scenario, RandomMixParses) {
  Scenario s = parse_scenario(R"(
[workload]
duration_ms = 20000
[nemesis.random]
faults = { "pause-worker" = 2, "isolate-worker" = 0.5 }
target = "holder"
duration_max_ms = 4000
)",
                              "r.toml");
  ASSERT_TRUE(s.nemesis.random.has_value());
  EXPECT_DOUBLE_EQ(s.nemesis.random->weights.at("pause-worker"), 2.0);
  EXPECT_EQ(s.nemesis.random->target, "holder");
}

TEST(Scenario, UnknownKeyNamesFileLineAndKey) {
  EXPECT_EQ(error_of("[workload]\nduration_ms = 1\nworkerz = 3\n"),
            "s.toml:3: workload.workerz: unknown key");
  EXPECT_EQ(error_of("colour = 1\n[workload]\nduration_ms = 1\n"), "s.toml:1: colour: unknown key");
}

TEST(Scenario, BadValuesAreNamed) {
  EXPECT_EQ(error_of("[workload]\nduration_ms = 1\nworkers = 0\n"),
            "s.toml:3: workload.workers: must be in [1, 64], got 0");
  EXPECT_EQ(error_of("[workload]\nduration_ms = 1\nkind = \"queue\"\n"),
            "s.toml:3: workload.kind: must be one of \"mutex\", \"fenced\", \"counter\", got "
            "\"queue\"");
  EXPECT_EQ(error_of("[workload]\nduration_ms = 1\n[lock]\nwrite_concern = \"all\"\n"),
            "s.toml:4: lock.write_concern: must be \"majority\" or 1..7");
  EXPECT_EQ(error_of("[workload]\nduration_ms = \"long\"\n"),
            "s.toml:2: workload.duration_ms: expected an integer");
}

TEST(Scenario, WorkloadNeedsExactlyOneBound) {
  EXPECT_NE(error_of("[workload]\nworkers = 2\n").find("set exactly one"), std::string::npos);
  EXPECT_NE(error_of("[workload]\nduration_ms = 5\noperations = 5\n").find("set exactly one"),
            std::string::npos);
}

TEST(Scenario, FaultErrors) {
  const std::string head = "[workload]\nduration_ms = 10000\nworkers = 2\n";
  EXPECT_EQ(error_of(head + "[[nemesis.fault]]\nfault = \"flood\"\nduration_ms = 5\n"),
            "s.toml:5: nemesis.fault.fault: unknown fault \"flood\" (known: fail-command, "
            "isolate-worker, kill-worker, pause-member, pause-worker)");
  EXPECT_EQ(error_of(head + "[[nemesis.fault]]\nfault = \"pause-worker\"\ntarget = \"w3\"\n"
                            "duration_ms = 5\n"),
            "s.toml:6: nemesis.fault.target: \"w3\" is not a worker (w1.., holder) of this "
            "scenario, nor \"random\"");
  EXPECT_EQ(error_of(head + "[[nemesis.fault]]\nfault = \"pause-worker\"\nduration_ms = 5\n"
                            "mode = \"drop\"\n"),
            "s.toml:7: nemesis.fault.mode: unknown key");
  EXPECT_EQ(error_of(head + "[[nemesis.fault]]\nfault = \"isolate-worker\"\nduration_ms = 5\n"
                            "mode = \"cut\"\n"),
            "s.toml:7: nemesis.fault.mode: must be one of \"drop\", \"reject\"");
  EXPECT_EQ(error_of(head + "[[nemesis.fault]]\nat_ms = 9000\nfault = \"pause-worker\"\n"
                            "duration_ms = 5000\n"),
            "s.toml:4: nemesis.fault: window ends after workload.duration_ms");
}

TEST(Scenario, ExpectationErrors) {
  EXPECT_EQ(error_of("expect = \"invalid\"\n[workload]\nduration_ms = 1\n"),
            "s.toml:1: expect_violated: expect = \"invalid\" must name the properties that "
            "must be violated");
  EXPECT_EQ(error_of("expect = \"invalid\"\nexpect_violated = [\"exclusion\"]\n"
                     "[workload]\nduration_ms = 1\n"),
            "s.toml:2: expect_violated: unknown property \"exclusion\"");
}

TEST(Scenario, SyntaxErrorNamesLine) {
  EXPECT_EQ(error_of("[workload]\nduration_ms = = 1\n").rfind("s.toml:2: syntax:", 0), 0u);
}

TEST(Scenario, MissingFileIsAnError) {
  EXPECT_THROW(load_scenario("/nonexistent/x.toml"), ScenarioError);
}

// Every scenario shipped in scenarios/ must load.
TEST(Scenario, LibraryLoads) {
  const std::filesystem::path dir = std::filesystem::path(LOCKLAB_SOURCE_DIR) / "scenarios";
  int count = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".toml") continue;
    SCOPED_TRACE(entry.path().string());
    EXPECT_NO_THROW(load_scenario(entry.path().string()));
    ++count;
  }
  EXPECT_GT(count, 0);
}

}  // namespace
}  // namespace locklab

// Scenario parsing: defaults, every section, and errors that name file, line and key.
#include "run/scenario.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "run/run.h"

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
  EXPECT_DOUBLE_EQ(s.nemesis.random->weights.at(FaultKind::kPauseWorker), 2.0);
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
            "s.toml:3: workload.kind: must be one of \"mutex\", \"fenced\", \"counter\", "
            "\"rw\", got \"queue\"");
  EXPECT_EQ(error_of("[workload]\nduration_ms = 1\nkind = \"rw\"\nread_percent = 101\n"),
            "s.toml:4: workload.read_percent: must be in [0, 100], got 101");
  EXPECT_EQ(error_of("[workload]\nduration_ms = 1\n[lock]\nmax_shared = -1\n"),
            "s.toml:4: lock.max_shared: must be in [0, 100000], got -1");
  EXPECT_EQ(error_of("[workload]\nduration_ms = 1\n[lock]\nwrite_concern = \"all\"\n"),
            "s.toml:4: lock.write_concern: must be \"majority\" or 1..7");
  EXPECT_EQ(error_of("[workload]\nduration_ms = \"long\"\n"),
            "s.toml:2: workload.duration_ms: expected an integer");
}

TEST(Scenario, CommandDelayNeedsASocketTimeoutBelowTheDelay) {
  const std::string fault =
      "[workload]\nduration_ms = 5000\n[[nemesis.fault]]\nat_ms = 1\nfault = "
      "\"command-delay\"\ntarget = \"w1\"\nduration_ms = 100\ndelay_ms = 500\n";
  EXPECT_EQ(error_of(fault),
            "s.toml:3: nemesis.fault.delay_ms: command-delay needs lock.socket_timeout_ms set and "
            "below delay_ms");
  EXPECT_NE(error_of("[lock]\nsocket_timeout_ms = 500\n" + fault).find("below delay_ms"),
            std::string::npos);
  EXPECT_EQ(error_of("[lock]\nsocket_timeout_ms = 300\n" + fault), "");
}

TEST(Scenario, WorkerClockFaultsNeedTheirOffsetAndAWorkerTarget) {
  const std::string head = "[workload]\nduration_ms = 5000\n[[nemesis.fault]]\nat_ms = 1\n";
  EXPECT_NE(error_of(head + "fault = \"clock-skew-worker\"\nduration_ms = 100\n").find("offset_ms"),
            std::string::npos);
  EXPECT_NE(error_of(head + "fault = \"clock-jump-worker\"\ntarget = \"m0\"\nduration_ms = "
                            "100\njump_ms = 5\n")
                .find("not a worker"),
            std::string::npos);
  EXPECT_EQ(error_of(head + "fault = \"clock-jump-worker\"\ntarget = \"w1\"\nduration_ms = "
                            "100\njump_ms = -5\n"),
            "");
}

TEST(Scenario, WorkloadNeedsExactlyOneBound) {
  EXPECT_NE(error_of("[workload]\nworkers = 2\n").find("set exactly one"), std::string::npos);
  EXPECT_NE(error_of("[workload]\nduration_ms = 5\noperations = 5\n").find("set exactly one"),
            std::string::npos);
}

TEST(Scenario, FaultErrors) {
  const std::string head = "[workload]\nduration_ms = 10000\nworkers = 2\n";
  EXPECT_EQ(error_of(head + "[[nemesis.fault]]\nfault = \"flood\"\nduration_ms = 5\n"),
            "s.toml:5: nemesis.fault.fault: unknown fault \"flood\" (known: clock-jump, "
            "clock-jump-worker, clock-skew, clock-skew-worker, command-delay, fail-command, "
            "freeze, isolate-member, isolate-worker, kill-member, "
            "kill-worker, partition-bridge, partition-halves, partition-ring, partition-worker, "
            "pause-member, pause-worker, primary-divergence, reply-delay, step-down)");
  EXPECT_EQ(error_of(head + "[[nemesis.fault]]\nfault = \"pause-worker\"\ntarget = \"w3\"\n"
                            "duration_ms = 5\n"),
            "s.toml:6: nemesis.fault.target: \"w3\" is not a worker (w1.., holder) of this "
            "scenario, nor \"random\"");
  // A worker number past int's range is named like any other bad target (it used to escape the
  // parser as std::out_of_range from stoi).
  EXPECT_EQ(error_of(head + "[[nemesis.fault]]\nfault = \"pause-worker\"\n"
                            "target = \"w99999999999\"\nduration_ms = 5\n"),
            "s.toml:6: nemesis.fault.target: \"w99999999999\" is not a worker (w1.., holder) of "
            "this scenario, nor \"random\"");
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

// The replica-set faults: targets, their own keys and the set sizes they need, each error
// naming file, line and key.
TEST(Scenario, ReplicaSetFaultErrors) {
  const std::string three = "[cluster]\nmembers = 3\n[workload]\nduration_ms = 10000\n";
  auto fault = [&](const std::string& body) {
    return error_of(three + "[[nemesis.fault]]\nduration_ms = 5\n" + body);
  };
  EXPECT_EQ(fault("fault = \"step-down\"\ncadence_ms = -1\n"),
            "s.toml:8: nemesis.fault.cadence_ms: must be an integer in [0, 600000]");
  EXPECT_EQ(fault("fault = \"step-down\"\nstep_down_secs = 1\n"),
            "s.toml:8: nemesis.fault.step_down_secs: must be an integer in [2, 3600]");
  EXPECT_EQ(fault("fault = \"step-down\"\nforce = \"yes\"\n"),
            "s.toml:8: nemesis.fault.force: expected true or false");
  EXPECT_EQ(fault("fault = \"step-down\"\ntarget = \"m1\"\n"),
            "s.toml:8: nemesis.fault.target: \"m1\": step-down acts on the whole set; its target "
            "can only be \"primary\"");
  EXPECT_EQ(fault("fault = \"clock-skew\"\ntarget = \"primary\"\n"),
            "s.toml:5: nemesis.fault.offset_ms: required (milliseconds, non-zero, at most "
            "86400000 either way)");
  EXPECT_EQ(fault("fault = \"clock-skew\"\noffset_ms = 0\n"),
            "s.toml:8: nemesis.fault.offset_ms: must not be 0");
  EXPECT_EQ(fault("fault = \"clock-jump\"\njump_ms = 90000000\n"),
            "s.toml:8: nemesis.fault.jump_ms: must be an integer in [-86400000, 86400000]");
  EXPECT_EQ(fault("fault = \"kill-member\"\ntarget = \"m3\"\n"),
            "s.toml:8: nemesis.fault.target: \"m3\" is not a member (m0..) of this scenario, nor "
            "\"random\", \"primary\" or \"secondaries\"");
  EXPECT_EQ(fault("fault = \"kill-member\"\nrestart = 1\n"),
            "s.toml:8: nemesis.fault.restart: expected true or false");
  EXPECT_EQ(fault("fault = \"isolate-member\"\nfrom = \"workers\"\n"),
            "s.toml:8: nemesis.fault.from: must be one of \"members\", \"everyone\"");
  EXPECT_EQ(fault("fault = \"partition-worker\"\ntarget = \"primary\"\n"),
            "s.toml:8: nemesis.fault.target: \"primary\" is not a worker (w1.., holder) of this "
            "scenario, nor \"random\"");
  EXPECT_EQ(fault("fault = \"partition-worker\"\nmembers = \"m1\"\n"),
            "s.toml:8: nemesis.fault.members: must be one of \"primary\", \"secondaries\", "
            "\"all\"");
  EXPECT_EQ(fault("fault = \"partition-ring\"\n"),
            "s.toml:7: nemesis.fault.fault: partition-ring needs cluster.members >= 5 (the "
            "scenario has 3)");
  EXPECT_EQ(fault("fault = \"primary-divergence\"\nclock_ms = \"fast\"\n"),
            "s.toml:8: nemesis.fault.clock_ms: must be an integer in [-86400000, 86400000]");
  EXPECT_EQ(error_of("[workload]\nduration_ms = 10000\n[[nemesis.fault]]\nduration_ms = 5\n"
                     "fault = \"step-down\"\n"),
            "s.toml:5: nemesis.fault.fault: step-down needs cluster.members >= 3 (the scenario "
            "has 1)");
  EXPECT_EQ(error_of("[cluster]\nmembers = 8\n[workload]\nduration_ms = 1\n"),
            "s.toml:2: cluster.members: must be in [1, 7], got 8");
  EXPECT_EQ(error_of(three + "[nemesis.random]\nfaults = { \"clock-skew\" = 1 }\n"),
            "s.toml:6: nemesis.random.faults.clock-skew: offset_ms: required (milliseconds, "
            "non-zero, at most 86400000 either way)");
}

TEST(Scenario, ReplicaSetFaultsParse) {
  const Scenario s = parse_scenario(
      "[cluster]\nmembers = 5\nelection_timeout_ms = 1000\n[workload]\nduration_ms = 10000\n"
      "[[nemesis.fault]]\nfault = \"step-down\"\nduration_ms = 4000\ncadence_ms = 1500\n"
      "[[nemesis.fault]]\nfault = \"freeze\"\nduration_ms = 100\n"
      "[[nemesis.fault]]\nfault = \"clock-skew\"\ntarget = \"primary\"\noffset_ms = -5000\n"
      "duration_ms = 100\n",
      "s.toml");
  EXPECT_EQ(s.cluster.members, 5);
  ASSERT_EQ(s.nemesis.schedule.size(), 3u);
  EXPECT_EQ(s.nemesis.schedule[0].target, "primary");
  EXPECT_EQ(s.nemesis.schedule[0].params["cadence_ms"], 1500);
  EXPECT_EQ(s.nemesis.schedule[1].target, "secondaries");
  EXPECT_EQ(s.nemesis.schedule[2].params["offset_ms"], -5000);
}

TEST(Scenario, ExpectationErrors) {
  EXPECT_EQ(error_of("expect = \"invalid\"\n[workload]\nduration_ms = 1\n"),
            "s.toml:1: expect_violated: expect = \"invalid\" must name the properties that "
            "must be violated");
  EXPECT_EQ(error_of("expect = \"invalid\"\nexpect_violated = [\"exclusion\"]\n"
                     "[workload]\nduration_ms = 1\n"),
            "s.toml:2: expect_violated: unknown property \"exclusion\"");
}

std::string override_error(std::vector<std::string> overrides) {
  try {
    parse_scenario("[workload]\nduration_ms = 1000\n", "s.toml", overrides);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(Scenario, SetOverridesAKeyOrAddsItAndItsTable) {
  const std::string text = "[lock]\nbackoff = \"adaptive\"\n[workload]\nduration_ms = 1000\n";
  EXPECT_EQ(parse_scenario(text, "s.toml", {"lock.backoff=notify"}).lock.backoff, Backoff::kNotify);
  Scenario s =
      parse_scenario("[workload]\nduration_ms = 1000\n", "s.toml",
                     {"lock.expiry_ms=4000", "cluster.members=3", "lock.backoff=\"notify\""});
  EXPECT_EQ(s.lock.expiry_ms, 4000);
  EXPECT_EQ(s.cluster.members, 3);
  EXPECT_EQ(s.lock.backoff, Backoff::kNotify);
}

TEST(Scenario, ABadSetIsNamed) {
  EXPECT_EQ(override_error({"lock.backoff"}),
            "s.toml: --set lock.backoff: expected TABLE.KEY=VALUE");
  EXPECT_EQ(override_error({"workload.duration_ms.x=1"}),
            "s.toml: --set workload.duration_ms.x=1: \"duration_ms\" is not a table");
  // A key a --set wrote has no line in the file: the --set is named instead of line 0.
  EXPECT_EQ(override_error({"lock.backof=notify"})
                .rfind("s.toml: --set lock.backof=notify: unknown key", 0),
            0u)
      << override_error({"lock.backof=notify"});
  // A table a --set added is named by the error: still the --set.
  EXPECT_EQ(override_error({"nosuch.key=1"}), "s.toml: --set nosuch.key=1: unknown key")
      << override_error({"nosuch.key=1"});
  EXPECT_EQ(override_error({"lock.backoff=fast"})
                .rfind("s.toml: --set lock.backoff=fast: must be one of", 0),
            0u)
      << override_error({"lock.backoff=fast"});
}

// The derived liveness bound counts the lease the client grants: npm rounds its ttl up to whole
// seconds, so an expiry of 1172 ms is a 2 s lease there and stays 1172 ms for mongolock.
TEST(Scenario, TheDerivedLivenessBoundCountsTheLeaseTheClientGrants) {
  const std::string body =
      "[lock]\nexpiry_ms = 1172\nbusy_wait_max_ms = 100\n[cluster]\nelection_timeout_ms = "
      "1000\n[workload]\nkind = \"mutex\"\ncritical_section_ms = 50\nduration_ms = 1000\n";
  const Scenario own = parse_scenario(body, "s.toml");
  EXPECT_EQ(check_config(own).liveness_bound_ns, (1172 + 1000 + 100 + 50) * int64_t{1'000'000});
  const Scenario npm =
      parse_scenario(body + "client = \"npm-distributed-locks-mongodb\"\n", "s.toml");
  EXPECT_EQ(check_config(npm).liveness_bound_ns, (2000 + 1000 + 100 + 50) * int64_t{1'000'000});
}

// mongolock.h "Liveness under a clock that is off": a member clock moved by d lets a hold last
// up to d longer or end up to d early. check_config names the fault kinds that move member
// clocks (the checkers widen the liveness bound and the lease skew where they judge, by the
// moves of those begun by then: checker tests), not a worker's clock fault; its bounds stay the
// base ones, and widest_liveness_bound_ns (what explore's quiet phase outlasts) adds every move.
TEST(Scenario, MemberClockFaultsAreNamedForTheCheckers) {
  const std::string base =
      "[cluster]\nmembers = 3\nelection_timeout_ms = 1000\n[lock]\nexpiry_ms = 2000\n"
      "busy_wait_max_ms = 100\n[workload]\nkind = \"fenced\"\ncritical_section_ms = 100\n"
      "duration_ms = 7500\n";
  const CheckConfig plain = check_config(parse_scenario(base, "s.toml"));
  EXPECT_EQ(plain.liveness_bound_ns, int64_t{3200} * 1'000'000);
  EXPECT_EQ(plain.lease_skew_ns, CheckConfig().lease_skew_ns);
  EXPECT_EQ(plain.clock_fault_kinds,
            (std::vector<std::string>{"clock-skew", "clock-jump", "primary-divergence"}));
  const std::string ahead =
      "[[nemesis.fault]]\nat_ms = 1000\nfault = \"clock-skew\"\ntarget = \"primary\"\n"
      "offset_ms = 5000\nduration_ms = 2000\n";
  const std::string back =
      "[[nemesis.fault]]\nat_ms = 4000\nfault = \"clock-jump\"\ntarget = \"secondaries\"\n"
      "jump_ms = -10000\nduration_ms = 2000\n";
  const Scenario moved = parse_scenario(base + ahead + back, "s.toml");
  EXPECT_EQ(check_config(moved).liveness_bound_ns, plain.liveness_bound_ns);
  EXPECT_EQ(check_config(moved).lease_skew_ns, plain.lease_skew_ns);
  EXPECT_EQ(widest_liveness_bound_ns(moved), plain.liveness_bound_ns + int64_t{15000} * 1'000'000);
  const Scenario set =
      parse_scenario(base + ahead + "[check]\nliveness_bound_ms = 4000\n", "s.toml");
  EXPECT_EQ(check_config(set).liveness_bound_ns, int64_t{4000} * 1'000'000);
  EXPECT_EQ(widest_liveness_bound_ns(set), int64_t{9000} * 1'000'000);
  const std::string worker =
      "[[nemesis.fault]]\nat_ms = 1000\nfault = \"clock-skew-worker\"\ntarget = \"w1\"\n"
      "offset_ms = 5000\nduration_ms = 3000\n";
  EXPECT_EQ(widest_liveness_bound_ns(parse_scenario(base + worker, "s.toml")),
            plain.liveness_bound_ns);
}

TEST(Scenario, NotifyIsMongolocksOnly) {
  EXPECT_NE(error_of("[lock]\nbackoff = \"notify\"\n[workload]\nclient = \"distributedlock\"\n"
                     "duration_ms = 1000\n")
                .find("\"notify\" is mongolock's"),
            std::string::npos);
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

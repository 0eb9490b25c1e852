// locklab explore with real runs: a case's outcome read from its run directory (valid, invalid
// with the properties, member died, harness error, not run); a member that aborts mid-run is
// recorded as a member death by `locklab run` itself; and an exploration interrupted by Ctrl-C
// mid-case leaves no temporary directory, namespace or process of any of its cases, and still
// writes its summary. What these leave out: a SIGKILLed explorer (each case's janitor covers it,
// as cleanup_test shows for `locklab run`).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "explore/case_runner.h"
#include "programs.h"
#include "run/process.h"
#include "run/run.h"
#include "temp_dir.h"
#include "testkit.h"

namespace locklab {
namespace {

using locklab::testkit::after;
using locklab::testkit::poll_until;
constexpr std::chrono::milliseconds kPollMs{50};  // between polls of the waits below

namespace fs = std::filesystem;

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

const char* kInvalidVerdict = R"({"outcome": "invalid", "properties": [
  {"property": "tokens.unique", "outcome": "valid"},
  {"property": "exclusion.fenced", "outcome": "invalid"},
  {"property": "liveness.recovery", "outcome": "invalid"}], "stats": {}})";

TEST(ExploreCase, OutcomeIsReadFromTheRunDirectory) {
  testkit::TempDir dir;
  const fs::path run = dir.file("run");
  write(run / "verdict.json", kInvalidVerdict);
  CaseOutcome o = classify_run(run.string(), 1);
  EXPECT_EQ(o.verdict, CaseVerdict::kInvalid);
  EXPECT_EQ(o.violated, (std::vector<std::string>{"exclusion.fenced", "liveness.recovery"}));
  EXPECT_EQ(finding_key(o), "exclusion.fenced");
  EXPECT_TRUE(matches(o, "liveness.recovery"));
  EXPECT_FALSE(matches(o, "tokens.unique"));
  EXPECT_FALSE(matches(o, "member-died"));

  write(run / "verdict.json", R"({"outcome": "unknown", "properties": []})");
  EXPECT_EQ(classify_run(run.string(), 3).verdict, CaseVerdict::kUnknown);
  EXPECT_EQ(finding_key(classify_run(run.string(), 3)), "");

  // Bad worker output: the verdict is not trusted, the case is a harness error.
  write(run / "worker-problems.txt", "w1: bad line\n");
  write(run / "locklab.log", "locklab: run failed: worker problems\n");
  o = classify_run(run.string(), 2);
  EXPECT_EQ(o.verdict, CaseVerdict::kHarnessError);
  EXPECT_NE(o.detail.find("worker problems"), std::string::npos) << o.detail;
  EXPECT_EQ(finding_key(o), "");

  write(run / kMemberDiedFile, "member m2 ended (signal 6)\n");
  o = classify_run(run.string(), 2);
  EXPECT_EQ(o.verdict, CaseVerdict::kMemberDied);
  EXPECT_EQ(o.detail, "member m2 ended (signal 6)");
  EXPECT_EQ(finding_key(o), "member-died");

  EXPECT_EQ(classify_run(dir.file("never-ran"), kExitNotRun).verdict, CaseVerdict::kNotRun);
  EXPECT_EQ(classify_run(dir.file("never-ran"), 2).verdict, CaseVerdict::kHarnessError);
}

// A member program that aborts (SIGABRT, as an assertion does) mid-run, once the history shows
// a worker's first acquire call (so never during the set's start, however slow the build): the run
// fails naming it, and leaves member-died.txt for the explorer. The wrapper's watcher looks for
// at most 120 s and stops when the member is gone.
TEST(ExploreCase, MemberThatAbortsMidRunIsRecordedAsAMemberDeath) {
  if (!testing::programs_built()) GTEST_SKIP() << "needs locklab and mongosim built";
  testkit::TempDir dir;
  const std::string out = dir.file("run");
  const std::string wrapper = dir.file("aborting-member.sh");
  const std::string watcher =
      "i=0; while [ $i -lt 1200 ] && kill -0 $$ 2>/dev/null; do "
      "if grep -q '\"f\":\"acquire\"' '" +
      out +
      "/history.jsonl' 2>/dev/null; then "
      "kill -ABRT $$; exit 0; fi; sleep 0.1; i=$((i+1)); done";
  write(wrapper, "#!/bin/sh\n(" + watcher + ") &\nexec " + std::string(LOCKLAB_BIN_DIR) +
                     "/mongosim \"$@\"\n");
  fs::permissions(wrapper, fs::perms::owner_all);
  write(dir.file("s.toml"),
        "[cluster]\nbackend = \"loopback\"\n[workload]\nworkers = 1\nduration_ms = 20000\n");
  const ToolResult run =
      run_tool({std::string(LOCKLAB_BIN_DIR) + "/locklab", "run", dir.file("s.toml"), "--mongod",
                wrapper, "--seed", "1", "--out", out},
               "", "", 180'000);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_EQ(read(fs::path(out) / kMemberDiedFile), "member m0 ended (signal 6)\n") << run.output;
  EXPECT_EQ(classify_run(out, 2).verdict, CaseVerdict::kMemberDied);
}

std::vector<pid_t> case_pids(const fs::path& out) {
  std::vector<pid_t> pids;
  if (!fs::exists(out / "cases")) return pids;
  for (const auto& entry : fs::directory_iterator(out / "cases")) {
    if (fs::exists(entry.path() / "pid")) pids.push_back(std::stoi(read(entry.path() / "pid")));
  }
  return pids;
}

bool leftovers_of(pid_t pid, std::string& what) {
  const std::string prefix = "ll-" + std::to_string(pid) + "-";
  for (const char* dir : {"/tmp", "/run/netns"}) {
    if (!fs::exists(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().filename().string().starts_with(prefix)) {
        what = entry.path().string();
        return true;
      }
    }
  }
  return false;
}

// Ctrl-C (SIGINT to the explorer's process group) while a case's workers run.
TEST(ExploreInterrupt, CtrlCMidCaseLeavesNothingBehind) {
  if (!testing::programs_built()) GTEST_SKIP() << "needs locklab and mongosim built";
  testkit::TempDir dir;
  const fs::path out = dir.file("explore");
  // The Supervisor starts it in a process group of its own, as a terminal would start the
  // explorer, so the SIGINT below reaches the explorer's whole group.
  Supervisor supervisor;
  const std::string locklab = std::string(LOCKLAB_BIN_DIR) + "/locklab";
  const pid_t pid =
      supervisor.spawn({.argv = {locklab, "explore", "--members", "3", "--cases", "5", "--seed",
                                 "7", "--max-size", "50", "--out", out.string()},
                        .netns = "",
                        .log_path = dir.file("log")});
  // The first case is running its workers: its history records a worker's spawn.
  const bool started = poll_until(
      after(std::chrono::milliseconds(60'000)),
      [&] { return read(out / "cases/0/history.jsonl").find("\"spawn\"") != std::string::npos; },
      kPollMs);
  kill(-pid, SIGINT);
  const std::optional<ExitStatus> end = supervisor.wait_exit(pid, 120'000);
  ASSERT_TRUE(end.has_value()) << "the explorer did not end after SIGINT\n"
                               << read(dir.file("log"));
  ASSERT_TRUE(started) << read(dir.file("log"));
  EXPECT_EQ(end->code, 130) << end->describe() << "\n" << read(dir.file("log"));
  const std::vector<pid_t> pids = case_pids(out);
  ASSERT_FALSE(pids.empty());
  for (pid_t p : pids) {
    std::string what;
    EXPECT_TRUE(poll_until(
        after(std::chrono::milliseconds(10'000)), [&] { return !leftovers_of(p, what); }, kPollMs))
        << "case pid " << p << " left " << what;
  }
  // No process of the explorer's group is left (its cases' members and workers included).
  EXPECT_TRUE(poll_until(
      after(std::chrono::milliseconds(10'000)), [&] { return kill(-pid, 0) != 0; }, kPollMs));
  const nlohmann::json summary = nlohmann::json::parse(read(out / "summary.json"));
  EXPECT_TRUE(summary["interrupted"].get<bool>());
}

}  // namespace
}  // namespace locklab

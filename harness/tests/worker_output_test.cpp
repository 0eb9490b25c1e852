// Bad worker output: a truncated line, an unknown f, a non-JSON line, a worker that exits at
// once. Each must give an error naming the worker and the line, and lose no other event.
// The line checks and the file follower are tested directly; then `locklab run` with the
// misbehaving self-test clients (harness/tests/clients/misbehaving_worker.py), real processes
// against a real mongosim. Left out: a worker writing faster than the follower reads (bounded
// by kReadChunkBytes per tick, not by correctness), and lines torn by SIGKILL in a real run
// (tested with a file written in two steps).
#include "run/worker_output.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>

#include "programs.h"
#include "run/process.h"
#include "temp_dir.h"

namespace locklab {
namespace {

namespace fs = std::filesystem;

std::string event_line(int64_t t, const std::string& process, const std::string& f) {
  return "{\"t\":" + std::to_string(t) + ",\"process\":\"" + process +
         "\",\"type\":\"invoke\",\"f\":\"" + f + "\",\"lock\":\"L1\"}";
}

TEST(WorkerLine, ValidLineIsAnEvent) {
  std::string error;
  auto e = validate_worker_line(event_line(50, "w1", "acquire"), "w1", 10, 100, &error);
  ASSERT_TRUE(e.has_value()) << error;
  EXPECT_EQ(e->t_ns, 50);
  EXPECT_EQ(e->f, "acquire");
}

TEST(WorkerLine, EachBadLineSaysWhatIsWrong) {
  std::string error;
  EXPECT_FALSE(validate_worker_line("this is not json", "w1", 10, 100, &error));
  EXPECT_EQ(error, "not valid JSON");
  EXPECT_FALSE(validate_worker_line(event_line(50, "w1", "frobnicate"), "w1", 10, 100, &error));
  EXPECT_NE(error.find("unknown f \"frobnicate\""), std::string::npos) << error;
  EXPECT_FALSE(validate_worker_line(event_line(50, "w2", "acquire"), "w1", 10, 100, &error));
  EXPECT_NE(error.find("not the worker's id \"w1\""), std::string::npos) << error;
  EXPECT_FALSE(validate_worker_line(event_line(500, "w1", "acquire"), "w1", 10, 100, &error));
  EXPECT_NE(error.find("CLOCK_MONOTONIC"), std::string::npos) << error;
  EXPECT_FALSE(validate_worker_line(event_line(5, "w1", "acquire"), "w1", 10, 100, &error));
  EXPECT_FALSE(validate_worker_line("{\"t\":50,\"process\":\"w1\"", "w1", 10, 100, &error));
  EXPECT_EQ(error, "not valid JSON");
}

class Follower : public ::testing::Test {
 protected:
  void append(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::app) << text;
  }
  std::vector<Event> merged() { return read_history(dir_.file("history.jsonl")); }
  testing::TempDir dir_;
  HistoryWriter history_{dir_.file("history.jsonl")};
  WorkerOutputs outputs_{history_, dir_.path()};
};

TEST_F(Follower, GoodLinesAreMergedAndBadOnesNamedWithoutLosingOthers) {
  const std::string path = outputs_.open("w1", 0);
  EXPECT_EQ(path, dir_.file("w1.0.jsonl"));
  const int64_t t = monotonic_now_ns();
  append(path,
         event_line(t, "w1", "acquire") + "\nnot json\n" + event_line(t + 1, "w1", "release"));
  outputs_.drain();                // the last line has no newline yet: left for later
  EXPECT_EQ(merged().size(), 2u);  // the acquire and the harness's worker-output event
  append(path, "\n");
  outputs_.close("w1", false);
  std::vector<Event> events = merged();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(outputs_.events("w1"), 2);
  ASSERT_EQ(outputs_.problems().size(), 1u);
  EXPECT_EQ(outputs_.problems()[0], "worker w1: " + path + " line 2: not valid JSON: not json");
  const Event& bad = events[2];  // stamped when it was read: after both worker events
  EXPECT_EQ(bad.process, "harness");
  EXPECT_EQ(bad.f, "worker-output");
  EXPECT_EQ(bad.value["line"], 2);
}

TEST_F(Follower, UnterminatedLastLineIsTruncatedUnlessKilled) {
  const std::string first = outputs_.open("w1", 0);
  append(first, event_line(monotonic_now_ns(), "w1", "acquire") + "\n{\"t\":1,\"pro");
  outputs_.close("w1", false);
  ASSERT_EQ(outputs_.problems().size(), 1u);
  EXPECT_NE(outputs_.problems()[0].find(first + " line 2: truncated line"), std::string::npos)
      << outputs_.problems()[0];
  const std::string second = outputs_.open("w1", 1);
  append(second, event_line(monotonic_now_ns(), "w1", "acquire") + "\n{\"t\":1,\"pro");
  outputs_.close("w1", true);  // killed: a torn write, not a problem
  EXPECT_EQ(outputs_.problem_count(), 1u);
  EXPECT_EQ(outputs_.torn_fragments(), 1u);
  EXPECT_EQ(outputs_.events("w1"), 1);
}

// `locklab run` with a misbehaving client: exit 2, the problem named on stderr, and every good
// event of both workers in the merged history. A run counted by operations: it ends when both
// workers have exited, so nothing depends on how fast they start.
struct BadClientCase {
  std::string client;
  std::string expected;  // in stderr, after "worker w1: " (and the worker's file)
  int good_events_per_worker;
};

// Test names and failure messages show the client, not the case's bytes.
void PrintTo(const BadClientCase& c, std::ostream* os) {
  *os << c.client;
}

class BadClientRun : public ::testing::TestWithParam<BadClientCase> {};

TEST_P(BadClientRun, IsAnErrorNamingWorkerAndLineAndKeepsEveryOtherEvent) {
  if (!locklab::testing::programs_built()) GTEST_SKIP() << "needs locklab and mongosim built";
  const BadClientCase& c = GetParam();
  testing::TempDir dir;
  std::ofstream(dir.file("s.toml")) << "[workload]\nclient = \"" << c.client
                                    << "\"\nworkers = 2\noperations = 2\n"
                                       "[nemesis]\nquiet_ms = 0\n";
  const ToolResult r =
      run_tool({std::string(LOCKLAB_BIN_DIR) + "/locklab", "run", dir.file("s.toml"), "--cluster",
                "loopback", "--seed", "1", "--out", dir.file("out")},
               "", "", 120'000);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("locklab: run failed: bad worker output"), std::string::npos) << r.output;
  for (const std::string w : {"w1", "w2"}) {
    // A bad line is named by its file (the worker's own) and line number.
    const std::string file = c.expected.starts_with(".0.jsonl") ? dir.file("out/workers/") + w : "";
    EXPECT_NE(r.output.find("worker " + w + ": " + file + c.expected), std::string::npos)
        << w << "\n"
        << r.output;
  }
  const std::vector<Event> history = read_history(dir.file("out/history.jsonl"));
  std::map<std::string, int> good;
  int reported = 0;
  for (const Event& e : history) {
    if (e.process == "w1" || e.process == "w2") ++good[e.process];
    if (e.process == "harness" && e.f == "worker-output") ++reported;
  }
  EXPECT_EQ(good["w1"], c.good_events_per_worker);
  EXPECT_EQ(good["w2"], c.good_events_per_worker);
  EXPECT_EQ(reported, 2);
}

INSTANTIATE_TEST_SUITE_P(
    Clients, BadClientRun,
    ::testing::Values(
        BadClientCase{"test-truncated-line", ".0.jsonl line 9: truncated line", 8},
        BadClientCase{"test-unknown-f", ".0.jsonl line 5: unknown f \"frobnicate\"", 8},
        BadClientCase{"test-non-json", ".0.jsonl line 5: not valid JSON: this is not json", 8},
        BadClientCase{"test-exit-at-once",
                      "ended on its own before the run asked it to stop (exit 3)", 0}),
    [](const auto& param_info) {
      std::string name = param_info.param.client;
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

}  // namespace
}  // namespace locklab

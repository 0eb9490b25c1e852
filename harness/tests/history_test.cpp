// The history file: encoding round trip, malformed input named by file and line, and whole
// lines from concurrent and killed writer processes.
#include "checker/history.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include "poll_until.h"
#include "temp_dir.h"

namespace locklab {
namespace {

using testkit::TempDir;

Event big_event(const std::string& process, int n) {
  // Larger than PIPE_BUF, so whole lines come from O_APPEND, not from small-write luck.
  return Event{0,
               process,
               EventType::kOk,
               "write",
               "L",
               n,
               {{"resource", "R"}, {"padding", std::string(6000, 'x')}}};
}

TEST(History, RoundTripsEveryField) {
  Event full{123456789,
             "w3",
             EventType::kInfo,
             "acquire",
             "L\"1",
             int64_t{-17},
             {{"lease_ms", 1000}, {"nested", {{"a", {1, 2.5, "é"}}}}}};
  Event bare{1, "nemesis", EventType::kInvoke, "heal", "", std::nullopt, nullptr};
  for (const Event& event : {full, bare}) {
    std::string error;
    std::optional<Event> back = parse_json_line(to_json_line(event), &error);
    ASSERT_TRUE(back.has_value()) << error;
    EXPECT_EQ(back->t_ns, event.t_ns);
    EXPECT_EQ(back->process, event.process);
    EXPECT_EQ(back->type, event.type);
    EXPECT_EQ(back->f, event.f);
    EXPECT_EQ(back->lock, event.lock);
    EXPECT_EQ(back->token, event.token);
    EXPECT_EQ(back->value, event.value);
  }
  EXPECT_EQ(to_json_line(bare), R"({"t":1,"process":"nemesis","type":"invoke","f":"heal"})");
}

TEST(History, ParseErrorsSayWhatIsWrong) {
  std::string error;
  EXPECT_FALSE(parse_json_line("{", &error).has_value());
  EXPECT_EQ(error, "not valid JSON");
  EXPECT_FALSE(parse_json_line(R"({"process":"w1","type":"ok","f":"x"})", &error));
  EXPECT_NE(error.find("\"t\""), std::string::npos);
  EXPECT_FALSE(parse_json_line(R"({"t":1,"process":"w1","type":"done","f":"x"})", &error));
  EXPECT_NE(error.find("done"), std::string::npos);
  EXPECT_FALSE(
      parse_json_line(R"({"t":1,"process":"w1","type":"ok","f":"x","token":"7"})", &error));
  EXPECT_NE(error.find("token"), std::string::npos);
}

// Integers above int64 are refused with a reason, not wrapped: a token 2^64-1 used to be read
// as -1 (and judged as such), a t of 2^63 as a time before every other.
TEST(History, IntegersBeyondInt64AreRefusedNotWrapped) {
  std::string error;
  EXPECT_FALSE(parse_json_line(
      R"({"t":1,"process":"w1","type":"ok","f":"acquire","token":18446744073709551615})", &error));
  EXPECT_NE(error.find("token"), std::string::npos) << error;
  EXPECT_FALSE(
      parse_json_line(R"({"t":9223372036854775808,"process":"w1","type":"ok","f":"x"})", &error));
  EXPECT_NE(error.find("\"t\""), std::string::npos) << error;
  auto biggest = parse_json_line(
      R"({"t":9223372036854775807,"process":"w1","type":"ok","f":"acquire","token":9223372036854775807})",
      &error);
  ASSERT_TRUE(biggest.has_value()) << error;
  EXPECT_EQ(biggest->token, INT64_MAX);
  EXPECT_EQ(biggest->t_ns, INT64_MAX);
}

TEST(History, MalformedLineIsNamedByFileAndLine) {
  TempDir dir;
  std::string path = dir.file("history.jsonl");
  {
    HistoryWriter writer(path);
    writer.append(Event{5, "w1", EventType::kOk, "read", "", std::nullopt, nullptr});
  }
  std::ofstream(path, std::ios::app) << "\n{\"t\": 1, \"process\": \"w1\"}\n";
  try {
    read_history(path);
    FAIL() << "no error for a malformed line";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find(path + ":3:"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("\"type\""), std::string::npos) << error.what();
  }
}

TEST(History, ReadSortsByTimeKeepingFileOrderForTies) {
  TempDir dir;
  std::string path = dir.file("history.jsonl");
  HistoryWriter writer(path);
  writer.append(Event{20, "a", EventType::kOk, "x", "", std::nullopt, nullptr});
  writer.append(Event{10, "b", EventType::kOk, "x", "", std::nullopt, nullptr});
  writer.append(Event{20, "c", EventType::kOk, "x", "", std::nullopt, nullptr});
  writer.append(Event{0, "d", EventType::kOk, "x", "", std::nullopt, nullptr});  // stamped now
  std::vector<Event> events = read_history(path);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].process, "b");
  EXPECT_EQ(events[1].process, "a");
  EXPECT_EQ(events[2].process, "c");
  EXPECT_EQ(events[3].process, "d");
  EXPECT_GT(events[3].t_ns, 20);
}

TEST(History, ConcurrentWriterProcessesProduceWholeLines) {
  TempDir dir;
  std::string path = dir.file("history.jsonl");
  constexpr int kWriters = 4;
  constexpr int kEventsEach = 300;
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      HistoryWriter writer(path);
      for (int n = 0; n < kEventsEach; ++n) writer.append(big_event("w" + std::to_string(w), n));
      std::_Exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::vector<Event> events = read_history(path);  // throws on any torn line
  EXPECT_EQ(events.size(), static_cast<size_t>(kWriters * kEventsEach));
}

TEST(History, WriterKilledMidStreamLeavesNoTornLine) {
  TempDir dir;
  std::string path = dir.file("history.jsonl");
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    HistoryWriter writer(path);
    for (int n = 0;; ++n) writer.append(big_event("w1", n));
  }
  // Wait (bounded) until the writer is well into its stream, then kill it mid-write.
  // No line is longer than the one with the widest counter, so bytes / that length is a lower
  // bound on the number of whole lines already in the file.
  Event widest = big_event("w1", 99999999);
  widest.t_ns = std::numeric_limits<int64_t>::max();  // the writer stamps t; use its widest form
  const uintmax_t line_bytes_max = to_json_line(widest).size() + 1;
  auto written = [&path, line_bytes_max] {
    std::error_code missing;
    uintmax_t bytes = std::filesystem::file_size(path, missing);
    return missing ? 0 : bytes / line_bytes_max;
  };
  const bool well_into = testkit::poll_until(
      testkit::after(std::chrono::seconds(30)), [&] { return written() >= 200; },
      std::chrono::milliseconds(1));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_TRUE(well_into) << "the writer had not written 200 lines in 30 s";
  // Every event the writer finished is there, in order; at most the one in flight is cut
  // off (the kernel may stop a write between page copies when SIGKILL arrives).
  HistoryReadStats stats;
  std::vector<Event> events = read_history(path, &stats);
  EXPECT_LE(stats.torn_fragments, 1u);
  ASSERT_GE(events.size(), 200u);
  for (size_t n = 0; n < events.size(); ++n) ASSERT_EQ(events[n].token, static_cast<int64_t>(n));
}

TEST(History, TornFragmentBeforeAWholeLineIsDropped) {
  TempDir dir;
  std::string path = dir.file("history.jsonl");
  Event whole{7, "w2", EventType::kOk, "acquire", "L", 3, {{"t", 1}}};
  Event cut{6, "w1", EventType::kInvoke, "write", "L", 2, {{"padding", "abc"}}};
  std::string torn = to_json_line(cut).substr(0, 25);
  std::ofstream(path) << to_json_line(cut) << "\n" << torn << to_json_line(whole) << "\n" << torn;
  HistoryReadStats stats;
  std::vector<Event> events = read_history(path, &stats);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].process, "w2");
  EXPECT_EQ(events[1].value, whole.value);
  EXPECT_EQ(stats.torn_fragments, 2u);  // one mid-file, one unterminated at the end
  // A malformed line that is not a torn prefix stays an error.
  std::ofstream(path, std::ios::app) << "\n{\"t\":oops}\n";
  EXPECT_THROW(read_history(path), std::runtime_error);
}

TEST(History, OpenFailureNamesThePath) {
  try {
    HistoryWriter writer("/nonexistent-dir/history.jsonl");
    FAIL() << "no error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent-dir/history.jsonl"), std::string::npos);
  }
}

}  // namespace
}  // namespace locklab

// Supervisor and run_tool: real child processes, real signals.
#include "run/process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "testkit.h"

namespace locklab {
namespace {

using locklab::testkit::after;
using locklab::testkit::poll_until;
constexpr std::chrono::milliseconds kPollMs{5};  // between polls of the waits below

TEST(Supervisor, ReportsExitCode) {
  Supervisor s;
  const pid_t pid = s.spawn({{"/bin/sh", "-c", "exit 7"}, "", ""});
  auto status = s.wait_exit(pid, 10'000);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code, 7);
  EXPECT_EQ(status->describe(), "exit 7");
  EXPECT_FALSE(s.running(pid));
  auto reported = s.poll();
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_EQ(reported[0].pid, pid);
}

TEST(Supervisor, PollReportsEachChildOnce) {
  Supervisor s;
  const pid_t a = s.spawn({{"/bin/true"}, "", ""});
  const pid_t b = s.spawn({{"/bin/false"}, "", ""});
  std::map<pid_t, int> codes;
  ASSERT_TRUE(poll_until(
      after(std::chrono::milliseconds(10'000)),
      [&] {
        for (const auto& e : s.poll()) codes[e.pid] = e.code;
        return codes.size() == 2;
      },
      kPollMs));
  EXPECT_EQ(codes[a], 0);
  EXPECT_EQ(codes[b], 1);
  EXPECT_TRUE(s.poll().empty());
}

TEST(Supervisor, StopAndContinue) {
  Supervisor s;
  const pid_t pid = s.spawn({{"/bin/sleep", "100"}, "", ""});
  ASSERT_TRUE(s.signal(pid, SIGSTOP));
  EXPECT_TRUE(poll_until(
      after(std::chrono::milliseconds(10'000)), [&] { return process_state(pid) == 'T'; },
      kPollMs));
  ASSERT_TRUE(s.signal(pid, SIGCONT));
  EXPECT_TRUE(poll_until(
      after(std::chrono::milliseconds(10'000)), [&] { return process_state(pid) == 'S'; },
      kPollMs));
  s.stop_all(5'000);
  EXPECT_FALSE(s.running(pid));
  EXPECT_EQ(process_state(pid), 0);
}

TEST(Supervisor, StopAllKillsAChildThatIgnoresTerm) {
  Supervisor s;
  const std::string ready = testing::TempDir() + "/ignores_term.ready";
  std::filesystem::remove(ready);
  const pid_t pid = s.spawn(
      {{"/bin/sh", "-c", "trap '' TERM; touch " + ready + "; while :; do sleep 1; done"}, "", ""});
  // SIGTERM must arrive after the trap is set, or the shell dies of it.
  ASSERT_TRUE(poll_until(
      after(std::chrono::milliseconds(10'000)), [&] { return std::filesystem::exists(ready); },
      kPollMs));
  s.stop_all(200);
  EXPECT_FALSE(s.running(pid));
  auto reported = s.poll();
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_EQ(reported[0].signal, SIGKILL);
}

TEST(Supervisor, ExecFailureIsNamed) {
  Supervisor s;
  try {
    s.spawn({{"/nonexistent/program"}, "", ""});
    FAIL() << "spawn of a missing program succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/program: exec"), std::string::npos)
        << e.what();
  }
}

TEST(Supervisor, MissingNamespaceIsNamed) {
  Supervisor s;
  EXPECT_THROW(s.spawn({{"/bin/true"}, "ll-no-such-namespace", ""}), std::runtime_error);
}

TEST(Supervisor, WritesLog) {
  const std::string log = testing::TempDir() + "/supervisor_log.txt";
  std::filesystem::remove(log);
  Supervisor s;
  const pid_t pid = s.spawn({{"/bin/sh", "-c", "echo out; echo err >&2"}, "", log});
  ASSERT_TRUE(s.wait_exit(pid, 10'000).has_value());
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "out\nerr\n");
}

TEST(Supervisor, StartGivesThePipesItAsksFor) {
  const std::string log = testing::TempDir() + "/supervisor_pipes.txt";
  std::filesystem::remove(log);
  Supervisor s;
  StartedChild child = s.start({.argv = {"/bin/sh", "-c", "read x; echo got $x; echo err >&2"},
                                .netns = "",
                                .log_path = log,
                                .pipe_stdin = true,
                                .pipe_stdout = true});
  const std::string line = "hello\n";
  ASSERT_EQ(::write(child.to_stdin.get(), line.data(), line.size()),
            static_cast<ssize_t>(line.size()));
  EXPECT_EQ(read_line(child.from_stdout.get(), 10'000, 64), "got hello");
  auto status = s.wait_exit(child.pid, 10'000);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->describe(), "exit 0");
  EXPECT_EQ(read_line(child.from_stdout.get(), 10'000, 64), std::nullopt) << "end of file";
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "err\n") << "stderr alone goes to the log when stdout is a pipe";
}

TEST(Supervisor, MergeStderrPutsBothStreamsInThePipe) {
  Supervisor s;
  StartedChild child = s.start({.argv = {"/bin/sh", "-c", "echo out; echo err >&2"},
                                .netns = "",
                                .log_path = "",
                                .pipe_stdin = false,
                                .pipe_stdout = true,
                                .merge_stderr = true});
  EXPECT_EQ(read_line(child.from_stdout.get(), 10'000, 64), "out");
  EXPECT_EQ(read_line(child.from_stdout.get(), 10'000, 64), "err");
  EXPECT_THROW(s.start({.argv = {"/bin/true"},
                        .netns = "",
                        .log_path = "",
                        .pipe_stdin = false,
                        .pipe_stdout = false,
                        .merge_stderr = true}),
               std::invalid_argument);
}

// A harness started with its stdin closed: the log the child's stdout goes to is opened as
// descriptor 0, which the child's own stdin redirection must not overwrite.
TEST(Supervisor, AClosedStdinInTheHarnessDoesNotLoseTheChildsOutput) {
  const std::string log = testing::TempDir() + "/supervisor_closed_stdin.txt";
  std::filesystem::remove(log);
  const int saved_stdin = ::dup(0);
  ASSERT_GE(saved_stdin, 0);
  ::close(0);
  std::optional<ExitStatus> status;
  {
    Supervisor s;
    const pid_t pid = s.spawn({{"/bin/sh", "-c", "echo out"}, "", log});
    status = s.wait_exit(pid, 10'000);
  }
  ASSERT_EQ(::dup2(saved_stdin, 0), 0);
  ::close(saved_stdin);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->describe(), "exit 0");
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "out\n");
}

TEST(Supervisor, SpawnRefusesPipesItWouldDrop) {
  Supervisor s;
  EXPECT_THROW(s.spawn({.argv = {"/bin/true"}, .netns = "", .log_path = "", .pipe_stdout = true}),
               std::invalid_argument);
  EXPECT_THROW(s.spawn({.argv = {"/bin/true"}, .netns = "", .log_path = "", .pipe_stdin = true}),
               std::invalid_argument);
  EXPECT_THROW(s.spawn({.argv = {"/bin/true"}, .netns = "", .log_path = "", .merge_stderr = true}),
               std::invalid_argument);
  EXPECT_THROW(s.spawn({.argv = {}, .netns = "", .log_path = "", .pipe_stdout = true}),
               std::invalid_argument);
  EXPECT_TRUE(s.running_pids().empty());
}

// A descriptor the harness (or ctest, before it) left without close-on-exec does not reach a
// child: a member or worker holding a copy of another's pipe would keep it from seeing EOF.
TEST(Supervisor, AChildInheritsOnlyItsStandardDescriptors) {
  const int leaked = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC, on purpose
  ASSERT_GE(leaked, 3);
  const std::string fd = std::to_string(leaked);
  Supervisor s;
  StartedChild child = s.start(
      {.argv = {"/bin/sh", "-c", "[ -e /proc/$$/fd/" + fd + " ] && echo open || echo closed"},
       .netns = "",
       .log_path = "",
       .pipe_stdout = true});
  const std::optional<std::string> seen = read_line(child.from_stdout.get(), 10'000, 64);
  ::close(leaked);
  EXPECT_EQ(seen, "closed") << "descriptor " << fd << " reached the child";
}

TEST(ReadLine, EndsAtTheNewlineAndGivesUpOnTimeoutEofOrLength) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  UniqueFd read_end(p[0]);
  UniqueFd write_end(p[1]);
  const std::string text = "one\ntwo-without-end";
  ASSERT_EQ(::write(write_end.get(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
  EXPECT_EQ(read_line(read_end.get(), 10'000, 64), "one");
  EXPECT_EQ(read_line(read_end.get(), 50, 64), std::nullopt) << "no newline yet: the timeout";
  const std::string longer = std::string(70, 'x') + "\n";
  ASSERT_EQ(::write(write_end.get(), longer.data(), longer.size()),
            static_cast<ssize_t>(longer.size()));
  EXPECT_EQ(read_line(read_end.get(), 10'000, 64), std::nullopt) << "64 bytes, no newline";
  EXPECT_EQ(read_line(read_end.get(), 10'000, 64), "xxxxxx") << "what the long line left";
  write_end.reset();
  EXPECT_EQ(read_line(read_end.get(), 10'000, 64), std::nullopt) << "end of file";
}

TEST(Supervisor, SubreaperReapsOrphans) {
  Supervisor::become_subreaper();
  Supervisor s;
  const std::string pidfile = testing::TempDir() + "/orphan.pid";
  std::filesystem::remove(pidfile);
  // The shell exits at once; its background child becomes our orphan.
  const pid_t pid =
      s.spawn({{"/bin/sh", "-c", "sleep 0.3 & echo $! > " + pidfile + "; exit 0"}, "", ""});
  ASSERT_TRUE(s.wait_exit(pid, 10'000).has_value());
  pid_t orphan = 0;
  std::ifstream(pidfile) >> orphan;
  ASSERT_GT(orphan, 0);
  ASSERT_TRUE(poll_until(
      after(std::chrono::milliseconds(10'000)),
      [&] {
        s.poll();
        return process_state(orphan) == 0;
      },
      kPollMs))
      << "orphan " << orphan << " is still there in state " << process_state(orphan);
}

TEST(RunTool, CapturesOutputAndCode) {
  ToolResult r = run_tool({"sh", "-c", "cat; echo done; exit 3"}, "", "fed\n");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.output, "fed\ndone\n");
  EXPECT_THROW(run_tool_checked({"sh", "-c", "exit 1"}), std::runtime_error);
  EXPECT_THROW(run_tool({"sleep", "5"}, "", "", 100), std::runtime_error);
}

// What the model leaves out: a real second waiter (another Supervisor's poll, a thread): the test
// reaps the child itself, which is what such a waiter would have done.
TEST(Supervisor, AChildReapedByAnotherWaiterEndsWithAnUnknownStatus) {
  Supervisor s;
  const pid_t pid = s.spawn({{"/bin/sh", "-c", "exit 5"}, "", ""});
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);  // the other waiter
  const std::optional<ExitStatus> end = s.wait_exit(pid, 10'000);
  ASSERT_TRUE(end.has_value()) << "the child counted as running after it was reaped";
  EXPECT_EQ(end->code, -1);
  EXPECT_EQ(end->signal, 0);
  EXPECT_NE(end->describe().find("status unknown"), std::string::npos) << end->describe();
  EXPECT_FALSE(s.running(pid)) << "its pid is no longer the supervisor's to signal";
  const std::vector<ExitStatus> reported = s.poll();
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_EQ(reported[0].pid, pid);
}

TEST(Supervisor, StopAllForgetsAChildReapedByAnotherWaiter) {
  Supervisor s;
  const pid_t pid = s.spawn({{"/bin/sh", "-c", "exit 0"}, "", ""});
  ASSERT_EQ(::waitpid(pid, nullptr, 0), pid);  // the other waiter
  s.stop_all(100);
  EXPECT_TRUE(s.running_pids().empty());
}

TEST(SpawnDetached, RunsInItsOwnSessionWithOnlyItsStandardDescriptors) {
  const int leaked = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC, on purpose
  ASSERT_GE(leaked, 3);
  const testkit::TempDir dir("locklab-detached");
  const std::string log = dir.file("detached.log");
  const pid_t pid = spawn_detached(
      {.argv = {"/bin/sh", "-c",
                "[ -e /proc/$$/fd/" + std::to_string(leaked) + " ] && echo open || echo closed"},
       .netns = "",
       .log_path = log});
  ::close(leaked);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::ifstream in(log);
  std::string seen;
  std::getline(in, seen);
  EXPECT_EQ(seen, "closed");
  EXPECT_THROW(
      spawn_detached({.argv = {"/bin/true"}, .netns = "", .log_path = "", .pipe_stdout = true}),
      std::invalid_argument);
}

TEST(SpawnDetached, LeadsASessionOfItsOwn) {
  const pid_t pid = spawn_detached({.argv = {"/bin/sleep", "60"}, .netns = "", .log_path = ""});
  ASSERT_GT(pid, 0);
  // setsid runs in the child before exec: poll until it has (never a sleep standing in for it).
  EXPECT_TRUE(poll_until(
      after(std::chrono::seconds(10)), [&] { return ::getsid(pid) == pid; }, kPollMs))
      << "session " << ::getsid(pid) << ", ours " << ::getsid(0);
  ::kill(pid, SIGKILL);
  ASSERT_EQ(::waitpid(pid, nullptr, 0), pid);
}

TEST(RunTool, ATimeoutStillHoldsAfterTheToolClosesItsOutput) {
  // Closes stdout and stderr, then keeps running: the end of output is not the tool's end.
  try {
    run_tool({"sh", "-c", "exec >&- 2>&-; exec sleep 60"}, "", "", 300);
    ADD_FAILURE() << "run_tool returned although the tool ran past its timeout";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace locklab

// The test kit's own pieces against real processes: poll_until's deadline, TempDir's removal,
// a mongosim node's kill / restart on its dbpath / pause, and a replica set that is
// ready (a majority write was acknowledged) when its constructor returns. Model: one machine,
// loopback only; ports are reservations (their own tests: harness/tests/port_reservation_test.cpp).
#include "testkit.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>

namespace locklab::testkit {
namespace {

TEST(PollUntil, TrueOnceTheConditionHolds) {
  int asked = 0;
  EXPECT_TRUE(poll_until(
      after(std::chrono::seconds(10)), [&] { return ++asked == 3; }, std::chrono::milliseconds(1)));
  EXPECT_EQ(asked, 3);
}

TEST(PollUntil, FalseAtTheDeadlineAfterALastLook) {
  int asked = 0;
  EXPECT_FALSE(poll_until(after(std::chrono::milliseconds(0)), [&] {
    ++asked;
    return false;
  }));
  EXPECT_EQ(asked, 1);  // a deadline already passed still asks once
}

TEST(ForkedChild, ExitStatusOfAChildThatExits) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(7);
  EXPECT_EQ(wait_child_exit(child, after(std::chrono::seconds(30))), 7);
}

TEST(ForkedChild, AChildStillRunningAtTheDeadlineIsKilledAndReaped) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();  // until a signal: only the kit's SIGKILL ends it
    _exit(0);
  }
  EXPECT_EQ(wait_child_exit(child, after(std::chrono::milliseconds(100))), -1);
  errno = 0;
  EXPECT_EQ(::waitpid(child, nullptr, WNOHANG), -1) << "the child was left unreaped";
  EXPECT_EQ(errno, ECHILD);
}

TEST(TempDir, RemovesItselfWithWhatItHolds) {
  std::string path;
  {
    TempDir dir("testkit-test");
    path = dir.path();
    std::filesystem::create_directories(dir.file("a/b"));
    std::ofstream(dir.file("a/b/c")) << "x";
    ASSERT_TRUE(std::filesystem::exists(dir.file("a/b/c")));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(MongosimNode, KilledNodeRestartsOnItsDbpathWithItsData) {
  if (mongosim_program().empty()) GTEST_SKIP() << "this build has no mongosim";
  TempDir dir("testkit-node");
  MongosimNode node({.dbpath = dir.file("db")});
  const int port = node.port();
  node.command("db", R"({"insert": "c", "documents": [{"_id": 1}], "writeConcern": {"j": true}})");
  node.kill();
  EXPECT_FALSE(node.running());
  EXPECT_EQ(connect_loopback(port), -1);
  node.restart();
  EXPECT_EQ(node.port(), port);
  const nlohmann::json found = node.command("db", R"({"find": "c"})");
  EXPECT_EQ(found["cursor"]["firstBatch"].size(), 1u) << found.dump();
}

TEST(MongosimNode, PausedNodeAnswersNothingUntilResumed) {
  if (mongosim_program().empty()) GTEST_SKIP() << "this build has no mongosim";
  MongosimNode node;
  node.pause();
  EXPECT_TRUE(node.paused());
  EXPECT_EQ(node.try_command("admin", {{"ping", 1}}).value("ok", 1.0), 0.0);
  node.resume();
  EXPECT_NO_THROW(node.command("admin", R"({"ping": 1})"));
}

TEST(MongosimNode, BadCommandTextIsAnErrorNamingIt) {
  if (mongosim_program().empty()) GTEST_SKIP() << "this build has no mongosim";
  MongosimNode node;
  try {
    node.command("admin", "{ping: 1");
    FAIL() << "no error for text that is not JSON";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("{ping: 1"), std::string::npos) << e.what();
  }
}

TEST(MongosimNode, ProgramThatDoesNotStartIsAnError) {
  EXPECT_THROW(MongosimNode({.program = "/bin/false"}), std::runtime_error);
}

TEST(ReplicaSet, ReadyMeansAMajorityWriteWasAcknowledged) {
  if (mongosim_program().empty()) GTEST_SKIP() << "this build has no mongosim";
  ReplicaSet set({.members = 3});
  const int p = set.primary();
  ASSERT_GE(p, 0) << set.logs();
  // The harness's readiness write (db/db.h) reached a majority: at least two members hold it.
  int holding = 0;
  for (int i = 0; i < set.size(); ++i) {
    // A direct connection reads from a secondary too (the driver asks primaryPreferred).
    const nlohmann::json found = set.member(i).try_command("locklab_harness", {{"find", "ready"}});
    holding += found.contains("cursor") && !found["cursor"]["firstBatch"].empty() ? 1 : 0;
  }
  EXPECT_GE(holding, 2) << set.logs();
  set.pause(p);
  const int next = set.wait_for_primary(after(std::chrono::seconds(30)), p);
  EXPECT_GE(next, 0) << set.logs();
  EXPECT_NE(next, p);
}

// A member that crashed (its process a zombie nobody has reaped yet) is not reachable: the set's
// primary is decided by the others. What the model leaves out: a crash of mongosim's own; the
// test's SIGKILL, sent past the node so that nothing reaps the process, stands in for it.
TEST(ReplicaSet, ACrashedUnreapedMemberDoesNotHoldUpThePrimary) {
  if (mongosim_program().empty()) GTEST_SKIP() << "this build has no mongosim";
  ReplicaSet set({.members = 3});
  const int p = set.primary();
  ASSERT_GE(p, 0) << set.logs();
  const pid_t pid = set.member(p).pid();
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  ASSERT_TRUE(
      poll_until(after(std::chrono::seconds(10)), [&] { return process_state(pid) == 'Z'; }));
  const int next = set.wait_for_primary(after(std::chrono::seconds(30)), p);
  EXPECT_GE(next, 0) << set.logs();
  EXPECT_NE(next, p);
  EXPECT_EQ(set.member(p).pid(), pid) << "the test expected the node not to have reaped it";
}

// The set is initiated by the harness's Db::initiate with the test's priorities and settings.
TEST(ReplicaSet, TheConfigCarriesTheTestsPrioritiesAndSettings) {
  if (mongosim_program().empty()) GTEST_SKIP() << "this build has no mongosim";
  ReplicaSet set(
      {.members = 3, .priorities = {1, 1, 3}, .settings = {{"catchUpTimeoutMillis", 500}}});
  const nlohmann::json config =
      set.member(0).command("admin", R"({"replSetGetConfig": 1})")["config"];
  ASSERT_EQ(config["members"].size(), 3u) << config.dump();
  EXPECT_EQ(config["members"][2]["priority"].get<double>(), 3.0) << config.dump();
  EXPECT_EQ(config["settings"]["catchUpTimeoutMillis"].get<int64_t>(), 500) << config.dump();
  EXPECT_EQ(config["settings"]["electionTimeoutMillis"].get<int64_t>(), 1000) << config.dump();
  EXPECT_EQ(config["settings"]["heartbeatIntervalMillis"].get<int64_t>(), 200) << config.dump();
}

}  // namespace
}  // namespace locklab::testkit

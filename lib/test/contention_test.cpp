// Contention: 100 threads on one lock never see two holders; two OS processes contend (children
// of the harness's launcher); a killed holder's lock is taken over after its lease, with a higher
// token; the lost notification fires while the server is unreachable.
//
// Model: one mongosim member on loopback; threads of one process and processes of one host.
// Left out: failover (failover_test.cpp), clocks that are off (clock_off_test.cpp), a network
// between client and server.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "poll_until.h"
#include "run/process.h"
#include "temp_dir.h"
#include "test_server.h"

namespace mongolock::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class ContentionTest : public ServerTest {};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// 100 threads of one Provider, 3 rounds each: never two holders at once, no update lost, every
// release finds its hold, and the fencing tokens the holders saw, in the order they held, only
// grow.
void hundred_threads_never_see_two_holders(const std::string& uri, const Options& options) {
  constexpr int kThreads = 100;
  constexpr int kRoundsPerThread = 3;
  Provider provider(uri, fresh_database(), options);
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> failures{0};
  int64_t counter = 0;          // guarded only by the lock
  std::vector<int64_t> tokens;  // guarded only by the lock: in holding order
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      Lock lock = provider.create_lock("hundred");
      for (int round = 0; round < kRoundsPerThread; ++round) {
        try {
          // No timeout: the property is exclusion, not how fast 300 grants go round 100
          // threads (a TSan build on two busy cores had some wait past 120 s). A grant that
          // never comes hangs the test, and ctest's timeout reports it.
          Handle held = lock.acquire();
          if (inside.fetch_add(1) != 0) overlaps++;
          const int64_t seen = counter;
          tokens.push_back(held.fencing_token());
          std::this_thread::yield();
          counter = seen + 1;
          inside.fetch_sub(1);
          if (!held.release()) failures++;
        } catch (const Error& error) {
          std::fprintf(stderr, "%s\n", error.what());
          failures++;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(counter, kThreads * kRoundsPerThread);
  EXPECT_TRUE(std::is_sorted(tokens.begin(), tokens.end()) &&
              std::adjacent_find(tokens.begin(), tokens.end()) == tokens.end())
      << "fencing tokens did not grow in holding order";
}

TEST_F(ContentionTest, HundredThreadsNeverSeeTwoHolders) {
  hundred_threads_never_see_two_holders(server_->uri(), test_options());
}

// The same with the notify wait: here every release hands the lock to a waiter of its own
// Provider and wakes it from the release's reply (mongolock.h [notify]), the stream delivering
// each hand-over a second time. Left out: waiters in other processes (TwoProcesses... polls;
// scenario-notify.* run worker processes).
TEST_F(ContentionTest, HundredNotifyThreadsNeverSeeTwoHolders) {
  Options options = test_options();
  options.backoff = Backoff::kNotify;
  hundred_threads_never_see_two_holders(server_->uri(), options);
}

// A contender process is a child of the harness's own launcher (killed and reaped by the
// Supervisor whatever the test's outcome), its stdout and stderr in a file of the test's TempDir.
constexpr int64_t kContenderExitMs = 300'000;  // a deadline against a hang, not a speed

pid_t spawn_contender(locklab::Supervisor& supervisor, std::vector<std::string> args,
                      const std::string& log_path) {
  args.insert(args.begin(), MONGOLOCK_CONTENDER_PATH);
  return supervisor.spawn({.argv = std::move(args), .netns = "", .log_path = log_path});
}

int exit_code_of(locklab::Supervisor& supervisor, pid_t pid) {
  const std::optional<locklab::ExitStatus> status = supervisor.wait_exit(pid, kContenderExitMs);
  return status ? status->code : -1;
}

TEST_F(ContentionTest, TwoProcessesContendOnOneLock) {
  constexpr int kIterations = 40;
  const std::string db = fresh_database();
  const locklab::testkit::TempDir dir("contention");
  const std::vector<std::string> args = {
      "count", server_->uri(), db, "two-processes", std::to_string(kIterations), dir.path()};
  locklab::Supervisor supervisor;
  const pid_t first = spawn_contender(supervisor, args, dir.file("first.log"));
  const pid_t second = spawn_contender(supervisor, args, dir.file("second.log"));
  EXPECT_EQ(exit_code_of(supervisor, first), 0) << read_text(dir.file("first.log"));
  EXPECT_EQ(exit_code_of(supervisor, second), 0) << read_text(dir.file("second.log"));
  long counter = 0;
  std::ifstream(dir.file("counter")) >> counter;
  EXPECT_EQ(counter, 2 * kIterations) << "a read-modify-write was lost: two holders overlapped";
}

TEST_F(ContentionTest, KilledHolderIsTakenOverAfterItsLeaseWithAHigherToken) {
  const std::string db = fresh_database();
  const locklab::testkit::TempDir dir("contention");
  locklab::Supervisor supervisor;
  // A 4 s lease: the live holder must keep it by its extensions until the test's own attempt
  // has seen it held, and a 1 s lease lapsed in a slow, sanitized run before that attempt ran.
  const pid_t child = spawn_contender(supervisor, {"hold", server_->uri(), db, "abandoned", "4000"},
                                      dir.file("holder.log"));
  long long child_token = 0;
  ASSERT_TRUE(locklab::testkit::poll_until(locklab::testkit::after(seconds(60)),
                                           [&] {
                                             return std::sscanf(
                                                        read_text(dir.file("holder.log")).c_str(),
                                                        "held %lld", &child_token) == 1;
                                           }))
      << "the holder process never acquired: " << read_text(dir.file("holder.log"));
  Provider provider(server_->uri(), db, test_options());
  Lock lock = provider.create_lock("abandoned");
  EXPECT_FALSE(lock.try_acquire().has_value()) << "the other process's hold was ignored";
  ASSERT_TRUE(supervisor.signal(child, SIGKILL));
  ASSERT_TRUE(supervisor.wait_exit(child, kContenderExitMs).has_value());
  // The dead holder's last lease end on the server clock (no extension can move it now).
  auto before = provider.inspect("abandoned");
  ASSERT_TRUE(before && before->exclusive) << "the dead holder's hold vanished";
  const auto dead_lease_end = before->exclusive->expires_at;
  Handle held = lock.acquire(seconds(20));
  EXPECT_GT(held.fencing_token(), child_token);
  auto after = provider.inspect("abandoned");
  ASSERT_TRUE(after && after->exclusive);
  EXPECT_EQ(after->exclusive->acquisition_id, held.acquisition_id());
  EXPECT_GE(after->exclusive->acquired_at, dead_lease_end)
      << "the lock was taken over before the dead holder's lease ended";
}

// Its own server: it is stopped with SIGSTOP, which would stall every other test.
TEST(LostNotification, FiresWhileTheServerIsUnreachable) {
  std::unique_ptr<ReplicaSet> server = start_server();
  if (!server) GTEST_SKIP() << "mongosim is not part of this build";
  Options options;
  options.create_index = false;
  options.expiry_ms = 1000;
  // A renewal sent into the paused server hangs for a minute: the watchdog must not wait for it.
  Provider provider(server->uri("socketTimeoutMS=60000&serverSelectionTimeoutMS=60000"),
                    fresh_database(), options);
  Handle held = provider.create_lock("partitioned").acquire(seconds(5));
  std::atomic<bool> called{false};
  held.on_lost([&] { called = true; });
  server->member(0).pause();
  const bool lost = held.wait_lost(seconds(10));
  const bool token_requested = held.lost_token().stop_requested();
  server->member(0).resume();
  EXPECT_TRUE(lost) << "no lost notification while the server was unreachable";
  EXPECT_TRUE(token_requested);
  EXPECT_TRUE(called);
}

}  // namespace
}  // namespace mongolock::test

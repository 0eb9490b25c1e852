// Cleanup: `locklab run` killed mid-run (SIGINT, SIGKILL) leaves no namespace, nft table,
// process or temporary directory with its prefix. Also the name parsing the sweep relies on.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "netns.h"
#include "process.h"
#include "run_cleanup.h"

namespace locklab {
namespace {

namespace fs = std::filesystem;

#ifndef LOCKLAB_BIN_DIR
#define LOCKLAB_BIN_DIR ""
#endif

template <typename F>
bool eventually(F done, int64_t deadline_ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(deadline_ms);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// Pids of processes whose command line mentions `needle`.
std::vector<pid_t> processes_mentioning(const std::string& needle) {
  std::vector<pid_t> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const pid_t pid = std::stoi(name);
    if (pid != getpid() && cmdline.find(needle) != std::string::npos && process_state(pid) != 'Z') {
      out.push_back(pid);
    }
  }
  return out;
}

std::vector<std::string> temp_dirs(const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator("/tmp")) {
    if (entry.path().filename().string().starts_with(prefix + "-")) {
      out.push_back(entry.path().string());
    }
  }
  return out;
}

TEST(RunNames, OwnerOfParsesPrefixes) {
  EXPECT_EQ(owner_of("ll-1234-w1"), 1234);
  EXPECT_EQ(owner_of("ll-1234-br"), 1234);
  EXPECT_EQ(owner_of("ll-x-w1"), 0);
  EXPECT_EQ(owner_of("lk-1234-w1"), 0);
  EXPECT_EQ(owner_of("ll-1234"), 0);
}

TEST(RunCleanup, SweepRemovesADeadRunsLeftovers) {
  if (!netns_supported()) GTEST_SKIP() << "needs root with ip and nft to build namespaces";
  // A pid that is certainly dead: a child we reaped.
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  const std::string prefix = "ll-" + std::to_string(child);
  run_tool_checked({"ip", "netns", "add", prefix + "-w1"});
  const std::string dir = make_run_temp_dir(prefix);
  sweep_stale_runs();
  EXPECT_TRUE(list_namespaces(prefix + "-").empty());
  EXPECT_FALSE(fs::exists(dir));
}

class KilledRun : public testing::TestWithParam<int> {};

TEST_P(KilledRun, LeavesNothingBehind) {
  if (!netns_supported()) GTEST_SKIP() << "needs root with ip and nft to build namespaces";
  const std::string bin = LOCKLAB_BIN_DIR;
  if (bin.empty() || !fs::exists(bin + "/locklab") || !fs::exists(bin + "/mongosim") ||
      !fs::exists(bin + "/locklab-worker")) {
    GTEST_SKIP() << "needs locklab, locklab-worker and mongosim built in " << bin;
  }
  const int sig = GetParam();
  const std::string out = testing::TempDir() + "/cleanup-run-" + std::to_string(sig);
  fs::remove_all(out);
  Supervisor supervisor;
  const pid_t harness = supervisor.spawn(
      {{bin + "/locklab", "run", std::string(LOCKLAB_SOURCE_DIR) + "/scenarios/demo.toml",
        "--cluster", "netns", "--seed", "7", "--out", out},
       "",
       out + ".log"});
  const std::string prefix = "ll-" + std::to_string(harness);
  // Mid-run: the workers have started appending to the history.
  ASSERT_TRUE(eventually(
      [&] {
        std::ifstream in(out + "/history.jsonl");
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        return text.find("\"acquire\"") != std::string::npos;
      },
      60'000))
      << "the run never got going; see " << out << ".log";
  EXPECT_FALSE(list_namespaces(prefix + "-").empty());
  ASSERT_TRUE(supervisor.signal(harness, sig));
  auto status = supervisor.wait_exit(harness, 30'000);
  ASSERT_TRUE(status.has_value()) << "locklab did not exit after signal " << sig;
  if (sig == SIGINT) {
    EXPECT_EQ(status->code, 2);
  }
  // The janitor finishes the job after a SIGKILL; give it a bounded moment.
  EXPECT_TRUE(eventually([&] { return list_namespaces(prefix + "-").empty(); }, 20'000));
  EXPECT_TRUE(eventually([&] { return temp_dirs(prefix).empty(); }, 20'000));
  EXPECT_TRUE(eventually([&] { return processes_mentioning(out).empty(); }, 20'000))
      << processes_mentioning(out).size() << " processes of the run remain";
  EXPECT_TRUE(eventually([&] { return processes_mentioning(prefix + "-").empty(); }, 20'000));
  fs::remove_all(out);  // the run's output directory is the test's own temp data
  fs::remove(out + ".log");
}

INSTANTIATE_TEST_SUITE_P(Signals, KilledRun, testing::Values(SIGINT, SIGKILL),
                         [](const testing::TestParamInfo<int>& param) {
                           return param.param == SIGINT ? std::string("SIGINT")
                                                        : std::string("SIGKILL");
                         });

}  // namespace
}  // namespace locklab

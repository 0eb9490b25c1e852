// A worker whose wall clock the harness moves (clock-skew-worker, clock-jump-worker) runs under
// libfaketime with the project's liblocklab-faketime-sleep.so preloaded first
// (faketime_sleep_preload.cpp): a Python worker's time.sleep, an absolute clock_nanosleep on
// CLOCK_MONOTONIC, fails with EINVAL under libfaketime 0.9.10 alone. Real python3, the real
// library, the environment the harness gives a worker, then a real run of a Python client under
// a clock fault. Skipped where libfaketime or /usr/bin/python3 is missing.
// Left out: runtimes that do not call libc for time (Go's: libfaketime moves nothing there) and
// sleeps to a CLOCK_REALTIME deadline (handed to libfaketime, which serves them).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "db/faketime_clock.h"
#include "programs.h"
#include "run/backend.h"
#include "run/process.h"
#include "temp_dir.h"

namespace locklab {
namespace {

bool python_and_faketime() {
  return !find_libfaketime().empty() && access("/usr/bin/python3", X_OK) == 0;
}

// python3 under a wall clock moved `offset_ms`, with the environment a worker gets.
ToolResult python_under_moved_clock(const testkit::TempDir& dir, int64_t offset_ms,
                                    const std::string& preload, const std::string& program) {
  write_clock_file(dir.file("clock"), offset_ms);
  std::vector<std::string> argv = {"/usr/bin/env", "-u", "FAKETIME"};
  for (std::string& entry : faketime_environment(preload, dir.file("clock"))) argv.push_back(entry);
  argv.insert(argv.end(), {"/usr/bin/python3", "-c", program});
  return run_tool(argv, "", "", 60'000);
}

constexpr const char* kSleepThenPrintWallClock =
    "import time\n"
    "start = time.monotonic()\n"
    "time.sleep(0.05)\n"
    "assert time.monotonic() - start >= 0.05\n"
    "print(int(time.time()))\n";

TEST(WorkerClock, APythonWorkerSleepsWhileItsWallClockIsAMinuteAhead) {
  if (!python_and_faketime()) GTEST_SKIP() << "needs libfaketime and /usr/bin/python3";
  testkit::TempDir dir;
  const int64_t before_s = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  const ToolResult r =
      python_under_moved_clock(dir, 60'000, worker_faketime_preload(), kSleepThenPrintWallClock);
  ASSERT_EQ(r.code, 0) << r.output;
  const int64_t printed_s = std::stoll(r.output);
  // The clock was moved (a minute, give or take the process's own run), not left alone.
  EXPECT_GE(printed_s - before_s, 50) << r.output;
  EXPECT_LE(printed_s - before_s, 70) << r.output;
}

// What the preloaded library is for: libfaketime alone fails the same sleep. Should a libfaketime
// without the fault be installed, this says so instead of failing: the library is then harmless.
TEST(WorkerClock, LibfaketimeAloneFailsThatSleepHere) {
  if (!python_and_faketime()) GTEST_SKIP() << "needs libfaketime and /usr/bin/python3";
  testkit::TempDir dir;
  const ToolResult r =
      python_under_moved_clock(dir, 60'000, find_libfaketime(), kSleepThenPrintWallClock);
  if (r.code == 0) GTEST_SKIP() << "this libfaketime sleeps on CLOCK_MONOTONIC by itself";
  EXPECT_NE(r.output.find("OSError: [Errno 22] Invalid argument"), std::string::npos) << r.output;
}

// The preloaded clock_nanosleep itself, loaded into this process (no libfaketime behind it):
// glibc's answers for what goes to the kernel, errno untouched.
TEST(WorkerClock, ThePreloadedSleepAnswersAsGlibcDoes) {
  void* library = dlopen((std::string(LOCKLAB_BIN_DIR) + "/liblocklab-faketime-sleep.so").c_str(),
                         RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  using ClockNanosleep = int (*)(clockid_t, int, const timespec*, timespec*);
  const auto sleep = reinterpret_cast<ClockNanosleep>(dlsym(library, "clock_nanosleep"));
  ASSERT_NE(sleep, nullptr);
  const timespec short_wait = {0, 1'000'000};
  const timespec past = {0, 0};
  errno = 1234;
  EXPECT_EQ(sleep(CLOCK_MONOTONIC, 0, &short_wait, nullptr), 0);
  EXPECT_EQ(sleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &past, nullptr), 0);
  EXPECT_EQ(sleep(CLOCK_BOOTTIME, TIMER_ABSTIME, &past, nullptr), 0);
  EXPECT_EQ(sleep(CLOCK_THREAD_CPUTIME_ID, 0, &short_wait, nullptr), EINVAL);
  const timespec bad = {0, 2'000'000'000};
  EXPECT_EQ(sleep(CLOCK_MONOTONIC, 0, &bad, nullptr), EINVAL);
  EXPECT_EQ(sleep(static_cast<clockid_t>(9999), 0, &short_wait, nullptr), EINVAL);
  EXPECT_EQ(errno, 1234);
  dlclose(library);
}

// The LD_PRELOAD list: what ld.so would split or drop is refused, naming the path.
TEST(WorkerClock, APreloadPathWithASpaceOrAColonIsRefused) {
  EXPECT_EQ(ld_preload_list({"/a/x.so", "/b/y.so"}), "/a/x.so:/b/y.so");
  for (const std::string bad : {"/opt/my tools/x.so", "/opt/a:b/x.so", "/opt/x$LIB/x.so", ""}) {
    try {
      ld_preload_list({"/a/x.so", bad});
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot preload \"" + bad + "\""), std::string::npos)
          << e.what();
    }
  }
}

// A run of a Python client (test-well-behaved: good events, then time.sleep until SIGTERM)
// whose workers' clocks are skewed and jumped: no worker ends on its own, the run is judged.
TEST(WorkerClock, ARunOfAPythonClientUnderWorkerClockFaultsHasNoCrash) {
  if (!python_and_faketime()) GTEST_SKIP() << "needs libfaketime and /usr/bin/python3";
  if (!locklab::testing::programs_built()) GTEST_SKIP() << "needs locklab and mongosim built";
  testkit::TempDir dir;
  std::ofstream(dir.file("s.toml"))
      << "[workload]\nclient = \"test-well-behaved\"\nworkers = 2\nduration_ms = 2500\n"
         "[nemesis]\nquiet_ms = 0\n"
         "[[nemesis.fault]]\nat_ms = 0\nfault = \"clock-skew-worker\"\ntarget = \"w1\"\n"
         "offset_ms = 60000\nduration_ms = 1000\n"
         "[[nemesis.fault]]\nat_ms = 0\nfault = \"clock-jump-worker\"\ntarget = \"w2\"\n"
         "jump_ms = -30000\nduration_ms = 1000\n";
  const ToolResult r = testing::run_on_loopback(dir.file("s.toml"), dir.file("out"), 120'000);
  EXPECT_NE(r.code, 2) << r.output;
  EXPECT_EQ(r.output.find("ended on its own"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("Invalid argument"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace locklab

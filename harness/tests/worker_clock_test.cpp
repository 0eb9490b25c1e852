// A worker whose wall clock the harness moves (clock-skew-worker, clock-jump-worker) runs under
// libfaketime with the project's liblocklab-faketime-sleep.so preloaded first
// (faketime_sleep_preload.cpp): a Python worker's time.sleep, an absolute clock_nanosleep on
// CLOCK_MONOTONIC, fails with EINVAL under libfaketime 0.9.10 alone. Real python3, the real
// library, the environment the harness gives a worker, then a real run of a Python client under
// a clock fault. Skipped where libfaketime or /usr/bin/python3 is missing.
// Processes the faults cannot reach (run/clock_reach.h) fail the run naming themselves: a real
// Go program (built here with the go tool, static and with cgo) and a static C++ worker.
// Left out: sleeps to a CLOCK_REALTIME deadline (handed to libfaketime, which serves them), and
// a worker that starts its unreachable process only after its first line (not checked).
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
#include "run/clock_reach.h"
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

// The go tool, or "" (install-deps.sh installs golang-go).
std::string go_tool() {
  for (const char* path : {"/usr/bin/go", "/usr/lib/go/bin/go", "/usr/local/go/bin/go"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

// Builds the Go worker into `dir`; `cgo`: linked by the C toolchain against libc (dynamic, so
// libfaketime is loaded into it, and still moves nothing). Returns the program's path.
std::string build_go_worker(const testkit::TempDir& dir, bool cgo) {
  const std::string out = dir.file(cgo ? "go-worker-cgo" : "go-worker");
  std::vector<std::string> argv = {"/usr/bin/env",
                                   "GOCACHE=" + dir.file("gocache"),
                                   "GOPATH=" + dir.file("gopath"),
                                   "GO111MODULE=off",
                                   std::string("CGO_ENABLED=") + (cgo ? "1" : "0"),
                                   go_tool(),
                                   "build",
                                   "-o",
                                   out};
  if (cgo) argv.push_back("-ldflags=-linkmode=external");
  argv.push_back(std::string(LOCKLAB_SOURCE_DIR) +
                 "/harness/tests/clients/go_clock_worker/main.go");
  const ToolResult built = run_tool(argv, "", "", 120'000);
  if (built.code != 0) throw std::runtime_error("go build: " + built.output);
  return out;
}

TEST(ClockReach, GoProgramsAreToldByTheirSectionsAndOthersAreNot) {
  if (go_tool().empty()) GTEST_SKIP() << "needs the go tool (golang-go)";
  testkit::TempDir dir;
  EXPECT_TRUE(is_go_program(build_go_worker(dir, false)));
  EXPECT_TRUE(is_go_program(build_go_worker(dir, true)));
  EXPECT_FALSE(is_go_program("/bin/sh"));
  EXPECT_FALSE(is_go_program(std::string(LOCKLAB_BIN_DIR) + "/static-clock-worker"));
  EXPECT_FALSE(is_go_program(dir.file("missing")));
  std::ofstream(dir.file("text")) << "#!/bin/sh\necho .go.buildinfo\n";
  EXPECT_FALSE(is_go_program(dir.file("text")));
  // An ELF cut short: its section headers are past the end.
  {
    std::ifstream in(dir.file("go-worker"), std::ios::binary);
    std::string head(4096, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    std::ofstream(dir.file("cut"), std::ios::binary) << head;
  }
  EXPECT_FALSE(is_go_program(dir.file("cut")));
}

// What the check stands on: a Go program's wall clock does not move under libfaketime, as a C
// program's (date) does.
TEST(ClockReach, LibfaketimeMovesDateAndNotAGoProgram) {
  if (go_tool().empty() || find_libfaketime().empty()) GTEST_SKIP() << "needs go and libfaketime";
  testkit::TempDir dir;
  write_clock_file(dir.file("clock"), 86'400'000);  // a day ahead
  const auto wall_s_under_faketime = [&](const std::string& program) {
    // The Go worker prints nothing but fails without --history; date prints the epoch seconds.
    std::vector<std::string> argv = {"/usr/bin/env", "-u", "FAKETIME"};
    for (std::string& e : faketime_environment(worker_faketime_preload(), dir.file("clock")))
      argv.push_back(e);
    argv.insert(argv.end(), {program, "+%s"});
    return run_tool(argv, "", "", 30'000);
  };
  const int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  const ToolResult date = wall_s_under_faketime("/bin/date");
  ASSERT_EQ(date.code, 0) << date.output;
  EXPECT_GE(std::stoll(date.output) - now_s, 86'000) << date.output;
  // A Go `date`: the go tool's own `go env GOROOT` does not print time, so build a tiny one.
  const std::string source = dir.file("godate.go");
  std::ofstream(source) << "package main\nimport (\"fmt\"; \"time\")\n"
                           "func main() { fmt.Println(time.Now().Unix()) }\n";
  for (const bool cgo : {false, true}) {
    const std::string out = dir.file(cgo ? "godate-cgo" : "godate");
    std::vector<std::string> argv = {"/usr/bin/env",
                                     "GOCACHE=" + dir.file("gocache"),
                                     "GOPATH=" + dir.file("gopath"),
                                     "GO111MODULE=off",
                                     std::string("CGO_ENABLED=") + (cgo ? "1" : "0"),
                                     go_tool(),
                                     "build",
                                     "-o",
                                     out};
    if (cgo) argv.push_back("-ldflags=-linkmode=external");
    argv.push_back(source);
    const ToolResult built = run_tool(argv, "", "", 120'000);
    ASSERT_EQ(built.code, 0) << built.output;
    const ToolResult go = wall_s_under_faketime(out);
    ASSERT_EQ(go.code, 0) << go.output;
    EXPECT_LT(std::stoll(go.output) - now_s, 3600) << "cgo " << cgo << ": " << go.output;
  }
}

// A run of `program` (a manifest client in `dir`) with w1's clock skewed.
ToolResult run_client_under_skew(const testkit::TempDir& dir, const std::string& program) {
  std::ofstream(dir.file("client.toml"))
      << "name = \"clock-reach-test\"\ndescription = \"a worker clock test's worker\"\n"
         "program = \""
      << program << "\"\nworkloads = [\"mutex\"]\nfencing_tokens = false\n";
  std::ofstream(dir.file("s.toml"))
      << "[workload]\nclient = \"client.toml\"\nworkers = 2\nduration_ms = 2500\n"
         "[nemesis]\nquiet_ms = 0\n"
         "[[nemesis.fault]]\nat_ms = 0\nfault = \"clock-skew-worker\"\ntarget = \"w1\"\n"
         "offset_ms = 60000\nduration_ms = 1000\n";
  return testing::run_on_loopback(dir.file("s.toml"), dir.file("out"), 120'000);
}

// The run fails naming each worker and why; a verdict would claim a clock fault that never was.
void expect_unreachable(const ToolResult& r, const std::string& why) {
  EXPECT_EQ(r.code, 2) << r.output;
  for (const std::string worker : {"w1", "w2"}) {
    EXPECT_NE(r.output.find(worker + ": worker clock faults cannot move its clock: process "),
              std::string::npos)
        << worker << "\n"
        << r.output;
  }
  EXPECT_NE(r.output.find(why), std::string::npos) << r.output;
}

TEST(ClockReach, ARunOfAGoWorkerUnderAWorkerClockFaultFailsSayingWhy) {
  if (go_tool().empty() || find_libfaketime().empty()) GTEST_SKIP() << "needs go and libfaketime";
  if (!locklab::testing::programs_built()) GTEST_SKIP() << "needs locklab and mongosim built";
  for (const bool cgo : {false, true}) {
    testkit::TempDir dir;
    SCOPED_TRACE(cgo ? "cgo" : "static");
    const std::string program = build_go_worker(dir, cgo);
    expect_unreachable(run_client_under_skew(dir, program),
                       program + ") is a Go program, and Go reads the time without libc");
  }
}

TEST(ClockReach, ARunOfAStaticWorkerUnderAWorkerClockFaultFailsSayingWhy) {
  if (find_libfaketime().empty()) GTEST_SKIP() << "needs libfaketime";
  if (!locklab::testing::programs_built()) GTEST_SKIP() << "needs locklab and mongosim built";
  testkit::TempDir dir;
  const std::string program = std::string(LOCKLAB_BIN_DIR) + "/static-clock-worker";
  expect_unreachable(run_client_under_skew(dir, program), program + ") has not loaded libfaketime");
}

// The same static worker without a worker clock fault: nothing to reach, no such problem.
TEST(ClockReach, AStaticWorkerWithoutAWorkerClockFaultRunsAsAnyWorker) {
  if (!locklab::testing::programs_built()) GTEST_SKIP() << "needs locklab and mongosim built";
  testkit::TempDir dir;
  std::ofstream(dir.file("client.toml"))
      << "name = \"clock-reach-test\"\ndescription = \"a worker clock test's worker\"\n"
         "program = \""
      << LOCKLAB_BIN_DIR << "/static-clock-worker\"\nworkloads = [\"mutex\"]\n"
      << "fencing_tokens = false\n";
  std::ofstream(dir.file("s.toml"))
      << "[workload]\nclient = \"client.toml\"\nworkers = 2\nduration_ms = 1500\n";
  const ToolResult r = testing::run_on_loopback(dir.file("s.toml"), dir.file("out"), 120'000);
  EXPECT_NE(r.code, 2) << r.output;
  EXPECT_EQ(r.output.find("worker clock faults"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace locklab

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
#include <elf.h>
#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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

// Runs `argv` (an env command line that preloads libfaketime) and then removes the /dev/shm
// pair libfaketime made under that process's pid, as the harness does for a worker
// (remove_faketime_files): a shell runs it as a child, to know the pid.
ToolResult run_under_faketime(const std::vector<std::string>& argv, int64_t timeout_ms) {
  std::vector<std::string> shell = {
      "/bin/sh", "-c",
      "\"$@\" & child=$!; wait $child; code=$?; "
      "rm -f /dev/shm/faketime_shm_$child /dev/shm/sem.faketime_sem_$child; exit $code",
      "sh"};
  shell.insert(shell.end(), argv.begin(), argv.end());
  return run_tool(shell, "", "", timeout_ms);
}

// python3 under a wall clock moved `offset_ms`, with the environment a worker gets.
ToolResult python_under_moved_clock(const testkit::TempDir& dir, int64_t offset_ms,
                                    const std::string& preload, const std::string& program) {
  write_clock_file(dir.file("clock"), offset_ms);
  std::vector<std::string> argv = {"/usr/bin/env", "-u", "FAKETIME"};
  for (std::string& entry : faketime_environment(preload, dir.file("clock"))) argv.push_back(entry);
  argv.insert(argv.end(), {"/usr/bin/python3", "-c", program});
  return run_under_faketime(argv, 60'000);
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
  // libfaketime's shared memory: the pair each worker's first process made is gone
  // (db/faketime_clock.h remove_faketime_files). A loopback run's workers use the host's /dev/shm.
  std::ifstream history(dir.file("out/history.jsonl"));
  int spawns = 0;
  for (std::string line; std::getline(history, line);) {
    const nlohmann::json event = nlohmann::json::parse(line);
    if (event.value("f", "") != "spawn") continue;
    ++spawns;
    const std::string pid = std::to_string(event["value"]["pid"].get<int>());
    for (const std::string& name : {"faketime_shm_" + pid, "sem.faketime_sem_" + pid}) {
      EXPECT_FALSE(std::filesystem::exists("/dev/shm/" + name)) << name;
    }
  }
  EXPECT_EQ(spawns, 2);
}

// The go tool, or "" (install-deps.sh installs golang-go).
std::string go_tool() {
  for (const char* path : {"/usr/bin/go", "/usr/lib/go/bin/go", "/usr/local/go/bin/go"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

// Builds the Go program `source` into `dir` as `name`; `cgo`: linked by the C toolchain
// against libc (dynamic, so libfaketime is loaded into it, and still moves nothing). Returns the
// program's path; throws with go's output when the build fails.
std::string build_go(const testkit::TempDir& dir, const std::string& source,
                     const std::string& name, bool cgo) {
  const std::string out = dir.file(name);
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
  if (built.code != 0) throw std::runtime_error("go build: " + built.output);
  return out;
}

// The Go worker (harness/tests/clients/go_clock_worker).
std::string build_go_worker(const testkit::TempDir& dir, bool cgo) {
  return build_go(
      dir, std::string(LOCKLAB_SOURCE_DIR) + "/harness/tests/clients/go_clock_worker/main.go",
      cgo ? "go-worker-cgo" : "go-worker", cgo);
}

TEST(ClockReach, GoProgramsAndStaticBinariesAreToldFromTheirHeaders) {
  if (go_tool().empty()) GTEST_SKIP() << "needs the go tool (golang-go)";
  testkit::TempDir dir;
  const std::string go = build_go_worker(dir, false);
  const ElfFacts static_go = elf_facts(go);
  EXPECT_TRUE(static_go.go && static_go.elf && !static_go.dynamic);
  const ElfFacts cgo = elf_facts(build_go_worker(dir, true));
  EXPECT_TRUE(cgo.go && cgo.dynamic);
  const ElfFacts sh = elf_facts("/bin/sh");
  EXPECT_TRUE(sh.elf && sh.dynamic && !sh.go);
  EXPECT_NE(sh.interpreter.find("ld-linux"), std::string::npos) << sh.interpreter;
  const ElfFacts c_static = elf_facts(std::string(LOCKLAB_BIN_DIR) + "/static-clock-worker");
  EXPECT_TRUE(c_static.elf && !c_static.dynamic && !c_static.go);
  EXPECT_FALSE(elf_facts(dir.file("missing")).elf);
  std::ofstream(dir.file("text")) << "#!/bin/sh\necho .go.buildinfo\n";
  EXPECT_FALSE(elf_facts(dir.file("text")).elf);
  std::string bytes;
  {
    std::ifstream in(go, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(bytes.size(), sizeof(Elf64_Ehdr));
  // Section headers gone (e_shoff, e_shnum, e_shstrndx zeroed): its PT_NOTE still says Go.
  std::string stripped = bytes;
  Elf64_Ehdr header{};
  std::memcpy(&header, stripped.data(), sizeof header);
  header.e_shoff = 0;
  header.e_shnum = 0;
  header.e_shstrndx = 0;
  std::memcpy(stripped.data(), &header, sizeof header);
  std::ofstream(dir.file("stripped"), std::ios::binary) << stripped;
  EXPECT_TRUE(elf_facts(dir.file("stripped")).go);
  // An ELF cut after its program headers: what they point to is past the end, so nothing in
  // them is read, and it is not taken for Go.
  Elf64_Ehdr original{};
  std::memcpy(&original, bytes.data(), sizeof original);
  std::ofstream(dir.file("cut"), std::ios::binary)
      << bytes.substr(0, original.e_phoff + original.e_phnum * sizeof(Elf64_Phdr));
  EXPECT_TRUE(elf_facts(dir.file("cut")).elf);
  EXPECT_FALSE(elf_facts(dir.file("cut")).go);
  EXPECT_EQ(check_worker_program(go).find(go + " is a Go program"), 0u);
  EXPECT_EQ(check_worker_program("/bin/sh"), "");
  EXPECT_EQ(check_worker_program(dir.file("text")), "");
}

// The run-time check over a /proc made here (a unit test of the classification): one process
// of group 4242 whose executable and memory map are written below.
class FakeProc {
 public:
  FakeProc() {
    std::filesystem::create_symlink(std::to_string(getpid()), dir_.file("self"));
    std::filesystem::create_directories(dir_.file("77"));
    std::ofstream(dir_.file("77/stat")) << "77 (a (b) c) S 1 4242 4242 0 -1\n";
  }
  std::string check(const std::string& exe, const std::vector<std::string>& mapped) {
    std::filesystem::remove(dir_.file("77/exe"));
    std::filesystem::create_symlink(exe, dir_.file("77/exe"));
    std::ofstream maps(dir_.file("77/maps"));
    for (const std::string& file : mapped) {
      maps << "7f0000000000-7f0000001000 r-xp 00000000 08:01 1234     " << file << "\n";
    }
    maps << "7ffd00000000-7ffd00001000 r-xp 00000000 00:00 0        [vdso]\n";
    maps.close();
    return clock_fault_unreachable(4242, "/x/libfaketimeMT.so.1",
                                   {"/x/liblocklab-faketime-sleep.so", "/x/libfaketimeMT.so.1"},
                                   dir_.path());
  }
  const testkit::TempDir& dir() const { return dir_; }

 private:
  testkit::TempDir dir_;
};

TEST(ClockReach, EachProcessIsJudgedByItsExecutableAndMemoryMap) {
  FakeProc proc;
  const std::string sh = std::filesystem::canonical("/bin/sh").string();
  const std::string loader = std::filesystem::canonical(elf_facts("/bin/sh").interpreter).string();
  EXPECT_EQ(proc.check(sh, {sh, loader, "/x/liblocklab-faketime-sleep.so", "/x/libfaketimeMT.so.1",
                            "/usr/lib/x86_64-linux-gnu/libc.so.6"}),
            "");
  // exec'd a moment ago: the loader has mapped the first preload and nothing else yet
  EXPECT_EQ(proc.check(sh, {sh, loader, "/x/liblocklab-faketime-sleep.so"}), "");
  const std::string cleared = proc.check(sh, {sh, loader, "/usr/lib/x86_64-linux-gnu/libc.so.6"});
  EXPECT_EQ(cleared.find("process 77 (" + sh + ") has not loaded libfaketime"), 0u) << cleared;
  EXPECT_NE(cleared.find("LD_PRELOAD was cleared"), std::string::npos) << cleared;
  const std::string c_static = std::string(LOCKLAB_BIN_DIR) + "/static-clock-worker";
  EXPECT_NE(proc.check(c_static, {c_static}).find("is a static binary"), std::string::npos);
  // A program run through the loader itself (exec ld.so program): the loader looks static, but
  // libfaketime is loaded, which is what counts.
  EXPECT_EQ(proc.check(loader, {loader, "/x/liblocklab-faketime-sleep.so", "/x/libfaketimeMT.so.1",
                                "/usr/lib/x86_64-linux-gnu/libc.so.6"}),
            "");
  // An executable this process may not read (here: gone from under a live process).
  EXPECT_NE(proc.check(proc.dir().file("nothing-here"), {sh}).find("cannot be checked"),
            std::string::npos);
}

// Go code in a shared library (a c-shared Go library loaded by a Python or C program) reads the
// time without libc just the same.
TEST(ClockReach, AGoLibraryInTheMapIsFound) {
  if (go_tool().empty()) GTEST_SKIP() << "needs the go tool (golang-go)";
  FakeProc proc;
  const std::string go_library = proc.dir().file("libgo.so");
  std::filesystem::copy_file(build_go_worker(proc.dir(), true), go_library);
  const std::string sh = std::filesystem::canonical("/bin/sh").string();
  const std::string loader = std::filesystem::canonical(elf_facts("/bin/sh").interpreter).string();
  const std::string why = proc.check(sh, {sh, loader, "/x/libfaketimeMT.so.1", go_library});
  EXPECT_NE(why.find("has loaded " + go_library + ", Go code"), std::string::npos) << why;
}

// A /proc of another PID namespace (a sandbox that could not mount its own) shows other pids:
// the check says it cannot be made rather than finding nothing wrong.
TEST(ClockReach, AProcOfAnotherPidNamespaceIsNotTakenForOurs) {
  testkit::TempDir dir;
  std::filesystem::create_symlink("1", dir.file("self"));
  EXPECT_NE(
      clock_fault_unreachable(4242, "/x/f.so", {"/x/f.so"}, dir.path()).find("cannot be checked"),
      std::string::npos);
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
    return run_under_faketime(argv, 30'000);
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
    const std::string out = build_go(dir, source, cgo ? "godate-cgo" : "godate", cgo);
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

// The client's program is a Go program or a static binary: refused before any worker starts.
void expect_refused_at_start(const ToolResult& r, const std::string& why) {
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("worker clock faults cannot move the workers' clocks: " + why),
            std::string::npos)
      << r.output;
}

TEST(ClockReach, ARunOfAGoWorkerUnderAWorkerClockFaultFailsSayingWhy) {
  if (go_tool().empty() || find_libfaketime().empty()) GTEST_SKIP() << "needs go and libfaketime";
  if (!locklab::testing::programs_built()) GTEST_SKIP() << "needs locklab and mongosim built";
  for (const bool cgo : {false, true}) {
    testkit::TempDir dir;
    SCOPED_TRACE(cgo ? "cgo" : "static");
    const std::string program = build_go_worker(dir, cgo);
    expect_refused_at_start(run_client_under_skew(dir, program),
                            program + " is a Go program, and Go reads the time without libc");
    // Behind a shell script that runs it as a child: found in the worker's process group.
    const std::string wrapper = dir.file("wrapper.sh");
    std::ofstream(wrapper) << "#!/bin/sh\n\"" << program << "\" \"$@\"\n";
    std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
    expect_unreachable(run_client_under_skew(dir, wrapper),
                       program + ") is a Go program, and Go reads the time without libc");
  }
}

TEST(ClockReach, ARunOfAStaticWorkerUnderAWorkerClockFaultFailsSayingWhy) {
  if (find_libfaketime().empty()) GTEST_SKIP() << "needs libfaketime";
  if (!locklab::testing::programs_built()) GTEST_SKIP() << "needs locklab and mongosim built";
  testkit::TempDir dir;
  const std::string program = std::string(LOCKLAB_BIN_DIR) + "/static-clock-worker";
  expect_refused_at_start(run_client_under_skew(dir, program), program + " is a static binary");
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

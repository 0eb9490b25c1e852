// Cleanup: `locklab run` killed mid-run (SIGINT, SIGKILL) leaves no namespace, nft table,
// process or temporary directory with its prefix. Also the name parsing the sweep relies on.
// Runs as root and as an ordinary user alike (the run builds its network in its own sandbox);
// only the sweep of host namespaces needs root.
#include "run/cleanup.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <thread>

#include "db/faketime_clock.h"
#include "db/netns.h"
#include "programs.h"
#include "run/clock_reach.h"
#include "run/noted_processes.h"
#include "run/process.h"
#include "run/sandbox.h"
#include "testkit.h"

namespace locklab {
namespace {

using locklab::testkit::after;
using locklab::testkit::poll_until;
using locklab::testkit::read_proc_file;

namespace fs = std::filesystem;

// Pids of processes whose command line mentions `needle`.
std::vector<pid_t> processes_mentioning(const std::string& needle) {
  std::vector<pid_t> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    const std::string cmdline = read_proc_file(entry.path() / "cmdline");
    const pid_t pid = std::stoi(name);
    if (pid != getpid() && cmdline.find(needle) != std::string::npos && process_state(pid) != 'Z') {
      out.push_back(pid);
    }
  }
  return out;
}

// The network namespace a process is in ("net:[<inode>]"), or "" when it is gone.
std::string netns_of(pid_t pid) {
  std::error_code ec;
  return fs::read_symlink("/proc/" + std::to_string(pid) + "/ns/net", ec).string();
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

// A root run's sweep leaves another user's "ll-<dead pid>-*" directory (that user's run, or a
// name planted so that root deletes what it holds); its own of that name it removes.
TEST(RunCleanup, SweepLeavesAnotherUsersDirectory) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another owner";
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  const std::string prefix = "ll-" + std::to_string(child);
  const std::string theirs = make_run_temp_dir(prefix);
  std::ofstream(theirs + "/keep") << "theirs\n";
  ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
  const std::string mine = make_run_temp_dir(prefix);
  sweep_stale_runs(HostNamespaces::kLeave);
  EXPECT_TRUE(fs::exists(theirs + "/keep")) << "another user's directory was removed";
  EXPECT_FALSE(fs::exists(mine));
  fs::remove_all(theirs);
}

using testing::programs_built;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// One `locklab run` signalled at a chosen moment. Asserts that the run's namespaces (and with
// them its nft tables), temporary directories (member dbpaths) and processes are all gone.
struct SignalledRun {
  std::vector<std::string> args;  // after "locklab run"
  std::string out;                // the run's --out directory
  int sig = SIGINT;
  // When to send the signal; checked until true (bounded).
  std::function<bool()> moment;
  std::string moment_name;

  // The harness's exit status and its output.
  std::pair<std::optional<ExitStatus>, std::string> run() const {
    const std::string bin = LOCKLAB_BIN_DIR;
    fs::remove_all(out);
    Supervisor supervisor;
    std::vector<std::string> argv = {bin + "/locklab", "run"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--out", out});
    const pid_t harness = supervisor.spawn({argv, "", out + ".log"});
    const std::string prefix = "ll-" + std::to_string(harness);
    EXPECT_TRUE(poll_until(after(std::chrono::milliseconds(60'000)), moment))
        << "the run never reached " << moment_name << "; see " << out << ".log";
    // The run's namespaces are inside its sandbox: the harness is in a network namespace of
    // its own and nothing of the run is in the host's list.
    EXPECT_NE(netns_of(harness), "");
    EXPECT_NE(netns_of(harness), netns_of(getpid()));
    EXPECT_TRUE(list_namespaces(prefix + "-").empty());
    EXPECT_TRUE(supervisor.signal(harness, sig));
    auto status = supervisor.wait_exit(harness, 60'000);
    EXPECT_TRUE(status.has_value()) << "locklab did not exit after signal " << sig;
    // The janitor finishes the job after a SIGKILL; give it a bounded moment.
    EXPECT_TRUE(poll_until(after(std::chrono::milliseconds(20'000)),
                           [&] { return list_namespaces(prefix + "-").empty(); }));
    EXPECT_TRUE(poll_until(after(std::chrono::milliseconds(20'000)),
                           [&] { return temp_dirs(prefix).empty(); }));
    EXPECT_TRUE(poll_until(after(std::chrono::milliseconds(20'000)),
                           [&] { return processes_mentioning(out).empty(); }))
        << processes_mentioning(out).size() << " processes of the run remain";
    EXPECT_TRUE(poll_until(after(std::chrono::milliseconds(20'000)),
                           [&] { return processes_mentioning(prefix + "-").empty(); }));
    const std::string log = read_text(out + ".log");
    fs::remove_all(out);  // the run's output directory is the test's own temp data
    fs::remove(out + ".log");
    return {status, log};
  }
};

std::function<bool()> history_mentions(const std::string& out, const std::string& needle) {
  return [=] { return read_text(out + "/history.jsonl").find(needle) != std::string::npos; };
}

std::string scenario(const std::string& name) {
  return std::string(LOCKLAB_SOURCE_DIR) + "/scenarios/" + name;
}

class KilledRun : public ::testing::TestWithParam<int> {};

TEST_P(KilledRun, LeavesNothingBehind) {
  if (const std::string why = netns_backend_refusal(); !why.empty()) GTEST_SKIP() << why;
  if (!programs_built()) GTEST_SKIP() << "needs locklab, locklab-worker and mongosim built";
  SignalledRun r;
  r.sig = GetParam();
  r.out = ::testing::TempDir() + "/cleanup-run-" + std::to_string(r.sig);
  r.args = {scenario("demo.toml"), "--cluster", "netns", "--seed", "7"};
  r.moment = history_mentions(r.out, "\"acquire\"");  // mid-run: the workers are going
  r.moment_name = "the workers' first acquire";
  const auto [status, log] = r.run();
  if (r.sig == SIGINT && status) {
    EXPECT_EQ(status->code, 2);
  }
}

INSTANTIATE_TEST_SUITE_P(Signals, KilledRun, ::testing::Values(SIGINT, SIGKILL),
                         [](const ::testing::TestParamInfo<int>& param) {
                           return param.param == SIGINT ? std::string("SIGINT")
                                                        : std::string("SIGKILL");
                         });

// A 3-member run stopped while a fault window is open: member partitions (nft tables inside the
// members' namespaces), a killed member, continuous step-downs, delayed replies. Parameters: the
// scenario, the fault whose start event marks the moment, the signal.
struct ReplicaSetCase {
  std::string scenario;
  std::string fault;
  int sig;
  bool faketime = false;  // --mongod mongosim with clocks through faketime (members wrapped)
};

class KilledReplicaSetRun : public ::testing::TestWithParam<ReplicaSetCase> {};

TEST_P(KilledReplicaSetRun, LeavesNothingBehind) {
  if (const std::string why = netns_backend_refusal(); !why.empty()) GTEST_SKIP() << why;
  if (!programs_built()) GTEST_SKIP() << "needs locklab, locklab-worker and mongosim built";
  const ReplicaSetCase& c = GetParam();
  if (c.faketime && run_tool({"sh", "-c", "command -v faketime"}).code != 0) {
    GTEST_SKIP() << "needs faketime";
  }
  SignalledRun r;
  r.sig = c.sig;
  r.out = ::testing::TempDir() + "/cleanup-rs-" + c.fault + "-" + std::to_string(c.sig);
  r.args = {scenario(c.scenario), "--cluster", "netns", "--seed", "7"};
  if (c.faketime) {
    r.args.insert(r.args.end(), {"--mongod", std::string(LOCKLAB_BIN_DIR) + "/mongosim"});
  }
  r.moment = history_mentions(r.out, "\"f\":\"" + c.fault + "\"");
  r.moment_name = "the " + c.fault + " window";
  const auto [status, log] = r.run();
  if (c.sig == SIGINT && status) {
    EXPECT_EQ(status->code, 2) << log;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Faults, KilledReplicaSetRun,
    ::testing::Values(ReplicaSetCase{"replset-partitions.toml", "partition-halves", SIGINT},
                      ReplicaSetCase{"replset-partitions.toml", "partition-worker", SIGKILL},
                      ReplicaSetCase{"replset-kill-member.toml", "kill-member", SIGINT},
                      ReplicaSetCase{"replset-step-down.toml", "step-down", SIGINT},
                      ReplicaSetCase{"replset-clock.toml", "clock-skew", SIGKILL, true},
                      // Reply relays (processes in the workers' namespaces, their delay files).
                      ReplicaSetCase{"must-fail/distributedlock-stopwatch-after-reply.toml",
                                     "reply-delay", SIGKILL}),
    [](const ::testing::TestParamInfo<ReplicaSetCase>& param) {
      std::string name = param.param.fault + (param.param.sig == SIGINT ? "_SIGINT" : "_SIGKILL");
      for (char& ch : name) {
        if (ch == '-') ch = '_';
      }
      return name;
    });

// Ctrl-C while the harness waits for the cluster to come up (the member program never answers):
// the wait reacts to it, rather than running to its 30 s limit, and cleans up.
TEST(CleanupDuringStart, CtrlCInTheClusterWait) {
  if (const std::string why = netns_backend_refusal(); !why.empty()) GTEST_SKIP() << why;
  if (!programs_built()) GTEST_SKIP() << "needs locklab, locklab-worker and mongosim built";
  const std::string silent = ::testing::TempDir() + "/silent-member.sh";
  {
    std::ofstream script(silent);
    script << "#!/bin/sh\nexec sleep 600\n";  // takes mongod's flags, never listens
  }
  fs::permissions(silent, fs::perms::owner_all);
  SignalledRun r;
  r.out = ::testing::TempDir() + "/cleanup-start";
  r.args = {
      scenario("replset-step-down.toml"), "--cluster", "netns", "--seed", "7", "--mongod", silent};
  const std::string last_member_log = r.out + "/members/m2.log";
  r.moment = [last_member_log] { return fs::exists(last_member_log); };
  r.moment_name = "the members' start";
  const auto [status, log] = r.run();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code, 2);
  EXPECT_NE(log.find("interrupted"), std::string::npos) << log;
  EXPECT_EQ(log.find("within 30000 ms"), std::string::npos) << log;
  fs::remove(silent);
}

// Leftovers of a run that is over (its process has exited).
void expect_nothing_left(pid_t harness, const std::string& out) {
  const std::string prefix = "ll-" + std::to_string(harness);
  EXPECT_TRUE(list_namespaces(prefix + "-").empty());
  EXPECT_TRUE(temp_dirs(prefix).empty());
  EXPECT_TRUE(poll_until(after(std::chrono::milliseconds(20'000)),
                         [&] { return processes_mentioning(out).empty(); }));
  EXPECT_TRUE(poll_until(after(std::chrono::milliseconds(20'000)),
                         [&] { return processes_mentioning(prefix + "-").empty(); }));
}

// A short 3-member run with member partitions, a member kill and step-downs, run to the end:
// nothing of it remains once locklab has exited (success path).
TEST(FinishedRun, ReplicaSetRunLeavesNothingBehind) {
  if (const std::string why = netns_backend_refusal(); !why.empty()) GTEST_SKIP() << why;
  if (!programs_built()) GTEST_SKIP() << "needs locklab, locklab-worker and mongosim built";
  const std::string dir = ::testing::TempDir() + "/finished-run";
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    std::ofstream toml(dir + "/s.toml");
    toml << "[cluster]\nmembers = 3\nelection_timeout_ms = 1000\n"
            "[workload]\nkind = \"fenced\"\nduration_ms = 2500\n"
            "[nemesis]\nquiet_ms = 500\n"
            "[[nemesis.fault]]\nat_ms = 100\nfault = \"partition-halves\"\nduration_ms = 600\n"
            "[[nemesis.fault]]\nat_ms = 800\nfault = \"kill-member\"\ntarget = \"m1\"\n"
            "duration_ms = 600\n"
            "[[nemesis.fault]]\nat_ms = 1500\nfault = \"step-down\"\nduration_ms = 800\n"
            "cadence_ms = 400\nstep_down_secs = 2\n"
            "[[nemesis.fault]]\nat_ms = 1500\nfault = \"partition-worker\"\ntarget = \"w1\"\n"
            "members = \"all\"\nduration_ms = 800\n"
            "[check]\nproperties = [\"tokens.unique\"]\n";
  }
  Supervisor supervisor;
  const std::string out = dir + "/run";
  const pid_t harness =
      supervisor.spawn({{std::string(LOCKLAB_BIN_DIR) + "/locklab", "run", dir + "/s.toml",
                         "--cluster", "netns", "--seed", "3", "--out", out},
                        "",
                        dir + "/locklab.log"});
  const auto status = supervisor.wait_exit(harness, 120'000);
  ASSERT_TRUE(status.has_value()) << "locklab did not finish";
  EXPECT_NE(status->code, 2) << read_text(dir + "/locklab.log");
  // Every fault window opened (whether it could apply depends on the election of the moment;
  // what is checked here is that whatever was applied is gone).
  const std::string history = read_text(out + "/history.jsonl");
  for (const char* fault : {"partition-halves", "kill-member", "step-down", "partition-worker"}) {
    EXPECT_NE(history.find(std::string("\"f\":\"") + fault + "\""), std::string::npos) << fault;
  }
  expect_nothing_left(harness, out);
  fs::remove_all(dir);
}

// The client "leaves-child" (misbehaving_worker.py: each worker starts a child that ignores
// SIGTERM) and a scenario of two such workers for `duration_ms`, written into `dir`.
void write_leaves_child_scenario(const testkit::TempDir& dir, int64_t duration_ms) {
  std::ofstream(dir.file("client.toml"))
      << "name = \"leaves-child\"\ndescription = \"a worker that leaves a child\"\nprogram = \""
      << LOCKLAB_SOURCE_DIR << "/harness/tests/clients/misbehaving_worker.py\"\n"
      << "args = [\"--mode\", \"leaves-child\"]\nworkloads = [\"mutex\"]\nfencing_tokens = false\n";
  std::ofstream(dir.file("s.toml")) << "[workload]\nclient = \"client.toml\"\nworkers = 2\n"
                                    << "duration_ms = " << duration_ms << "\n";
}

// `locklab run <dir>/s.toml --cluster loopback --seed 1 [extra] --out <dir>/run` started in the
// background (its output in <dir>/locklab.log); returns the harness's pid.
pid_t spawn_loopback_run(Supervisor& supervisor, const testkit::TempDir& dir,
                         const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {std::string(LOCKLAB_BIN_DIR) + "/locklab",
                                   "run",
                                   dir.file("s.toml"),
                                   "--cluster",
                                   "loopback",
                                   "--seed",
                                   "1"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {"--out", dir.file("run")});
  return supervisor.spawn({argv, "", dir.file("locklab.log")});
}

// A loopback run (no PID namespace to end it) of a worker that starts a child, which ignores
// SIGTERM, and exits on SIGTERM leaving it running: the child is gone when locklab has exited
// (stop_all ends each worker's process group). Left out: a child that leaves the group (setsid).
TEST(FinishedRun, AWorkersChildIsGoneAfterALoopbackRun) {
  if (!programs_built()) GTEST_SKIP() << "needs locklab, locklab-worker and mongosim built";
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "needs /usr/bin/python3";
  testkit::TempDir dir;
  write_leaves_child_scenario(dir, 1500);
  const std::string out = dir.file("run");
  const ToolResult r = testing::run_on_loopback(dir.file("s.toml"), out, 120'000);
  EXPECT_NE(r.code, 2) << r.output;
  // Both children were started (each names its worker's history file under `out`).
  EXPECT_NE(read_text(out + "/history.jsonl").find("\"w2\""), std::string::npos) << r.output;
  EXPECT_TRUE(poll_until(after(std::chrono::milliseconds(5'000)),
                         [&] { return processes_mentioning(out).empty(); }))
      << processes_mentioning(out).size() << " processes of the run remain";
  for (const pid_t pid : processes_mentioning(out)) ::kill(pid, SIGKILL);
}

// libfaketime's /dev/shm pairs ("faketime_shm_<pid>", "sem.faketime_sem_<pid>") by creator pid.
std::set<pid_t> faketime_pairs() {
  std::set<pid_t> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/dev/shm", ec)) {
    const std::string name = entry.path().filename().string();
    for (const std::string prefix : {"faketime_shm_", "sem.faketime_sem_"}) {
      if (name.starts_with(prefix)) out.insert(std::atoi(name.c_str() + prefix.size()));
    }
  }
  return out;
}

// Pairs made since `before` whose creator is gone: what nobody will remove any more. (A pair of a
// live process belongs to a run still going, this one's or a concurrent test's.)
std::set<pid_t> orphaned_faketime_pairs(const std::set<pid_t>& before) {
  std::set<pid_t> out;
  for (const pid_t pid : faketime_pairs()) {
    const char state = process_state(pid);  // a zombie is gone too (this test may be its reaper)
    if (!before.contains(pid) && (state == 0 || state == 'Z' || state == 'X')) out.insert(pid);
  }
  return out;
}

// A loopback run (the host's /dev/shm: no sandbox) whose workers run under libfaketime, the
// harness SIGKILLed mid-run: its workers die with it (PDEATHSIG) without returning from main, so
// libfaketime never removes their pairs; the janitor does (db/faketime_clock.h, the noted
// processes). What the model omits: a janitor killed too (a later run's sweep covers it, through
// the same note).
TEST(KilledLoopbackRun, LeavesNoFaketimePairOfItsWorkers) {
  if (!programs_built()) GTEST_SKIP() << "needs locklab, locklab-worker and mongosim built";
  if (access("/usr/bin/python3", X_OK) != 0 ||
      run_tool({"sh", "-c", "command -v faketime"}).code != 0) {
    GTEST_SKIP() << "needs /usr/bin/python3 and libfaketime";
  }
  testkit::TempDir dir;
  std::ofstream(dir.file("s.toml"))
      << "[workload]\nclient = \"test-well-behaved\"\nworkers = 2\nduration_ms = 60000\n"
         "[nemesis]\nquiet_ms = 0\n"
         "[[nemesis.fault]]\nat_ms = 0\nfault = \"clock-skew-worker\"\ntarget = \"w1\"\n"
         "offset_ms = 60000\nduration_ms = 50000\n";
  const std::set<pid_t> before = faketime_pairs();
  Supervisor supervisor;
  const std::string out = dir.file("run");
  const pid_t harness = spawn_loopback_run(supervisor, dir);
  // Both workers have written their first events: each has made its pair by now.
  const auto both_going = [&] {
    return read_text(out + "/workers/w1.0.jsonl").find("\"invoke\"") != std::string::npos &&
           read_text(out + "/workers/w2.0.jsonl").find("\"invoke\"") != std::string::npos;
  };
  ASSERT_TRUE(poll_until(after(std::chrono::milliseconds(60'000)), both_going))
      << read_text(dir.file("locklab.log"));
  std::set<pid_t> made;
  for (const pid_t pid : faketime_pairs()) {
    if (!before.contains(pid)) made.insert(pid);
  }
  EXPECT_GE(made.size(), 2u) << "the workers made no libfaketime pairs: nothing is tested";
  ASSERT_TRUE(supervisor.signal(harness, SIGKILL));
  ASSERT_TRUE(supervisor.wait_exit(harness, 60'000).has_value());
  const std::string prefix = "ll-" + std::to_string(harness);
  EXPECT_TRUE(poll_until(after(std::chrono::milliseconds(20'000)),
                         [&] { return temp_dirs(prefix).empty(); }));
  EXPECT_TRUE(poll_until(after(std::chrono::milliseconds(5'000)),
                         [&] { return orphaned_faketime_pairs(before).empty(); }))
      << orphaned_faketime_pairs(before).size() << " pairs left by dead processes";
  for (const pid_t pid : orphaned_faketime_pairs(before)) remove_faketime_files(pid);
}

// The same for --mongod members under the faketime program (member clock faults): the wrapper
// dies with the harness (PDEATHSIG), the member it forked does not; the janitor ends the noted
// wrapper's process group, so no member is left running (their dbpaths name the run's prefix),
// and no pair is left.
TEST(KilledLoopbackRun, LeavesNoMemberOfAFaketimeWrapper) {
  if (!programs_built()) GTEST_SKIP() << "needs locklab, locklab-worker and mongosim built";
  if (run_tool({"sh", "-c", "command -v faketime"}).code != 0) GTEST_SKIP() << "needs faketime";
  testkit::TempDir dir;
  std::ofstream(dir.file("s.toml"))
      << "[cluster]\nmembers = 3\nelection_timeout_ms = 1000\n"
         "[workload]\nduration_ms = 60000\n"
         "[nemesis]\nquiet_ms = 500\n"
         "[[nemesis.fault]]\nat_ms = 200\nfault = \"clock-skew\"\ntarget = \"m1\"\n"
         "offset_ms = 5000\nduration_ms = 50000\n";
  const std::set<pid_t> before = faketime_pairs();
  Supervisor supervisor;
  const std::string out = dir.file("run");
  const pid_t harness =
      spawn_loopback_run(supervisor, dir, {"--mongod", std::string(LOCKLAB_BIN_DIR) + "/mongosim"});
  const std::string prefix = "ll-" + std::to_string(harness);
  ASSERT_TRUE(poll_until(after(std::chrono::milliseconds(60'000)),
                         history_mentions(out, "\"f\":\"clock-skew\"")))
      << read_text(dir.file("locklab.log"));
  EXPECT_GE(processes_mentioning(prefix + "-").size(), 3u) << "the members are not all up";
  ASSERT_TRUE(supervisor.signal(harness, SIGKILL));
  ASSERT_TRUE(supervisor.wait_exit(harness, 60'000).has_value());
  EXPECT_TRUE(poll_until(after(std::chrono::milliseconds(20'000)),
                         [&] { return processes_mentioning(prefix + "-").empty(); }))
      << processes_mentioning(prefix + "-").size() << " members of the run still run";
  EXPECT_TRUE(poll_until(after(std::chrono::milliseconds(5'000)),
                         [&] { return orphaned_faketime_pairs(before).empty(); }))
      << orphaned_faketime_pairs(before).size() << " pairs left by dead processes";
  for (const pid_t pid : processes_mentioning(prefix + "-")) ::kill(pid, SIGKILL);
  for (const pid_t pid : orphaned_faketime_pairs(before)) remove_faketime_files(pid);
}

// The inode of this process's PID namespace (what note_run_process records).
uint64_t own_pid_namespace() {
  struct stat st {};
  return ::stat("/proc/self/ns/pid", &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

// A child of this test in a process group of its own (Supervisor), killed and reaped at the end.
struct Sleeper {
  Supervisor& supervisor;
  pid_t pid;
  explicit Sleeper(Supervisor& s, const std::string& script = "exec sleep 600")
      : supervisor(s), pid(s.spawn({{"/bin/sh", "-c", script}, "", ""})) {}
  ~Sleeper() {
    ::kill(-pid, SIGKILL);
    supervisor.signal(pid, SIGKILL);
    supervisor.wait_exit(pid, 10'000);
  }
  bool alive() const { return supervisor.running(pid); }
};

// end_noted_processes signals a noted process still running as itself (and its group), and
// never one whose pid now names another process (start time differs), one noted with start time
// 0 (not known to be ours), one noted ended (its pid may be anyone's) or one noted in another PID
// namespace (a netns run's sandbox: its pids mean other processes here). What the model omits:
// a real pid reuse and a real sandbox (a wrong start time and a wrong namespace stand in for
// them), and libfaketime (no pairs here).
TEST(NotedProcesses, OnlyTheRunsOwnLiveProcessesAreEnded) {
  testkit::TempDir dir;
  Supervisor supervisor;
  Sleeper ours(supervisor), reused(supervisor), unknown(supervisor), ended(supervisor),
      elsewhere(supervisor);
  note_run_process(dir.path(), ours.pid, false);
  {
    std::ofstream notes(dir.file("processes"), std::ios::app);
    notes << "+ " << reused.pid << " " << process_stat(reused.pid)->start_ticks + 1 << " 0 "
          << own_pid_namespace() << "\n";
    notes << "+ " << unknown.pid << " 0 0 " << own_pid_namespace() << "\n";
    notes << "+ " << elsewhere.pid << " " << process_stat(elsewhere.pid)->start_ticks << " 0 "
          << own_pid_namespace() + 1 << "\n";
  }
  note_run_process(dir.path(), ended.pid, false);
  note_run_process_ended(dir.path(), ended.pid);
  EXPECT_EQ(end_noted_processes(dir.path(), GoneGroups::kEnd), 1);
  const auto exit_of_ours = supervisor.wait_exit(ours.pid, 10'000);
  ASSERT_TRUE(exit_of_ours.has_value()) << "the run's own process was not ended";
  EXPECT_EQ(exit_of_ours->signal, SIGKILL);
  for (const Sleeper* other : {&reused, &unknown, &ended, &elsewhere}) {
    EXPECT_TRUE(other->alive()) << other->pid << " was signalled";
  }
}

// The group of a noted process that is gone (its leader exited, a child of it stays in the
// group): ended right after the run (kEnd), left alone by a later sweep (kLeave), when the pid
// may have been reused.
TEST(NotedProcesses, AGoneProcesssGroupIsEndedOnlyRightAfterTheRun) {
  testkit::TempDir dir;
  Supervisor supervisor;
  Sleeper leader(supervisor, "sleep 600 & read line");  // exits when its stdin (/dev/null) ends
  note_run_process(dir.path(), leader.pid, false);
  ASSERT_TRUE(supervisor.wait_exit(leader.pid, 10'000).has_value());
  std::vector<pid_t> left;
  ASSERT_TRUE(poll_until(after(std::chrono::milliseconds(10'000)), [&] {
    left = process_group(leader.pid);
    return !left.empty();
  }));
  EXPECT_EQ(end_noted_processes(dir.path(), GoneGroups::kLeave), 1);
  EXPECT_FALSE(process_group(leader.pid).empty()) << "a sweep killed a gone process's group";
  EXPECT_EQ(end_noted_processes(dir.path(), GoneGroups::kEnd), 1);
  EXPECT_TRUE(poll_until(after(std::chrono::milliseconds(10'000)),
                         [&] { return process_group(leader.pid).empty(); }));
}

// A record in a directory another user owns, or one others may write (a /tmp/ll-<dead pid>-*
// that someone else made): nothing is signalled. Needs root (to give the directory away).
TEST(NotedProcesses, ARecordOthersCouldHaveWrittenIsIgnored) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another owner";
  Supervisor supervisor;
  for (const bool give_away : {true, false}) {
    testkit::TempDir dir;
    Sleeper victim(supervisor);
    note_run_process(dir.path(), victim.pid, false);
    if (give_away) {
      ASSERT_EQ(::chown(dir.path().c_str(), 65534, 65534), 0);
    } else {
      ASSERT_EQ(::chmod(dir.file("processes").c_str(), 0666), 0);
    }
    EXPECT_EQ(end_noted_processes(dir.path(), GoneGroups::kEnd), 0);
    EXPECT_TRUE(victim.alive()) << (give_away ? "another owner's" : "a world-writable")
                                << " record made this process kill";
    ::chown(dir.path().c_str(), 0, 0);
  }
}

// A noted file that is not one: reading stops at the first line it does not know, nothing is
// signalled for what follows.
TEST(NotedProcesses, AnUnknownLineEndsTheReading) {
  testkit::TempDir dir;
  Supervisor supervisor;
  Sleeper child(supervisor);
  { std::ofstream(dir.file("processes")) << "garbage\n"; }
  note_run_process(dir.path(), child.pid, false);
  EXPECT_EQ(end_noted_processes(dir.path(), GoneGroups::kEnd), 0);
  EXPECT_TRUE(child.alive());
}

// A loopback run SIGKILLed while each worker has a child that ignores SIGTERM: the workers die
// with the harness (PDEATHSIG), their children do not; the janitor ends each noted worker's
// process group (run/noted_processes.h). Left out: a child that leaves the group (setsid).
TEST(KilledLoopbackRun, LeavesNoChildOfAWorker) {
  if (!programs_built()) GTEST_SKIP() << "needs locklab, locklab-worker and mongosim built";
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "needs /usr/bin/python3";
  testkit::TempDir dir;
  write_leaves_child_scenario(dir, 60000);
  Supervisor supervisor;
  const std::string out = dir.file("run");
  const pid_t harness = spawn_loopback_run(supervisor, dir);
  // Each child names its worker's history file (under `out`) on its command line.
  const auto children = [&] {
    std::vector<pid_t> found;
    for (const pid_t pid : processes_mentioning(out)) {
      const std::string cmdline = read_proc_file("/proc/" + std::to_string(pid) + "/cmdline");
      if (cmdline.find("time.sleep(600)") != std::string::npos) found.push_back(pid);
    }
    return found;
  };
  ASSERT_TRUE(poll_until(after(std::chrono::milliseconds(60'000)), [&] {
    return children().size() == 2;
  })) << read_text(dir.file("locklab.log"));
  ASSERT_TRUE(supervisor.signal(harness, SIGKILL));
  ASSERT_TRUE(supervisor.wait_exit(harness, 60'000).has_value());
  EXPECT_TRUE(poll_until(after(std::chrono::milliseconds(20'000)),
                         [&] { return processes_mentioning(out).empty(); }))
      << processes_mentioning(out).size() << " processes of the run remain";
  for (const pid_t pid : processes_mentioning(out)) ::kill(pid, SIGKILL);
}

// A loopback run of --mongod members under the faketime program (member clock faults), run to
// the end: the faketime program leaves its pair when stopped by a signal, as each member is; the
// run's teardown removes them.
TEST(FinishedLoopbackRun, LeavesNoFaketimePairOfItsMembers) {
  if (!programs_built()) GTEST_SKIP() << "needs locklab, locklab-worker and mongosim built";
  if (run_tool({"sh", "-c", "command -v faketime"}).code != 0) GTEST_SKIP() << "needs faketime";
  testkit::TempDir dir;
  std::ofstream(dir.file("s.toml"))
      << "[cluster]\nmembers = 3\nelection_timeout_ms = 1000\n"
         "[workload]\nduration_ms = 2500\n"
         "[nemesis]\nquiet_ms = 500\n"
         "[[nemesis.fault]]\nat_ms = 200\nfault = \"clock-skew\"\ntarget = \"m1\"\n"
         "offset_ms = 5000\nduration_ms = 1000\n";
  const std::set<pid_t> before = faketime_pairs();
  const std::string out = dir.file("run");
  const ToolResult r =
      run_tool({std::string(LOCKLAB_BIN_DIR) + "/locklab", "run", dir.file("s.toml"), "--cluster",
                "loopback", "--seed", "1", "--mongod", std::string(LOCKLAB_BIN_DIR) + "/mongosim",
                "--out", out},
               "", "", 120'000);
  EXPECT_NE(r.code, 2) << r.output;
  EXPECT_NE(read_text(out + "/history.jsonl").find("\"clock-skew\""), std::string::npos)
      << r.output;
  EXPECT_TRUE(poll_until(after(std::chrono::milliseconds(5'000)),
                         [&] { return orphaned_faketime_pairs(before).empty(); }))
      << orphaned_faketime_pairs(before).size() << " pairs left by dead processes";
  for (const pid_t pid : orphaned_faketime_pairs(before)) remove_faketime_files(pid);
}

// A run that fails while starting (the member program exits at once): nothing remains.
TEST(FailedRun, MemberProgramThatExitsLeavesNothingBehind) {
  if (const std::string why = netns_backend_refusal(); !why.empty()) GTEST_SKIP() << why;
  if (!programs_built()) GTEST_SKIP() << "needs locklab, locklab-worker and mongosim built";
  const std::string dir = ::testing::TempDir() + "/failed-run";
  fs::remove_all(dir);
  Supervisor supervisor;
  const pid_t harness = supervisor.spawn(
      {{std::string(LOCKLAB_BIN_DIR) + "/locklab", "run", scenario("replset-step-down.toml"),
        "--cluster", "netns", "--seed", "1", "--mongod", "/bin/false", "--out", dir},
       "",
       dir + ".log"});
  const auto status = supervisor.wait_exit(harness, 60'000);
  ASSERT_TRUE(status.has_value()) << "locklab did not finish";
  EXPECT_EQ(status->code, 2);
  EXPECT_NE(read_text(dir + ".log").find("exited while waiting"), std::string::npos)
      << read_text(dir + ".log");
  expect_nothing_left(harness, dir);
  fs::remove_all(dir);
  fs::remove(dir + ".log");
}

// With --mongod, clock faults go through faketime; without it on PATH the run is refused before
// anything starts (no namespace, no member, no history), with a message saying why.
TEST(RefusedRun, ClockFaultsOnMongodNeedFaketime) {
  if (const std::string why = netns_backend_refusal(); !why.empty()) GTEST_SKIP() << why;
  if (!programs_built()) GTEST_SKIP() << "needs locklab, locklab-worker and mongosim built";
  // A PATH with the network tools and nothing else, so no faketime whatever is installed.
  const std::string tools = ::testing::TempDir() + "/no-faketime-path";
  fs::remove_all(tools);
  fs::create_directories(tools);
  for (const char* tool : {"ip", "nft"}) {
    for (const char* dir : {"/usr/sbin", "/sbin", "/usr/bin", "/bin"}) {
      const fs::path candidate = fs::path(dir) / tool;
      if (fs::exists(candidate) && !fs::exists(fs::path(tools) / tool)) {
        fs::create_symlink(candidate, fs::path(tools) / tool);
      }
    }
  }
  const std::string bin = LOCKLAB_BIN_DIR;
  const std::string out = ::testing::TempDir() + "/refused-run";
  fs::remove_all(out);
  const ToolResult r = run_tool(
      {"/usr/bin/env", "PATH=" + tools, bin + "/locklab", "run", scenario("replset-clock.toml"),
       "--cluster", "netns", "--seed", "1", "--mongod", bin + "/mongosim", "--out", out},
      "", "", 60'000);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("need the faketime program"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out + "/history.jsonl"));
  fs::remove_all(out);
  fs::remove_all(tools);
}

}  // namespace
}  // namespace locklab

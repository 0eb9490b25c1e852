// The run's sandbox (run/sandbox.h): the refusal message names the sysctl that forbids user
// namespaces, and a body run in the sandbox is PID 1 of its own PID namespace, in network and
// user namespaces of its own, with an empty private /run, and writes files its caller owns.
// Not modelled here: a killed harness (the hermetic and cleanup tests run the real
// program for those); kernel.unprivileged_userns_clone and AppArmor's restriction are only
// checked through the message (a test cannot set them without changing the whole machine).
#include "run/sandbox.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "programs.h"
#include "temp_dir.h"

namespace locklab {
namespace {

namespace fs = std::filesystem;

// A fake /proc/sys with one setting written.
void write_setting(const testkit::TempDir& dir, const std::string& relative, const std::string& v) {
  fs::create_directories(fs::path(dir.file(relative)).parent_path());
  std::ofstream(dir.file(relative)) << v << "\n";
}

TEST(UsernsRefusal, NamesUnprivilegedUsernsClone) {
  testkit::TempDir sys;
  write_setting(sys, "kernel/unprivileged_userns_clone", "0");
  write_setting(sys, "user/max_user_namespaces", "1000");
  const std::string m = userns_refusal_message(EPERM, sys.path());
  EXPECT_NE(m.find("kernel.unprivileged_userns_clone=0"), std::string::npos) << m;
  EXPECT_EQ(m.find("max_user_namespaces"), std::string::npos) << m;
}

TEST(UsernsRefusal, NamesMaxUserNamespaces) {
  testkit::TempDir sys;
  write_setting(sys, "kernel/unprivileged_userns_clone", "1");
  write_setting(sys, "user/max_user_namespaces", "0");
  const std::string m = userns_refusal_message(ENOSPC, sys.path());
  EXPECT_NE(m.find("user.max_user_namespaces=0"), std::string::npos) << m;
}

TEST(UsernsRefusal, NamesAppArmorRestriction) {
  testkit::TempDir sys;
  write_setting(sys, "user/max_user_namespaces", "1000");
  write_setting(sys, "kernel/apparmor_restrict_unprivileged_userns", "1");
  const std::string m = userns_refusal_message(EACCES, sys.path());
  EXPECT_NE(m.find("kernel.apparmor_restrict_unprivileged_userns=1"), std::string::npos) << m;
}

TEST(UsernsRefusal, SaysWhenNoSysctlIsTheCause) {
  testkit::TempDir sys;
  write_setting(sys, "user/max_user_namespaces", "1000");
  write_setting(sys, "kernel/apparmor_restrict_unprivileged_userns", "0");
  const std::string m = userns_refusal_message(EPERM, sys.path());
  EXPECT_NE(m.find("none of the sysctls"), std::string::npos) << m;
}

// EINVAL is no sysctl's doing: the kernel refuses a user namespace to a process of more than
// one thread (a sanitizer's runtime thread can be one locklab did not start).
TEST(UsernsRefusal, NamesTheThreadsOnEinval) {
  testkit::TempDir sys;
  write_setting(sys, "user/max_user_namespaces", "0");
  const std::string m = userns_refusal_message(EINVAL, sys.path());
  EXPECT_NE(m.find("more than one thread"), std::string::npos) << m;
  EXPECT_EQ(m.find("max_user_namespaces"), std::string::npos) << m;
}

std::string ns_link(const std::string& pid, const char* kind) {
  std::error_code ec;
  return fs::read_symlink("/proc/" + pid + "/ns/" + kind, ec).string();
}

// What the body saw, one fact per line, for the test to compare with the outside.
std::string facts_inside(const std::string& dir) {
  std::string facts = "pid " + std::to_string(getpid()) + "\n";
  facts += "net " + ns_link("self", "net") + "\nuser " + ns_link("self", "user") + "\n";
  std::error_code ec;
  facts +=
      "run-entries " + std::to_string(std::distance(fs::directory_iterator("/run", ec), {})) + "\n";
  std::ofstream(dir + "/made-inside") << "x";
  return facts;
}

TEST(Sandbox, BodyRunsAsPidOneInItsOwnNamespaces) {
  const std::string refusal = netns_backend_refusal();
  if (!refusal.empty()) GTEST_SKIP() << refusal;
  testkit::TempDir dir;
  // run_sandboxed changes the calling process's namespaces: do it in a child.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int code = run_sandboxed([&] {
      std::ofstream(dir.file("facts")) << facts_inside(dir.path());
      return 7;
    });
    _exit(code);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);  // the body's result comes back
  std::ifstream in(dir.file("facts"));
  const std::string facts((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(facts.find("pid 1\n"), std::string::npos) << facts;
  EXPECT_EQ(facts.find("net " + ns_link("self", "net") + "\n"), std::string::npos) << facts;
  EXPECT_NE(facts.find("run-entries 0\n"), std::string::npos) << facts;
  if (geteuid() != 0) {
    EXPECT_EQ(facts.find("user " + ns_link("self", "user") + "\n"), std::string::npos) << facts;
  }
  struct stat st {};
  ASSERT_EQ(stat(dir.file("made-inside").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, geteuid());  // the caller owns what the sandbox wrote, never a mapped id
  EXPECT_EQ(st.st_gid, getegid());
}

// A stop signal sent to the harness right after the sandbox starts, before the body has
// installed its handlers, is not lost (the kernel drops a signal to a PID-namespace init that
// has no handler for it): the body finds it pending, installs its handler, unblocks, and gets it.
// The body tells the test when it has started; the test then sends SIGINT to the outer process,
// which forwards it. Not modelled: the real run's handlers (the cleanup tests signal real runs).
volatile sig_atomic_t g_seen_signal = 0;
void note_signal(int sig) {
  g_seen_signal = sig;
}

TEST(Sandbox, EarlyStopSignalReachesTheBody) {
  const std::string refusal = netns_backend_refusal();
  if (!refusal.empty()) GTEST_SKIP() << refusal;
  int started[2];
  ASSERT_EQ(pipe(started), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(started[0]);
    _exit(run_sandboxed([&] {
      const char byte = 1;
      if (write(started[1], &byte, 1) != 1) return 20;
      // Bounded wait for the forwarded signal to be pending (at most 10 s).
      sigset_t pending;
      for (int i = 0; i < 1000; ++i) {
        sigpending(&pending);
        if (sigismember(&pending, SIGINT)) break;
        usleep(10'000);
      }
      struct sigaction sa {};
      sa.sa_handler = note_signal;
      sigemptyset(&sa.sa_mask);
      sigaction(SIGINT, &sa, nullptr);
      sigset_t stop;
      stop_signal_set(&stop);
      sigprocmask(SIG_UNBLOCK, &stop, nullptr);
      return g_seen_signal == SIGINT ? 3 : 4;
    }));
  }
  close(started[1]);
  char byte = 0;
  ASSERT_EQ(read(started[0], &byte, 1), 1);
  close(started[0]);
  ASSERT_EQ(kill(child, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the outer process died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 3) << "4: the body never got the SIGINT";
}

// Runs `argv` as `uid` (0 or 65534) inside a user namespace that maps ids 0-65535 to the same
// host ids and whose user.max_user_namespaces is 0: a machine that forbids user namespaces,
// without changing the machine. Needs real root. Returns the exit code (kUnshareRefused when
// the forked child could not enter a user namespace), -1 when the child died otherwise before
// running argv; output goes to `log`.
constexpr int kUnshareRefused = 120;
int run_where_userns_forbidden(uid_t uid, const std::vector<std::string>& argv,
                               const std::string& log) {
  int ready[2];
  int go[2];
  if (pipe(ready) != 0 || pipe(go) != 0) return -1;
  const pid_t child = fork();
  if (child == 0) {
    char byte = 0;
    if (unshare(CLONE_NEWUSER) != 0 || write(ready[1], &byte, 1) != 1) _exit(kUnshareRefused);
    if (read(go[0], &byte, 1) != 1) _exit(121);  // the parent has written the maps
    std::ofstream("/proc/sys/user/max_user_namespaces") << "0\n";
    const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) _exit(122);
    if (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0) _exit(123);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(124);
  }
  // The parent's copies of the child's ends: a child that dies before writing `ready` must
  // end the read below (EOF), not leave it waiting forever.
  close(ready[1]);
  close(go[0]);
  if (child < 0) {
    close(ready[0]);
    close(go[1]);
    return -1;
  }
  char byte = 0;
  int status = 0;
  if (read(ready[0], &byte, 1) != 1) {
    close(ready[0]);
    close(go[1]);
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
  }
  const std::string proc = "/proc/" + std::to_string(child);
  std::ofstream(proc + "/uid_map") << "0 0 65536\n";
  std::ofstream(proc + "/gid_map") << "0 0 65536\n";
  const bool went = write(go[1], &byte, 1) == 1;
  close(ready[0]);
  close(go[1]);  // a child still reading `go` gets EOF and exits 121
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  if (!went) return -1;
  return WEXITSTATUS(status);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// With user namespaces forbidden (user.max_user_namespaces=0): an ordinary user's run is refused
// with a message naming that sysctl; root's run still happens on the netns backend (without a
// user namespace).
TEST(ForbiddenUserNamespaces, RefusalNamesTheSysctlAndRootStillRuns) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make a machine that forbids user namespaces";
  if (!netns_backend_refusal().empty()) GTEST_SKIP() << netns_backend_refusal();
  if (!testing::programs_built()) GTEST_SKIP() << "needs locklab, locklab-worker and mongosim";
  testkit::TempDir dir;
  ASSERT_EQ(chown(dir.path().c_str(), 65534, 65534), 0);
  std::ofstream(dir.file("isolate.toml"))
      << "[workload]\nkind = \"fenced\"\nworkers = 2\nduration_ms = 1500\n"
         "[nemesis]\nquiet_ms = 500\n"
         "[[nemesis.fault]]\nat_ms = 300\nfault = \"isolate-worker\"\ntarget = \"w1\"\n"
         "duration_ms = 500\n"
         "[check]\nproperties = [\"tokens.unique\"]\n";
  const std::string locklab = std::string(LOCKLAB_BIN_DIR) + "/locklab";
  const auto run = [&](uid_t uid, const std::string& name) {
    return run_where_userns_forbidden(
        uid, {locklab, "run", dir.file("isolate.toml"), "--seed", "1", "--out", dir.file(name)},
        dir.file(name + ".log"));
  };
  const int nobody = run(65534, "nobody");
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer starts its background thread again in a forked child, and unshare
  // (CLONE_NEWUSER) refuses a process of more than one thread (EINVAL).
  if (nobody == kUnshareRefused) GTEST_SKIP() << "a forked child of a TSan build has two threads";
#endif
  EXPECT_EQ(nobody, 2);
  const std::string refused = read_all(dir.file("nobody.log"));
  EXPECT_NE(refused.find("isolate-worker needs the netns backend"), std::string::npos) << refused;
  EXPECT_NE(refused.find("user.max_user_namespaces=0"), std::string::npos) << refused;
  EXPECT_FALSE(fs::exists(dir.file("nobody/history.jsonl")));

  EXPECT_EQ(run(0, "root"), 0) << read_all(dir.file("root.log"));
  EXPECT_NE(read_all(dir.file("root/history.jsonl")).find("\"backend\":\"netns\""),
            std::string::npos);
}

}  // namespace
}  // namespace locklab

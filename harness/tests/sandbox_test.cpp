// The run's sandbox (sandbox.h): the refusal message names the sysctl that forbids user
// namespaces, and a body run in the sandbox is PID 1 of its own PID namespace, in network and
// user namespaces of its own, with an empty private /run, and writes files its caller owns.
// Not modelled here: signals and a killed harness (the hermetic and cleanup tests run the real
// program for those).
#include "sandbox.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "temp_dir.h"

namespace locklab {
namespace {

namespace fs = std::filesystem;

// A fake /proc/sys with one setting written.
void write_setting(const testing::TempDir& dir, const std::string& relative, const std::string& v) {
  fs::create_directories(fs::path(dir.file(relative)).parent_path());
  std::ofstream(dir.file(relative)) << v << "\n";
}

TEST(UsernsRefusal, NamesUnprivilegedUsernsClone) {
  testing::TempDir sys;
  write_setting(sys, "kernel/unprivileged_userns_clone", "0");
  write_setting(sys, "user/max_user_namespaces", "1000");
  const std::string m = userns_refusal_message(EPERM, sys.path());
  EXPECT_NE(m.find("kernel.unprivileged_userns_clone=0"), std::string::npos) << m;
  EXPECT_EQ(m.find("max_user_namespaces"), std::string::npos) << m;
}

TEST(UsernsRefusal, NamesMaxUserNamespaces) {
  testing::TempDir sys;
  write_setting(sys, "kernel/unprivileged_userns_clone", "1");
  write_setting(sys, "user/max_user_namespaces", "0");
  const std::string m = userns_refusal_message(ENOSPC, sys.path());
  EXPECT_NE(m.find("user.max_user_namespaces=0"), std::string::npos) << m;
}

TEST(UsernsRefusal, NamesAppArmorRestriction) {
  testing::TempDir sys;
  write_setting(sys, "user/max_user_namespaces", "1000");
  write_setting(sys, "kernel/apparmor_restrict_unprivileged_userns", "1");
  const std::string m = userns_refusal_message(EACCES, sys.path());
  EXPECT_NE(m.find("kernel.apparmor_restrict_unprivileged_userns=1"), std::string::npos) << m;
}

TEST(UsernsRefusal, SaysWhenNoSysctlIsTheCause) {
  testing::TempDir sys;
  write_setting(sys, "user/max_user_namespaces", "1000");
  write_setting(sys, "kernel/apparmor_restrict_unprivileged_userns", "0");
  const std::string m = userns_refusal_message(EPERM, sys.path());
  EXPECT_NE(m.find("none of the sysctls"), std::string::npos) << m;
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
  testing::TempDir dir;
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

}  // namespace
}  // namespace locklab

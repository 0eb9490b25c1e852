// A process holding a Docker set (docker_hold: engine, image, one member container, network)
// is SIGKILLed — no teardown runs — and the next run's sweep must leave nothing: no container,
// network, volume or image of that run, and when the process had started dockerd, no daemon,
// no daemon root and no bridge of its network on the host.
//
// What the model leaves out: a sweep racing a live run (the owner identity check is what
// prevents that, tested in DockerIdentity), a daemon that refuses to start again on the root.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>

#include "db/docker_engine.h"
#include "run/process.h"
#include "testkit.h"

namespace locklab {
namespace {

namespace fs = std::filesystem;

struct Held {
  pid_t pid = 0;
  std::string run_id;
  pid_t dockerd = 0;
  std::string root;
  std::string network;
};

// Starts docker_hold and reads its "ready" line (it blocks until the set is up).
Held start_hold(const std::string& work) {
  int out[2];
  if (pipe(out) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    const std::string hold = std::string(LOCKLAB_BIN_DIR) + "/docker_hold";
    execl(hold.c_str(), hold.c_str(), LOCKLAB_BIN_DIR, LOCKLAB_SOURCE_DIR, work.c_str(), nullptr);
    _exit(127);
  }
  close(out[1]);
  FILE* in = fdopen(out[0], "r");
  char line[1024] = {};
  const bool got = std::fgets(line, sizeof line, in) != nullptr;
  std::fclose(in);
  Held held;
  held.pid = pid;
  if (!got) return held;
  std::istringstream fields(line);
  std::string word;
  int dockerd = 0;
  fields >> word >> held.run_id >> dockerd >> held.root >> held.network;
  held.dockerd = dockerd;
  if (word != "ready") held.run_id.clear();
  return held;
}

TEST(DockerSweep, SigkilledHolderLeavesNothingAfterTheSweep) {
  const std::string why = docker_unavailable_reason();
  if (!why.empty()) GTEST_SKIP() << "Docker cannot run here: " << why;
  const testkit::TempDir dir("locklab-dockertest-sweep");
  const std::string work = dir.path();

  const Held held = start_hold(work);
  ASSERT_FALSE(held.run_id.empty()) << "docker_hold did not report ready";
  kill(held.pid, SIGKILL);
  int status = 0;
  waitpid(held.pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));

  // The holder's objects outlive it until a sweep runs (this is what the sweep is for).
  const std::string host = held.root == "-" ? "" : "unix://" + held.root + "/docker.sock";
  DockerEngine engine = host.empty() ? DockerEngine::acquire() : DockerEngine::attach(host);
  const std::string label = "label=locklab.run=" + held.run_id;
  const std::string network_id =
      engine.checked({"network", "inspect", "-f", "{{.Id}}", held.network});
  EXPECT_NE(engine.checked({"ps", "-aq", "--filter", label}), "");

  sweep_docker_leftovers();

  if (held.dockerd > 0) {
    // Gone, or a zombie nobody has reaped yet (it was reparented when the holder died).
    const char state = process_state(held.dockerd);
    EXPECT_TRUE(state == 0 || state == 'Z') << "the holder's dockerd still runs: " << state;
    EXPECT_FALSE(fs::exists(held.root)) << held.root;
  } else {
    EXPECT_EQ(engine.run({"ps", "-aq", "--filter", label}).output, "");
    EXPECT_EQ(engine.run({"network", "ls", "-q", "--filter", label}).output, "");
    EXPECT_EQ(engine.run({"images", "-q", "--filter", label}).output, "");
    EXPECT_EQ(engine.run({"volume", "ls", "-q", "--filter", label}).output, "");
  }
  EXPECT_EQ(run_tool({"ip", "-o", "link"}).output.find("br-" + network_id.substr(0, 12)),
            std::string::npos)
      << "the holder's network bridge is left on the host";
}

}  // namespace
}  // namespace locklab

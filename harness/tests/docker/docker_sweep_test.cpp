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
#include <optional>
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

// Starts docker_hold under `supervisor` and reads its "ready" line (it writes it once the set is
// up, which includes building the image); within the test's own TIMEOUT (300 s), so that its
// stderr is shown when it does not come.
constexpr int64_t kHoldReadyMs = 240'000;
Held start_hold(Supervisor& supervisor, const std::string& work) {
  const std::string hold = std::string(LOCKLAB_BIN_DIR) + "/docker_hold";
  StartedChild child = supervisor.start({.argv = {hold, LOCKLAB_BIN_DIR, LOCKLAB_SOURCE_DIR, work},
                                         .netns = "",
                                         .log_path = work + "/docker_hold.stderr",
                                         .pipe_stdout = true});
  Held held;
  held.pid = child.pid;
  const std::optional<std::string> line = read_line(child.from_stdout.get(), kHoldReadyMs, 1024);
  if (!line) return held;
  std::istringstream fields(*line);
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

  Supervisor supervisor;
  const Held held = start_hold(supervisor, work);
  ASSERT_FALSE(held.run_id.empty()) << "docker_hold did not report ready; its stderr:\n"
                                    << testkit::read_proc_file(work + "/docker_hold.stderr");
  ASSERT_TRUE(supervisor.signal(held.pid, SIGKILL));
  const std::optional<ExitStatus> end = supervisor.wait_exit(held.pid, 30'000);
  ASSERT_TRUE(end.has_value() && end->signal == SIGKILL);

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

// DockerEvents' watcher as a child of the Supervisor it is given: its lines parsed, its end
// reported by that Supervisor's poll() (a second Supervisor would have had it reaped there as an
// orphan and later signalled a pid that was no longer its own), and its kill on destruction.
//
// What the model leaves out: the docker client and daemon. The watcher here is a shell script
// standing in for `docker events` (its arguments are ignored); the stream against a real daemon
// is tested in tests/docker/.
#include "db/docker_events.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "run/process.h"
#include "testkit.h"

namespace locklab {
namespace {

using locklab::testkit::after;
using locklab::testkit::poll_until;
constexpr std::chrono::seconds kWait{30};

// An executable script at dir/name that runs `body`.
std::string script(const testkit::TempDir& dir, const std::string& name, const std::string& body) {
  const std::string path = dir.file(name);
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  chmod(path.c_str(), 0755);
  return path;
}

TEST(DockerEvents, AnEndedWatcherIsReportedByTheSupervisorItWasGiven) {
  testkit::TempDir dir("locklab-docker-events");
  const std::string client =
      script(dir, "docker", "printf 'll-m0 137\\nll-m1 0\\n'; echo 'a client warning'; exit 3");
  Supervisor run;
  std::vector<ContainerEnd> ends;
  std::string error;
  pid_t pid = -1;
  {
    DockerEvents events(client, "unix:///unused.sock", "r1", run);
    pid = events.pid();
    ASSERT_TRUE(poll_until(after(kWait), [&] {
      try {
        for (const ContainerEnd& end : events.poll()) ends.push_back(end);
        return false;
      } catch (const std::runtime_error& e) {
        error = e.what();
        return true;
      }
    }));
    ASSERT_EQ(ends.size(), 2u);
    EXPECT_EQ(ends[0].name, "ll-m0");
    EXPECT_EQ(ends[0].exit_code, 137);
    EXPECT_EQ(ends[1].name, "ll-m1");
    EXPECT_EQ(ends[1].exit_code, 0);
    EXPECT_NE(error.find("a client warning"), std::string::npos) << error;

    std::vector<ExitStatus> reported;
    ASSERT_TRUE(poll_until(after(kWait), [&] {
      for (const ExitStatus& e : run.poll()) reported.push_back(e);
      return !reported.empty();
    }));
    ASSERT_EQ(reported.size(), 1u);
    EXPECT_EQ(reported[0].pid, pid);
    EXPECT_EQ(reported[0].code, 3);
    EXPECT_FALSE(run.running(pid));
  }
  // Destroyed after the reap: nothing was signalled or reaped again.
  EXPECT_TRUE(run.poll().empty());
}

TEST(DockerEvents, DestroyingItKillsTheWatcherThroughItsSupervisor) {
  testkit::TempDir dir("locklab-docker-events");
  const std::string client = script(dir, "docker", "exec sleep 600");
  Supervisor run;
  pid_t pid = -1;
  {
    DockerEvents events(client, "unix:///unused.sock", "r1", run);
    pid = events.pid();
    EXPECT_TRUE(run.running(pid));
    EXPECT_TRUE(events.poll().empty());
  }
  EXPECT_FALSE(run.running(pid));
  const std::vector<ExitStatus> reported = run.poll();
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_EQ(reported[0].pid, pid);
  EXPECT_EQ(reported[0].signal, SIGKILL);
}

}  // namespace
}  // namespace locklab

// The containers of one `--cluster docker` run that ended, as the daemon reports them: a
// `docker events` process (filtered to the run's label and to "die" events) whose output the
// harness reads without blocking.
//
// Why a stream and not polling: a member container killed from outside, or whose program
// crashed, ends without the harness's knowledge (it is not the harness's child, so nothing is
// reaped); asking the daemon on every tick would cost a client round trip per member. The stream
// is started with --since a second before it is spawned, so a container that dies between the
// spawn and the stream's subscription is still reported (the run's containers are created after
// the watcher starts, so nothing older can match the run's label).
//
// The watcher is the harness's child, started by its own Supervisor (run/process.h: PDEATHSIG,
// its own process group, stdout and stderr in one pipe), killed and reaped when the DockerEvents
// is destroyed. If it ends (the daemon went away), poll() throws: past that point no end of a
// member would be noticed.
//
// Thread rules: one thread (the harness's main thread) owns a DockerEvents.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "db/docker_engine.h"
#include "run/process.h"

namespace locklab {

// One "die" event: the container's name and the exit code the daemon recorded (128 + N for a
// process killed by signal N).
struct ContainerEnd {
  std::string name;
  int exit_code = -1;
};

// "signal 9 (container exit code 137)" for 129..192, else "exit 1": the words a process's end
// is described with on the other backends, so a member's end reads the same on all of them.
std::string describe_container_exit(int exit_code);

class DockerEvents {
 public:
  static constexpr size_t kPendingMax = 64 * 1024;  // bytes of an unfinished line kept

  // Starts the watcher for the containers labelled locklab.run=<run_id>. Throws
  // std::runtime_error when it cannot be started.
  DockerEvents(const DockerEngine& engine, const std::string& run_id);
  DockerEvents(const DockerEvents&) = delete;
  DockerEvents& operator=(const DockerEvents&) = delete;

  // The containers that ended since the last call, in the order reported. Never blocks.
  // Throws std::runtime_error when the watcher has ended (its last output in the message).
  std::vector<ContainerEnd> poll();

 private:
  Supervisor supervisor_;  // its destructor kills and reaps the watcher
  StartedChild watcher_;   // from_stdout: the watcher's stdout and stderr
  std::string buffer_;     // output not yet ending in a newline
  std::string last_output_;
  bool ended_ = false;
};

}  // namespace locklab

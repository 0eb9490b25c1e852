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
// The watcher is the harness's child, started by the Supervisor it is given (run/process.h:
// PDEATHSIG, its own process group, stdout and stderr in one pipe), killed and reaped through it
// when the DockerEvents is destroyed. It must be the run's own Supervisor where the run has one:
// that Supervisor's poll() reaps every ended child of the process, and a watcher owned by a
// second Supervisor would be reaped there as an orphan, after which the second one would signal a
// pid the kernel may have given to another process. The run's poll() reaps a watcher that ended
// and passes over it (it is no worker, member or relay); the run learns of the end here: poll()
// throws once the watcher's output ends, since past that point no end of a member would be
// noticed.
//
// Thread rules: one thread (the harness's main thread) owns a DockerEvents.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

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

  // Starts `client -H host events ...` for the containers labelled locklab.run=<run_id> as a
  // child of `supervisor` (not owned; outlives this). Throws std::runtime_error when it cannot
  // be started.
  DockerEvents(const std::string& client, const std::string& host, const std::string& run_id,
               Supervisor& supervisor);
  // Kills the watcher (SIGKILL) and reaps it through the supervisor, whose next poll() reports
  // its end.
  ~DockerEvents();
  DockerEvents(const DockerEvents&) = delete;
  DockerEvents& operator=(const DockerEvents&) = delete;

  // The containers that ended since the last call, in the order reported. Never blocks.
  // Throws std::runtime_error when the watcher has ended (its last output in the message).
  std::vector<ContainerEnd> poll();

  pid_t pid() const { return watcher_.pid; }

 private:
  static constexpr int64_t kReapWaitMs = 5'000;  // after SIGKILL; a zombie is reaped at once

  Supervisor& supervisor_;
  StartedChild watcher_;  // from_stdout: the watcher's stdout and stderr
  std::string buffer_;    // output not yet ending in a newline
  std::string last_output_;
  bool ended_ = false;
};

}  // namespace locklab

// Child processes of the harness: members, workers and the short-lived tools (ip, nft) that
// build the network.
//
// Every long-lived child is started with PR_SET_PDEATHSIG(SIGKILL), in its own process group
// (so a Ctrl-C at the terminal reaches only the harness, which then tears down in order), and,
// when asked, inside a named network namespace (setns before exec). The harness is a child
// subreaper, so orphans of its children are reaped here rather than by PID 1.
//
// One Supervisor starts the children of a process that calls poll(): poll() reaps every ended
// child of the process (waitpid(-1)) and drops those it did not start, so a child of a second
// Supervisor would be lost there, and that Supervisor would later signal a pid the kernel may
// have reused. Parts that start children (backends, the docker events watcher) take the run's.
//
// PDEATHSIG fires when the *thread* that forked exits: spawn only from the thread that lives for
// the whole run (the main thread). Thread rules: a Supervisor is used from that one thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "run/unique_fd.h"

namespace locklab {

// A child inherits only its stdin, stdout and stderr: every other descriptor of the harness
// (and of whatever started it, e.g. ctest) is closed at its exec.
struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is the program's path
  std::string netns;     // network namespace to run in (netns_path); "" = the harness's own
  std::string log_path;  // stdout and stderr are appended here; "" = /dev/null
  // Supervisor::start only: the child's stdin (else /dev/null) and stdout (else log_path; its
  // stderr still goes there, or joins stdout in the pipe with merge_stderr) become pipes whose
  // other ends the caller gets.
  bool pipe_stdin = false;
  bool pipe_stdout = false;
  bool merge_stderr = false;  // only with pipe_stdout
};

// A child started by Supervisor::start, with the caller's ends of the pipes it asked for.
struct StartedChild {
  pid_t pid = -1;
  UniqueFd to_stdin;     // write end of the child's stdin pipe, or none
  UniqueFd from_stdout;  // read end of the child's stdout pipe, or none
};

// How a child ended, decoded from a waitpid status.
struct ExitStatus {
  pid_t pid = 0;
  int code = -1;   // exit code when it exited, else -1
  int signal = 0;  // the signal that killed it, else 0
  // "exit 0" / "signal 9" / (code -1, signal 0) "status unknown (reaped by another waiter)"
  std::string describe() const;
};

class Supervisor {
 public:
  Supervisor() = default;
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;
  // Kills (SIGKILL) and reaps every child still running.
  ~Supervisor();

  // Makes the calling process a child subreaper. Throws std::system_error.
  static void become_subreaper();

  // Starts a child. Throws std::runtime_error naming the program when fork, the namespace, the
  // log file or exec fails (exec failures are reported back through a close-on-exec pipe).
  pid_t spawn(const SpawnOptions& options);
  // spawn, with the pipes options.pipe_stdin / pipe_stdout ask for (spawn refuses them with
  // std::invalid_argument: their ends would be dropped; start refuses merge_stderr without
  // pipe_stdout).
  StartedChild start(const SpawnOptions& options);

  // Reaps every child that has ended (including adopted orphans, which are dropped) and returns
  // the ones this supervisor spawned, in the order reaped.
  std::vector<ExitStatus> poll();

  bool running(pid_t pid) const { return live_.count(pid) > 0; }
  std::vector<pid_t> running_pids() const;
  // Sends a signal to a running child; false when it is not running.
  bool signal(pid_t pid, int sig);
  // Waits up to timeout_ms for the child to end; returns its status, or nullopt on timeout.
  std::optional<ExitStatus> wait_exit(pid_t pid, int64_t timeout_ms);
  // SIGTERM to every running child, up to grace_ms for them to end, then SIGKILL and reap.
  void stop_all(int64_t grace_ms);

 private:
  static constexpr size_t kEndedKept = 4096;  // ends wait_exit can still answer for

  std::map<pid_t, std::string> live_;  // pid -> program, for messages
  // How reaped children ended, for wait_exit (the latest kEndedKept; a pid started again is
  // removed), and the order they were reaped in.
  std::map<pid_t, ExitStatus> ended_;
  std::deque<pid_t> ended_order_;
  std::vector<ExitStatus> unreported_;  // reaped, not yet returned by poll
  void record(pid_t pid, int status);
  // A child that waitpid says is not ours any more (ECHILD: reaped elsewhere): ended, status
  // unknown (code -1, signal 0).
  void record_lost(pid_t pid);
  // Reaps pid if it has ended (record) or was reaped elsewhere (record_lost); true when it is no
  // longer running.
  bool reap_if_ended(pid_t pid);
  void remember(const ExitStatus& e);
};

// Starts a program that outlives the harness: no PDEATHSIG, its own session (a Ctrl-C at the
// terminal does not reach it), descriptors as for a Supervisor's child (0-2 only). No Supervisor
// tracks it: the caller waits for it with waitpid (in a process whose Supervisor polls, that
// poll may reap it first: ask process_state too), or init reaps it once the harness is gone.
// For a daemon a SIGKILLed harness must leave running (a started dockerd, which the next run's
// sweep empties). Throws like Supervisor::start; std::invalid_argument for pipe options.
pid_t spawn_detached(const SpawnOptions& options);

// Output of a short-lived tool run to completion.
struct ToolResult {
  int code = -1;
  std::string output;  // stdout and stderr together, at most kToolOutputMax bytes
};
constexpr size_t kToolOutputMax = 64 * 1024;

// Thrown by run_tool when `interrupted` said so: the tool was killed (SIGKILL) and reaped.
class ToolInterrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs argv to completion (optionally inside `netns`, feeding `input` on stdin), waiting at most
// timeout_ms before killing it. Never throws for a non-zero exit; throws std::runtime_error
// when the tool cannot be started or times out, and ToolInterrupted when `interrupted` (asked
// every kToolInterruptPollMs while the tool runs) returns true. `input` is written whole before
// the wait starts, so it must fit in a pipe's buffer (the nft scripts it carries are a few KiB):
// a larger one, to a tool that does not read it, holds the call until the tool ends.
inline constexpr int64_t kToolInterruptPollMs = 100;
ToolResult run_tool(const std::vector<std::string>& argv, const std::string& netns = "",
                    const std::string& input = "", int64_t timeout_ms = 10'000,
                    const std::function<bool()>& interrupted = nullptr);
// run_tool, throwing std::runtime_error with the command line and its output on non-zero exit.
std::string run_tool_checked(const std::vector<std::string>& argv, const std::string& netns = "",
                             const std::string& input = "");

// Reads one '\n'-ended line (without the '\n') from fd, waiting at most timeout_ms in all;
// nullopt on end of file, an error, the timeout, or max_bytes read without a newline (the
// bytes read by then are consumed).
std::optional<std::string> read_line(int fd, int64_t timeout_ms, size_t max_bytes);

// /proc/<pid>/stat's state letter ('R', 'S', 'T' stopped, 'Z' zombie...), or 0 when gone.
char process_state(pid_t pid);
// What /proc/<pid>/stat says of a process (as this process's /proc sees it), or nothing when
// there is no such process. The start time (clock ticks since boot) with the pid names one
// process across pid reuse.
struct ProcessStat {
  char state = 0;
  pid_t parent = 0;
  uint64_t start_ticks = 0;
};
std::optional<ProcessStat> process_stat(pid_t pid);

// A network namespace reference as the harness passes them around: a name under
// /var/run/netns ("ll-123-m0"), or an absolute path to a namespace file (a container's
// /proc/<pid>/ns/net). Returns the file to open.
std::string netns_path(const std::string& netns);

}  // namespace locklab

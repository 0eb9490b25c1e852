#include "db/docker_events.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace locklab {
namespace {

constexpr size_t kLastOutputMax = 2000;
constexpr int kSignalMax = 64;

}  // namespace

std::string describe_container_exit(int exit_code) {
  if (exit_code > 128 && exit_code <= 128 + kSignalMax) {
    return "signal " + std::to_string(exit_code - 128) + " (container exit code " +
           std::to_string(exit_code) + ")";
  }
  return "exit " + std::to_string(exit_code);
}

DockerEvents::DockerEvents(const std::string& client, const std::string& host,
                           const std::string& run_id, Supervisor& supervisor)
    : supervisor_(supervisor) {
  // One second back: --since has a resolution of seconds and the subscription starts a moment
  // after the spawn; only this run's containers carry its label.
  const std::string since = std::to_string(static_cast<long long>(time(nullptr)) - 1);
  const std::vector<std::string> args = {
      client,     "-H",
      host,       "events",
      "--since",  since,
      "--filter", "type=container",
      "--filter", "event=die",
      "--filter", "label=locklab.run=" + run_id,
      "--format", "{{.Actor.Attributes.name}} {{.Actor.Attributes.exitCode}}"};
  watcher_ = supervisor_.start({.argv = args,
                                .netns = "",
                                .log_path = "",
                                .pipe_stdin = false,
                                .pipe_stdout = true,
                                .merge_stderr = true});
  const int fd = watcher_.from_stdout.get();
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

DockerEvents::~DockerEvents() {
  // Only while the supervisor still counts it running: once reaped, the pid is not ours.
  if (supervisor_.signal(watcher_.pid, SIGKILL)) supervisor_.wait_exit(watcher_.pid, kReapWaitMs);
}

std::vector<ContainerEnd> DockerEvents::poll() {
  std::vector<ContainerEnd> ends;
  bool ended = false;
  char chunk[4096];
  for (;;) {
    const ssize_t n = read(watcher_.from_stdout.get(), chunk, sizeof chunk);
    if (n > 0) {
      buffer_.append(chunk, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) ended = true;  // end of file: the watcher is gone
    if (n < 0 && errno == EINTR) continue;
    break;  // EAGAIN: nothing more for now
  }
  size_t newline;
  while ((newline = buffer_.find('\n')) != std::string::npos) {
    const std::string line = buffer_.substr(0, newline);
    buffer_.erase(0, newline + 1);
    last_output_ = line.substr(0, kLastOutputMax);
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    try {
      ends.push_back({line.substr(0, space), std::stoi(line.substr(space + 1))});
    } catch (const std::exception&) {
      // Not an event line (a client warning): kept in last_output_ only.
    }
  }
  if (buffer_.size() > kPendingMax) buffer_.clear();
  if (ended) ended_ = true;
  // What was read before the end is returned first; the end is reported by the next call.
  if (ended_ && ends.empty()) {
    throw std::runtime_error(
        "docker events (which notices members ending on their own) stopped; its last "
        "output: " +
        (buffer_.empty() ? last_output_ : buffer_.substr(0, kLastOutputMax)));
  }
  return ends;
}

}  // namespace locklab

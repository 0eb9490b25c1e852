#include "db/docker_events.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
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

DockerEvents::DockerEvents(const DockerEngine& engine, const std::string& run_id) {
  // One second back: --since has a resolution of seconds and the subscription starts a moment
  // after the spawn; only this run's containers carry its label.
  const std::string since = std::to_string(static_cast<long long>(time(nullptr)) - 1);
  const std::vector<std::string> args = {
      engine.client(), "-H",
      engine.host(),   "events",
      "--since",       since,
      "--filter",      "type=container",
      "--filter",      "event=die",
      "--filter",      "label=locklab.run=" + run_id,
      "--format",      "{{.Actor.Attributes.name}} {{.Actor.Attributes.exitCode}}"};
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe for docker events: ") + std::strerror(errno));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(out[0]);
    close(out[1]);
    throw std::runtime_error(std::string("fork for docker events: ") + std::strerror(errno));
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);
    setpgid(0, 0);  // a Ctrl-C at the terminal reaches the harness only
    dup2(out[1], 1);
    dup2(out[1], 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
  pid_ = pid;
  fd_ = out[0];
}

DockerEvents::~DockerEvents() {
  if (fd_ >= 0) close(fd_);
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    // The run's supervisor may have reaped it already (it reaps every child): ECHILD is fine.
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

std::vector<ContainerEnd> DockerEvents::poll() {
  std::vector<ContainerEnd> ends;
  bool ended = false;
  char chunk[4096];
  for (;;) {
    const ssize_t n = read(fd_, chunk, sizeof chunk);
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

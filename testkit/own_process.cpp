#include "own_process.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <thread>

namespace locklab::testkit {

int wait_child_exit(pid_t child, Deadline deadline) {
  int status = 0;
  bool reaped = false;
  poll_until(deadline, [&] {
    reaped = ::waitpid(child, &status, WNOHANG) == child;
    return reaped;
  });
  if (!reaped) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int own_thread_count() {
  // ThreadSanitizer starts a background thread of its own at the process's first
  // pthread_create: one started (and joined) here first puts it in every count, so a "before"
  // taken before the library's first thread is not one short.
  static const bool sanitizer_settled = [] {
    std::thread([] {}).join();
    return true;
  }();
  (void)sanitizer_settled;
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)entry;
    ++count;
  }
  return count;
}

std::string read_proc_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = ::read(fd, buffer, sizeof buffer)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return n < 0 ? "" : text;
}

}  // namespace locklab::testkit

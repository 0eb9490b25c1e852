#include "own_process.h"

#include <sys/wait.h>

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

}  // namespace locklab::testkit

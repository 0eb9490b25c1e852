#include "test_server.h"

#include <unistd.h>

#include <memory>
#include <mutex>
#include <stdexcept>

namespace mongolock::test {

MongosimProcess* shared_server() {
  static std::once_flag once;
  static std::unique_ptr<MongosimProcess> server;
  std::call_once(once, [] { server = MongosimProcess::start(); });
  return server.get();
}

std::string fresh_database() {
  static std::atomic<int> next{0};
  return "mongolock_t" + std::to_string(getpid()) + "_" + std::to_string(next++);
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds deadline_after) {
  const auto deadline = std::chrono::steady_clock::now() + deadline_after;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace mongolock::test

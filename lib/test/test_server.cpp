#include "test_server.h"

#include <unistd.h>

#include <mutex>

namespace mongolock::test {

std::unique_ptr<ReplicaSet> start_server() {
  if (std::string(MONGOSIM_PATH).empty()) return nullptr;
  return std::make_unique<ReplicaSet>(locklab::testkit::SetOptions{
      .members = 1,
      .program = MONGOSIM_PATH,
      .args = {"--bind_ip", "127.0.0.1", "--setParameter", "ttlMonitorSleepSecs=1"},
      .election_timeout_ms = 0,  // the server's own timers, as a one-member set needs no others
      .heartbeat_interval_ms = 0,
      .ready_timeout = std::chrono::seconds(20),
      .start_timeout = std::chrono::seconds(20)});
}

ReplicaSet* shared_server() {
  static std::once_flag once;
  static std::unique_ptr<ReplicaSet> server;
  std::call_once(once, [] { server = start_server(); });
  return server.get();
}

std::string fresh_database() {
  static std::atomic<int> next{0};
  return "mongolock_t" + std::to_string(getpid()) + "_" + std::to_string(next++);
}

}  // namespace mongolock::test
